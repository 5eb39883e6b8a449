import type { Socket, SocketHandler } from "bun";
import type { RpcResponse } from "./daemon.ts";

/** A JSON-RPC client over one NDJSON TCP connection; answers are matched to requests by id. */
export class TcpClient {
  private socket!: Socket<undefined>;
  private buffer = "";
  private nextId = 1;
  private readonly waiting = new Map<
    string | number,
    { resolve: (r: RpcResponse) => void; reject: (e: Error) => void }
  >();
  closed = false;

  static connect(port: number, host = "127.0.0.1"): Promise<TcpClient> {
    return TcpClient.open({ hostname: host, port });
  }

  /** The same over a Unix socket. */
  static connectUnix(path: string): Promise<TcpClient> {
    return TcpClient.open({ unix: path });
  }

  private static async open(where: { hostname: string; port: number } | { unix: string }): Promise<TcpClient> {
    const c = new TcpClient();
    const decoder = new TextDecoder();
    const socket: SocketHandler<undefined> = {
      data: (_s, chunk) => {
        c.buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = c.buffer.indexOf("\n")) >= 0) {
          const r = JSON.parse(c.buffer.slice(0, nl)) as RpcResponse;
          c.buffer = c.buffer.slice(nl + 1);
          const w = r.id === null ? undefined : c.waiting.get(r.id);
          if (w && r.id !== null) {
            c.waiting.delete(r.id);
            w.resolve(r);
          }
        }
      },
      close: () => c.fail(new Error("connection closed")),
      error: (_s, err) => c.fail(err),
    };
    c.socket =
      "unix" in where ? await Bun.connect({ unix: where.unix, socket }) : await Bun.connect({ ...where, socket });
    return c;
  }

  private fail(err: Error): void {
    this.closed = true;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  call(method: string, params?: unknown, extra: Record<string, unknown> = {}): Promise<RpcResponse> {
    if (this.closed) return Promise.reject(new Error("connection closed"));
    const id = (extra.id as string | number | undefined) ?? this.nextId++;
    const msg = { jsonrpc: "2.0", id, method, ...extra, ...(params === undefined ? {} : { params }) };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.write(`${JSON.stringify(msg)}\n`);
    });
  }

  close(): void {
    this.socket.end();
  }
}

/** Reads the daemon's one stdout line `{"listening":{"host","port"}}`. */
export async function listeningPort(stdout: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`daemon exited before listening: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return (JSON.parse(text.slice(0, text.indexOf("\n"))) as { listening: { port: number } }).listening.port;
}
