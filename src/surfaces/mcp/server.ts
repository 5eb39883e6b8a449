/**
 * The MCP server, once for the whole daemon: McpHub holds what outlives one MCP client (each
 * device's refs, the encoded screenshots) and makes an SDK Server per client, whose tools run as
 * that client's DeviceRail Sessions (lanes.ts). Served over Streamable HTTP at /mcp (http.ts);
 * `devicerail mcp` bridges a host's stdio to it (stdio-bridge.ts).
 * Over 300 lines because the hub, its per-client SDK server and the resource handlers share the hub's state.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { EvidenceSource } from "../../client/in-process.ts";
import { listPage } from "../../client/event-pages.ts";
import type { Client } from "../../client/client.ts";
import { RemoteError } from "../../client/remote-error.ts";
import { DEFAULT_IMAGE_SETTINGS, type ImageSettings, ModelImages } from "./image.ts";
import type { Logger } from "../../protocol/rpc-error.ts";
import { type LaneDeps, McpClient } from "./lanes.ts";
import { ToolError, type ToolResult, failure } from "./results.ts";
import { listEntry, parseArgs } from "./tool.ts";
import type { CallDeps } from "./tool-kit.ts";
import type { SelectorMatcher } from "../interaction/index.ts";
import { TOOLS, toolNamed } from "./tools/index.ts";
import { RefBook } from "./tree-text.ts";

export interface McpHubOptions extends LaneDeps {
  log: Logger;
  evidence: EvidenceSource;
  /** Whether the Session references the evidence: a client reads only evidence its own Sessions hold. */
  references(sessionId: string, sha256: string): boolean;
  actionTimeoutMs: number;
  images?: Partial<ImageSettings>;
  /** The daemon's selector predicate (core's semantic layer, wired by the server). */
  matchSelector: SelectorMatcher;
}

const INSTRUCTIONS = [
  "devicerail drives real phones, emulators and simulators. Start with devices_list, then device_observe (or ui_tree) on a deviceId.",
  "Every device tool needs deviceId. Tap elements by ref (@e12 from the latest listing) or selector rather than coordinates when you can.",
  "Everything you do is recorded in a DeviceRail Session per device; finish with session_verdict (pass/fail/unknown and a summary).",
].join(" ");

/** Errors saying the client's Session on the device is gone. */
const LANE_GONE = new Set(["session_required", "session_ended", "session_not_found"]);

const SESSION_URI = /^devicerail:\/\/sessions\/([0-9a-fA-F-]{36})(?:\?([^#]*))?$/;
const EVIDENCE_URI = /^devicerail:\/\/evidence\/(?:sha256:)?([0-9a-f]{64})$/;
/** A resource larger than this is sent as the model-sized image, or refused (the 1 MB result limit). */
const RESOURCE_BYTES = 700_000;
/** Events in a Session resource's page unless the URI asks for another `limit` (1 … 1000). */
const SESSION_PAGE_EVENTS = 200;
/** In an event too large for a page on its own, strings longer than this are cut. */
const CLIPPED_STRING_CHARS = 2_000;
/** MCP's code for a resource that does not exist (or, here, is not the client's). */
const RESOURCE_NOT_FOUND = -32002;

const SESSION_TEMPLATE = {
  uriTemplate: "devicerail://sessions/{id}{?afterSequence,limit}",
  name: "session",
  title: "A DeviceRail Session's events",
  description:
    "One of your Sessions' events, a page at a time: {sessionId, events, next}. Read `next` (the same URI with afterSequence and limit) for the following page; it is absent on the last one. limit is 1 to 1000 events (200 by default) and a page is cut to fit one resource.",
  mimeType: "application/json",
};

const notFound = (uri: string, code: string, what: string) =>
  new McpError(RESOURCE_NOT_FOUND, `${code}: ${what}`, { code, uri });

/** `afterSequence` and `limit` of a Session resource's URI; anything else there is invalid_params. */
function pageQuery(uri: string, query: string | undefined): { afterSequence: number; limit: number } {
  const params = new URLSearchParams(query ?? "");
  const number = (name: string, min: number, max: number, fallback: number) => {
    const text = params.get(name);
    if (text === null) return fallback;
    const n = /^(0|[1-9]\d{0,15})$/.test(text) ? Number(text) : Number.NaN;
    if (!(n >= min && n <= max))
      throw new McpError(
        ErrorCode.InvalidParams,
        `invalid_params: ${name} in ${uri} must be an integer from ${min} to ${max}`,
        { code: "invalid_params", uri, parameter: name },
      );
    return n;
  };
  for (const key of params.keys())
    if (key !== "afterSequence" && key !== "limit")
      throw new McpError(ErrorCode.InvalidParams, `invalid_params: ${uri} may give only afterSequence and limit`, {
        code: "invalid_params",
        uri,
        parameter: key,
      });
  return {
    afterSequence: number("afterSequence", 0, Number.MAX_SAFE_INTEGER, 0),
    limit: number("limit", 1, 1000, SESSION_PAGE_EVENTS),
  };
}

/**
 * A copy of `value` with each string longer than `max` characters cut, saying how much was left
 * out and where it is.
 */
function clipStrings(value: unknown, max: number, whole: string): unknown {
  if (typeof value === "string")
    return value.length > max ? `${value.slice(0, max)}… [${value.length - max} more characters: ${whole}]` : value;
  if (Array.isArray(value)) return value.map((v) => clipStrings(v, max, whole));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v, max, whole)]));
  return value;
}

