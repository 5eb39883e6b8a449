/**
 * The CLI's connection to its daemon: NDJSON JSON-RPC over the daemon's Unix socket or loopback
 * TCP port, answers matched by id. A call can carry the envelope `timeoutMs` and be cancelled
 * (request.cancel), so Ctrl-C and --timeout stop the device work in the daemon, not only here.
 */
import type { Socket } from "bun";
import type { RpcErrorObject } from "../../protocol/errors.ts";
import { MAX_FRAME_BYTES } from "../../rpc/encode.ts";
import { LineSplitter } from "../../rpc/ndjson.ts";

const utf8 = new TextDecoder();

export type Endpoint = { socket: string } | { host: string; port: number };

export const endpointText = (e: Endpoint) => ("socket" in e ? e.socket : `${e.host.includes(":") ? `[${e.host}]` : e.host}:${e.port}`);

/** The daemon answered with a JSON-RPC error. */
export class RpcAnswerError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcErrorObject,
  ) {
    super(`${method} failed: JSON-RPC error ${error.code} ${error.data.code}: ${error.message}`);
  }
}

/** The connection to the daemon ended before an answer came. */
export class ConnectionLost extends Error {}

type Pending = { method: string; resolve(v: unknown): void; reject(e: Error): void };

export class RpcSocket {
  private socket!: Socket<undefined>;
  /** Splits bytes, not text, so a character cut by a chunk boundary arrives whole. */
  private readonly splitter = new LineSplitter(MAX_FRAME_BYTES);
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: Error | null = null;

  static async connect(endpoint: Endpoint, token: string | null): Promise<RpcSocket> {
    const c = new RpcSocket();
    const handlers = {
      data: (_s: Socket<undefined>, chunk: Uint8Array) => c.receive(chunk),
      close: () => c.lost(new ConnectionLost("the devicerail daemon closed the connection")),
      error: (_s: Socket<undefined>, e: Error) => c.lost(new ConnectionLost(`the connection to the devicerail daemon failed: ${e.message}`)),
    };
    c.socket =
      "socket" in endpoint
        ? await Bun.connect({ unix: endpoint.socket, socket: handlers })
        : await Bun.connect({ hostname: endpoint.host, port: endpoint.port, socket: handlers });
    if (token !== null) c.socket.write(`DEVICERAIL-TOKEN ${token}\n`);
    return c;
  }

  /** Sends one request; resolves with its result, rejects with RpcAnswerError or ConnectionLost. Returns the id too, for request.cancel. */
  request<T>(method: string, params?: unknown, timeoutMs?: number): { id: number; answer: Promise<T> } {
    const id = this.nextId++;
    if (this.closedWith) return { id, answer: Promise.reject(this.closedWith) };
    const answer = new Promise<T>((resolve, reject) => this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject }));
    const message = { jsonrpc: "2.0", id, method, ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(params === undefined ? {} : { params }) };
    this.socket.write(`${JSON.stringify(message)}\n`);
    return { id, answer };
  }

  call<T>(method: string, params?: unknown, timeoutMs?: number): Promise<T> {
    return this.request<T>(method, params, timeoutMs).answer;
  }

  /** Ends the connection after what was written (the daemon then ends a Session left open). */
  close(): void {
    this.socket.end();
  }

  /** Cuts the connection now. */
  terminate(): void {
    this.socket.terminate();
  }

  private receive(chunk: Uint8Array): void {
    for (const frame of this.splitter.push(chunk)) {
      // The daemon never sends more than MAX_FRAME_BYTES a line; a longer one is not its answer.
      if (frame.kind === "oversized") {
        this.lost(new ConnectionLost(`the devicerail daemon sent a line of over ${MAX_FRAME_BYTES} bytes`));
        this.socket.terminate();
        return;
      }
      const line = utf8.decode(frame.bytes);
      if (line.trim() === "") continue;
      const msg = JSON.parse(line) as { id?: unknown; result?: unknown; error?: RpcErrorObject };
      const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
      if (!p) continue;
      this.pending.delete(msg.id as number);
      if (msg.error) p.reject(new RpcAnswerError(p.method, msg.error));
      else p.resolve(msg.result);
    }
  }

  private lost(e: Error): void {
    if (this.closedWith) return;
    this.closedWith = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
