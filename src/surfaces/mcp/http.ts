/**
 * MCP over Streamable HTTP at /mcp, one SDK transport per MCP session (Mcp-Session-Id). The HTTP
 * frontend has already applied browser protection and the token, and read the body.
 *
 * When a client goes, its Sessions end and its devices are freed:
 * - DELETE /mcp (the client said goodbye): Sessions end as completed;
 * - its GET event stream closes and no new one arrives within the grace period (the SDK's client
 *   reconnects within about a second); a client that declared `DeviceRail-MCP-Lifetime: stream`
 *   (the stdio bridge) gets no grace: its stream closing means its process is gone;
 * - it never opened an event stream and sent nothing for the idle period.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Logger } from "../../protocol/rpc-error.ts";
import type { McpClient } from "./lanes.ts";
import type { McpHub } from "./server.ts";

export const LIFETIME_HEADER = "DeviceRail-MCP-Lifetime";

export interface McpHttpOptions {
  log: Logger;
  /** How long a client without an open event stream may stay silent (DEVICERAIL_MCP_IDLE_MS). */
  idleMs: number;
  /** How long a closed event stream may take to come back. */
  graceMs: number;
  /** At most this many MCP sessions at once; a new one beyond is refused. */
  maxSessions: number;
}

interface Entry {
  id: string | null;
  transport: WebStandardStreamableHTTPServerTransport;
  client: McpClient;
  boundToStream: boolean;
  streams: number;
  inFlight: number;
  /** The event stream closed and has not come back: the grace period, not the idle one, applies. */
  graceDue: boolean;
  timer: ReturnType<typeof setTimeout> | null;
}

/**
 * The SDK's transport (1.x) in JSON-response mode keeps each answered POST's stream entry, and
 * through its closures the Request, its body and the parsed tool arguments, until the MCP session
 * ends (modelcontextprotocol/typescript-sdk#2559): a long session would grow by every call it made.
 * Here an entry goes as soon as its response is handed out. A transport without that map (a later
 * SDK) is left as it is; test/surfaces/mcp/http.test.ts tells whether it still keeps the calls.
 */
function releaseAnswered(transport: WebStandardStreamableHTTPServerTransport): void {
  type Stream = { resolveJson?: (res: Response) => void };
  const streams = (transport as unknown as { _streamMapping?: unknown })._streamMapping;
  if (!(streams instanceof Map)) return;
  const map = streams as Map<string, Stream>;
  const set = map.set.bind(map);
  map.set = (id: string, stream: Stream) => {
    const resolve = stream.resolveJson;
    if (resolve)
      stream.resolveJson = (res) => {
        if (map.get(id) === stream) map.delete(id);
        resolve(res);
      };
    return set(id, stream);
  };
}

const jsonRpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });

export class McpHttp {
  private readonly sessions = new Map<string, Entry>();
  private stopping = false;

  constructor(
    private readonly hub: McpHub,
    private readonly opts: McpHttpOptions,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  async handle(req: Request, body: string): Promise<Response> {
    const res = await this.route(req, body);
    // As on every other route: nothing here may be cached or sniffed as another type.
    res.headers.set("Cache-Control", "no-store");
    res.headers.set("X-Content-Type-Options", "nosniff");
    return res;
  }

  private async route(req: Request, body: string): Promise<Response> {
    if (this.stopping) return jsonRpcError(503, -32000, "the daemon is shutting down");
    let parsed: unknown;
    if (req.method === "POST") {
      try {
        parsed = JSON.parse(body);
      } catch {
        return jsonRpcError(400, -32700, "Parse error: the body is not JSON");
      }
    }
    const id = req.headers.get("mcp-session-id");
    if (id === null) {
      if (req.method !== "POST")
        return jsonRpcError(400, -32000, "Bad Request: no Mcp-Session-Id; initialize first with a POST");
      return this.open(req, parsed);
    }
    const entry = this.sessions.get(id);
    if (!entry)
      return jsonRpcError(404, -32001, "Session not found: it ended or the daemon restarted; initialize a new one");
    return this.serve(entry, req, parsed);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.sessions.values()].map((e) => this.end(e, false)));
  }

  private async open(req: Request, parsed: unknown): Promise<Response> {
    if (this.sessions.size >= this.opts.maxSessions)
      return jsonRpcError(503, -32000, `too many MCP sessions (${this.opts.maxSessions}); end one with DELETE /mcp`);
    const { server, client } = this.hub.connect();
    const entry: Entry = {
      id: null,
      transport: null as unknown as WebStandardStreamableHTTPServerTransport,
      client,
      boundToStream: req.headers.get(LIFETIME_HEADER)?.toLowerCase() === "stream",
      streams: 0,
      inFlight: 0,
      graceDue: false,
      timer: null,
    };
    entry.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => {
        entry.id = sid;
        this.sessions.set(sid, entry);
      },
      onsessionclosed: () => void this.end(entry, true),
    });
    releaseAnswered(entry.transport);
    await server.connect(entry.transport);
    const res = await this.serve(entry, req, parsed);
    // A POST that was not a valid initialize leaves nothing behind.
    if (entry.id === null) await this.end(entry, false);
    return res;
  }

  private async serve(entry: Entry, req: Request, parsed: unknown): Promise<Response> {
    const isStream = req.method === "GET";
    this.clearTimer(entry);
    if (isStream) {
      entry.streams++;
      entry.graceDue = false;
      req.signal.addEventListener("abort", () => this.streamClosed(entry), { once: true });
    } else entry.inFlight++;
    try {
      return await entry.transport.handleRequest(req, req.method === "POST" ? { parsedBody: parsed } : undefined);
    } finally {
      if (!isStream) {
        entry.inFlight--;
        if (entry.streams === 0 && entry.inFlight === 0)
          this.arm(entry, entry.graceDue ? this.opts.graceMs : this.opts.idleMs);
      }
    }
  }

  private streamClosed(entry: Entry): void {
    entry.streams--;
    if (entry.streams > 0) return;
    // The stdio bridge's process is gone: what it was doing is cancelled now.
    if (entry.boundToStream) return void this.end(entry, false);
    entry.graceDue = true;
    if (entry.inFlight === 0) this.arm(entry, this.opts.graceMs);
  }

  private arm(entry: Entry, ms: number): void {
    if (entry.id === null || !this.sessions.has(entry.id)) return;
    this.clearTimer(entry);
    entry.timer = setTimeout(() => void this.end(entry, false), ms);
  }

  private clearTimer(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
  }

  private async end(entry: Entry, clean: boolean): Promise<void> {
    this.clearTimer(entry);
    if (entry.id !== null) {
      if (!this.sessions.has(entry.id)) return;
      this.sessions.delete(entry.id);
      this.opts.log.info({ mcpSession: entry.id, clean }, "MCP session ended");
    }
    await entry.client.end(clean);
    this.hub.forget(entry.client);
    await entry.transport.close().catch(() => {});
  }
}
