/**
 * The MCP server, once for the whole daemon: McpHub holds what outlives one MCP client (each
 * device's refs, the encoded screenshots) and makes an SDK Server per client, whose tools run as
 * that client's DeviceRail Sessions (lanes.ts). Served over Streamable HTTP at /mcp (http.ts);
 * `devicerail mcp` bridges a host's stdio to it (stdio-bridge.ts).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { EvidenceSource } from "../../transports/http-api.ts";
import { RpcFailure } from "../../transports/local-rpc.ts";
import { type CallDeps, appTool, devicesTool, keyTool, observeTool, parseArgs, pointTool, secretTool, swipeTool, typeTool, urlTool, verdictTool, waitTool } from "./calls.ts";
import { DEFAULT_IMAGE_SETTINGS, type ImageSettings, ModelImages } from "./image.ts";
import { type LaneDeps, McpClient } from "./lanes.ts";
import { ToolError, type ToolResult, failure } from "./results.ts";
import { META, type ToolName, toolList } from "./tools.ts";
import { RefBook } from "./tree-text.ts";

export interface McpHubOptions extends LaneDeps {
  evidence: EvidenceSource;
  actionTimeoutMs: number;
  images?: Partial<ImageSettings>;
}

const INSTRUCTIONS = [
  "devicerail drives real phones, emulators and simulators. Start with devices_list, then device_observe (or ui_tree) on a deviceId.",
  "Every device tool needs deviceId. Tap elements by ref (@e12 from the latest listing) or selector rather than coordinates when you can.",
  "Everything you do is recorded in a DeviceRail Session per device; finish with session_verdict (pass/fail/unknown and a summary).",
].join(" ");

/** Errors saying the client's Session on the device is gone. */
const LANE_GONE = new Set(["session_required", "session_ended", "session_not_found"]);

const SESSION_URI = /^devicerail:\/\/sessions\/([0-9a-fA-F-]{36})$/;
const EVIDENCE_URI = /^devicerail:\/\/evidence\/(?:sha256:)?([0-9a-f]{64})$/;
/** A resource larger than this is sent as the model-sized image, or refused (the 1 MB result limit). */
const RESOURCE_BYTES = 700_000;

export class McpHub {
  readonly refs = new RefBook();
  readonly images: ModelImages;
  private readonly tools = toolList();
  private readonly clients = new Set<McpClient>();

  constructor(private readonly opts: McpHubOptions) {
    this.images = new ModelImages({ ...DEFAULT_IMAGE_SETTINGS, ...opts.images });
  }

