import type { RpcResponse } from "./daemon.ts";
import { helloParams } from "./hello.ts";

/**
 * A JSON-RPC client over one NDJSON byte stream (a daemon's stdio, a TCP socket): subclasses feed
 * received text with `receive`, report the end with `endOfInput`, and write bytes in `writeRaw`.
 * Responses are read in arrival order.
 */
export abstract class LineClient {
  private text = "";
  private readonly decoder = new TextDecoder();
  private readonly lines: string[] = [];
  private readonly waiters: ((line: string | null) => void)[] = [];
  private nextId = 1;
  protected ended = false;

  abstract writeRaw(data: string | Uint8Array): void;

  /** Extra context for a timeout or a premature end (e.g. the daemon's stderr). */
  protected context(): string {
    return "";
  }

  protected receive(chunk: Uint8Array): void {
    this.text += this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.text.indexOf("\n")) >= 0) {
      const line = this.text.slice(0, nl);
      this.text = this.text.slice(nl + 1);
      const w = this.waiters.shift();
      if (w) w(line);
      else this.lines.push(line);
    }
  }

  protected endOfInput(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w(null);
  }

  /** The next raw line, or null once the stream ended. */
  nextLine(timeoutMs = 10_000): Promise<string | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no response line within ${timeoutMs} ms${this.context()}`)),
        timeoutMs,
      );
      this.waiters.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  async next(timeoutMs?: number): Promise<RpcResponse> {
    const line = await this.nextLine(timeoutMs);
    if (line === null) throw new Error(`the stream ended before a response${this.context()}`);
    return JSON.parse(line) as RpcResponse;
  }

  send(message: unknown): void {
    this.writeRaw(`${JSON.stringify(message)}\n`);
  }

  /** Sends one request with a fresh numeric id (unless given) and returns the next response. */
  async call(method: string, params?: unknown, extra: Record<string, unknown> = {}): Promise<RpcResponse> {
    const id = (extra.id as number | string | undefined) ?? this.nextId++;
    const msg: Record<string, unknown> = { jsonrpc: "2.0", id, method, ...extra };
    if (params !== undefined) msg.params = params;
    this.send(msg);
    return this.next();
  }

  async hello(opts?: Parameters<typeof helloParams>[0]): Promise<RpcResponse> {
    const r = await this.call("system.hello", helloParams(opts));
    if (!r.result) throw new Error(`hello failed: ${JSON.stringify(r)}`);
    return r;
  }
}