export class McpHub {
  readonly refs = new RefBook();
  readonly images: ModelImages;
  private readonly tools = TOOLS.map(listEntry);
  private readonly clients = new Set<McpClient>();

  constructor(private readonly opts: McpHubOptions) {
    this.images = new ModelImages({ ...DEFAULT_IMAGE_SETTINGS, ...opts.images });
  }

  /** A new client's server and its state; `client.end()` when the client goes. */
  connect(): { server: Server; client: McpClient } {
    const server = new Server(
      { name: "devicerail", version: this.opts.serverVersion },
      { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
    );
    const client = new McpClient(this.opts, () => `mcp:${server.getClientVersion()?.name ?? "client"}`);
    this.clients.add(client);
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
      this.call(client, req.params.name, req.params.arguments, extra.signal),
    );
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: client.sessions.map((s) => ({
        uri: `devicerail://sessions/${s.id}`,
        name: `session ${s.id}`,
        title: `DeviceRail Session on ${s.deviceId}`,
        mimeType: "application/json",
      })),
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [
        SESSION_TEMPLATE,
        {
          uriTemplate: "devicerail://evidence/{sha256}",
          name: "evidence",
          title: "Stored evidence (screenshots, UI trees) by SHA-256",
          description: "A screenshot or UI tree one of your Sessions recorded.",
        },
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
      const tool = toolNamed(name);
      if (!tool)
        throw new ToolError(
          "unknown_tool",
          `there is no tool ${name}; the tools are: ${TOOLS.map((t) => t.name).join(", ")}`,
          false,
        );
      const deps: CallDeps = {
        client,
        refs: this.refs,
        images: this.images,
        evidence: this.opts.evidence,
        actionTimeoutMs: this.opts.actionTimeoutMs,
        matchSelector: this.opts.matchSelector,
        signal,
      };
      if (!tool.device) return await tool.run(deps);
      const a = parseArgs(tool, args) as { deviceId: string };
      return await tool.run(deps, await client.lane(a.deviceId), a);
    } catch (err) {
      const e = err instanceof RemoteError ? ToolError.fromRpc(err.error) : err;
      if (e instanceof ToolError) {
        const deviceId = (args as { deviceId?: unknown } | undefined)?.deviceId;
        if (LANE_GONE.has(e.code) && typeof deviceId === "string") {
          await client.drop(deviceId);
          return failure(
            new ToolError(e.code, e.message, true, e.details, [
              ...e.lines,
              "the Session on this device has ended; the next call starts a new one",
            ]),
          );
        }
        return failure(e);
      }
      this.opts.log.error({ err, tool: name }, "MCP tool failed unexpectedly");
      return failure(
        new ToolError("internal_error", "the tool failed unexpectedly; the daemon's log has the details", false),
      );
    }
  }