  /** A new client's server and its state; `client.end()` when the client goes. */
  connect(): { server: Server; client: McpClient } {
    const server = new Server({ name: "devicerail", version: this.opts.serverVersion }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });
    const client = new McpClient(this.opts, () => `mcp:${server.getClientVersion()?.name ?? "client"}`);
    this.clients.add(client);
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) => this.call(client, req.params.name, req.params.arguments, extra.signal));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: client.sessions.map((s) => ({ uri: `devicerail://sessions/${s.id}`, name: `session ${s.id}`, title: `DeviceRail Session on ${s.deviceId}`, mimeType: "application/json" })),
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [
        { uriTemplate: "devicerail://sessions/{id}", name: "session", title: "A DeviceRail Session's events", mimeType: "application/json" },
        { uriTemplate: "devicerail://evidence/{sha256}", name: "evidence", title: "Stored evidence (screenshots, UI trees) by SHA-256" },
      ],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (req) => this.read(client, req.params.uri));
    return { server, client };
  }

  async endAll(): Promise<void> {
    await Promise.all([...this.clients].map((c) => c.end(false)));
  }

  forget(client: McpClient): void {
    this.clients.delete(client);
  }

  private async call(client: McpClient, name: string, args: unknown, signal: AbortSignal): Promise<ToolResult> {
    try {
      if (!Object.hasOwn(META, name)) throw new ToolError("unknown_tool", `there is no tool ${name}; the tools are: ${Object.keys(META).join(", ")}`, false);
      const tool = name as ToolName;
      const deps: CallDeps = { client, refs: this.refs, images: this.images, evidence: this.opts.evidence, actionTimeoutMs: this.opts.actionTimeoutMs, signal };
      if (tool === "devices_list") return await devicesTool(deps);
      const a = parseArgs(tool, args) as { deviceId: string };
      const lane = await client.lane(a.deviceId);
      switch (tool) {
        case "device_observe": {
          const o = parseArgs("device_observe", args);
          return await observeTool(deps, lane, { image: o.screenshot ?? true, tree: o.tree ?? true, diff: o.diff ?? false });
        }
        case "screenshot":
          return await observeTool(deps, lane, { image: true, tree: false, diff: false });
        case "ui_tree":
          return await observeTool(deps, lane, { image: false, tree: true, diff: parseArgs("ui_tree", args).diff ?? false });
        case "tap":
        case "double_tap":
        case "long_press":
          return await pointTool(deps, lane, tool, parseArgs(tool, args));
        case "swipe":
          return await swipeTool(deps, lane, parseArgs("swipe", args));
        case "type_text":
          return await typeTool(deps, lane, parseArgs("type_text", args));
        case "press_key":
          return await keyTool(deps, lane, parseArgs("press_key", args));
        case "launch_app":
        case "terminate_app":
          return await appTool(deps, lane, tool, parseArgs(tool, args));
        case "open_url":
          return await urlTool(deps, lane, parseArgs("open_url", args));
        case "wait_for":
          return await waitTool(deps, lane, parseArgs("wait_for", args));
        case "set_secret":
          return await secretTool(deps, lane, parseArgs("set_secret", args));
        case "session_verdict":
          return await verdictTool(deps, lane, parseArgs("session_verdict", args));
      }
    } catch (err) {
      const e = err instanceof RpcFailure ? ToolError.fromRpc(err.error) : err;
      if (e instanceof ToolError) {
        const deviceId = (args as { deviceId?: unknown } | undefined)?.deviceId;
        if (LANE_GONE.has(e.code) && typeof deviceId === "string") {
          await client.drop(deviceId);
          return failure(new ToolError(e.code, e.message, true, e.details, [...e.lines, "the Session on this device has ended; the next call starts a new one"]));
        }
        return failure(e);
      }
      this.opts.log.error({ err, tool: name }, "MCP tool failed unexpectedly");
      return failure(new ToolError("internal_error", "the tool failed unexpectedly; the daemon's log has the details", false));
    }
  }

  private async read(client: McpClient, uri: string) {
    const session = SESSION_URI.exec(uri);
    if (session) {
      // The first page that fits one result; the rest is one events.list (or GET /sessions/{id}/events) away.
      const text = await client.plain(async (rpc) => {
        try {
          let page = "";
          for (const limit of [1000, 250, 50, 10]) {
            page = (await rpc.must("events.list", { sessionId: session[1], limit })).json;
            if (page.length <= RESOURCE_BYTES) break;
          }
          return page;
        } catch (err) {
          if (err instanceof RpcFailure) throw new Error(`${err.error.data.code}: ${err.error.message}`);
          throw err;
        }
      });
      return { contents: [{ uri, mimeType: "application/json", text }] };
    }
    const evidence = EVIDENCE_URI.exec(uri);
    if (evidence) {
      const sha = evidence[1] as string;
      const stored = await this.opts.evidence.read(sha);
      if (!stored) throw new Error(`evidence_not_found: no evidence ${sha}`);
      if (stored.bytes.length <= RESOURCE_BYTES) return { contents: [{ uri, mimeType: stored.mediaType, blob: Buffer.from(stored.bytes).toString("base64") }] };
      if (!stored.mediaType.startsWith("image/")) throw new Error(`evidence ${sha} is ${stored.bytes.length} bytes, more than an MCP result may carry; read it over HTTP at /evidence/${sha}`);
      const image = await this.images.encode(sha, async () => stored.bytes);
      return { contents: [{ uri, mimeType: image.mimeType, blob: Buffer.from(image.data).toString("base64"), _meta: { devicerail: { scaledFrom: `${image.sourceWidth}x${image.sourceHeight}`, scale: image.scale } } }] };
    }
    throw new Error(`unknown resource ${uri}: expected devicerail://sessions/{id} or devicerail://evidence/{sha256}`);
  }
}