  /**
   * A resource of this client's: its Sessions, and evidence one of them references. Another
   * client's Session or evidence reads as not found, as its listing does not show them.
   */
  private async read(client: McpClient, uri: string) {
    const session = SESSION_URI.exec(uri);
    if (session) {
      const sessionId = (session[1] as string).toLowerCase();
      const page = pageQuery(uri, session[2]);
      if (!client.sessions.some((s) => s.id === sessionId))
        throw notFound(uri, "session_not_found", `none of this client's Sessions is ${sessionId}`);
      const text = await client.plain((rpc) => this.sessionPage(rpc, sessionId, page));
      return { contents: [{ uri, mimeType: "application/json", text }] };
    }
    const evidence = EVIDENCE_URI.exec(uri);
    if (evidence) {
      const sha = evidence[1] as string;
      const mine = client.sessions.some((s) => this.opts.references(s.id, sha));
      const stored = mine ? await this.opts.evidence.read(sha) : null;
      if (!stored) throw notFound(uri, "evidence_not_found", `none of this client's Sessions holds evidence ${sha}`);
      if (stored.bytes.length <= RESOURCE_BYTES)
        return { contents: [{ uri, mimeType: stored.mediaType, blob: Buffer.from(stored.bytes).toString("base64") }] };
      if (!stored.mediaType.startsWith("image/"))
        throw new McpError(
          ErrorCode.InvalidRequest,
          `evidence ${sha} is ${stored.bytes.length} bytes, more than an MCP result may carry; read it over HTTP at /evidence/${sha}`,
          { code: "response_too_large", uri },
        );
      const image = await this.images.encode(sha, async () => stored.bytes);
      return {
        contents: [
          {
            uri,
            mimeType: image.mimeType,
            blob: Buffer.from(image.data).toString("base64"),
            _meta: { devicerail: { scaledFrom: `${image.sourceWidth}x${image.sourceHeight}`, scale: image.scale } },
          },
        ],
      };
    }
    throw new McpError(
      RESOURCE_NOT_FOUND,
      `unknown resource ${uri}: expected devicerail://sessions/{id} (with ?afterSequence=N&limit=M to page) or devicerail://evidence/{sha256}`,
      { code: "resource_not_found", uri },
    );
  }

  /**
   * One page of a Session as a resource's text: as many of `limit` events as fit one resource
   * (asked again with fewer while they do not), and `next` when more may follow.
   * An event too large for a resource on its own comes with its long strings cut.
   */
  private async sessionPage(
    rpc: Client,
    sessionId: string,
    page: { afterSequence: number; limit: number },
  ): Promise<string> {
    const list = listPage(rpc, sessionId);
    let limit = page.limit;
    for (;;) {
      let events: Awaited<ReturnType<typeof list>>;
      try {
        events = await list(page.afterSequence, limit);
      } catch (err) {
        if (err instanceof RemoteError)
          throw new McpError(RESOURCE_NOT_FOUND, `${err.error.data.code}: ${err.error.message}`, {
            code: err.error.data.code,
            sessionId,
          });
        throw err;
      }
      if (!Array.isArray(events)) {
        // The page does not fit one line: at most the limit the daemon names that does.
        if (events.fittingLimit >= 1) {
          limit = Math.min(limit, events.fittingLimit);
          continue;
        }
        return this.oversized(sessionId, page, null);
      }
      const last = events.at(-1);
      const next =
        last && events.length === limit
          ? `devicerail://sessions/${sessionId}?afterSequence=${last.sequence}&limit=${page.limit}`
          : undefined;
      const text = JSON.stringify({ sessionId, events, ...(next ? { next } : {}) });
      if (text.length <= RESOURCE_BYTES) return text;
      if (limit === 1) return this.oversized(sessionId, page, events[0] ?? null);
      // Fewer events, in proportion to how far the page is over.
      limit = Math.max(1, Math.min(limit - 1, Math.floor((limit * RESOURCE_BYTES * 0.9) / text.length)));
    }
  }

  /** An event too large for a resource on its own: its long strings cut (null: too large to read at all), and where the whole is. */
  private oversized(
    sessionId: string,
    page: { afterSequence: number; limit: number },
    event: TestEvent | null,
  ): string {
    const sequence = event?.sequence ?? page.afterSequence + 1;
    const whole = `GET /sessions/${sessionId}/events?${page.afterSequence ? `afterSequence=${page.afterSequence}&` : ""}limit=1 has the whole event ${sequence}`;
    const shown = event
      ? clipStrings(event, CLIPPED_STRING_CHARS, whole)
      : { sequence, omitted: `event ${sequence} is larger than one response line (1 MiB)` };
    return JSON.stringify({
      sessionId,
      events: [shown],
      next: `devicerail://sessions/${sessionId}?afterSequence=${sequence}&limit=${page.limit}`,
    });
  }
}
