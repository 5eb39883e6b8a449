/**
 * The socket wiring: NDJSON JSON-RPC over the daemon's Unix socket or TCP port
 * (docs/protocol/transport-and-framing.md), answers matched by id.
 */
import type { Socket } from "bun";
import type { RpcErrorObject } from "../protocol/errors.ts";
import { MAX_FRAME_BYTES } from "../protocol/limits.ts";
import { LineSplitter } from "../rpc/ndjson.ts";
import { type Answer, type Channel, type Client, answerOf, clientOver } from "./client.ts";
import type { Endpoint } from "./endpoint.ts";
import { ConnectionLost } from "./remote-error.ts";

const utf8 = new TextDecoder();

type Pending = (answer: Answer) => void;

export class SocketChannel implements Channel {
  private socket!: Socket<undefined>;
  /** Splits bytes, not text, so a character cut by a chunk boundary arrives whole. */
  private readonly splitter = new LineSplitter(MAX_FRAME_BYTES);
  private readonly pending = new Map<number, { resolve: Pending; reject(e: Error): void }>();
  private closedWith: Error | null = null;

  /** Connects; a token is presented first (`DEVICERAIL-TOKEN`) where the endpoint needs one. */
  static async open(endpoint: Endpoint, token: string | null): Promise<SocketChannel> {
    const c = new SocketChannel();
    const handlers = {
      data: (_s: Socket<undefined>, chunk: Uint8Array) => c.receive(chunk),
      close: () => c.lost(new ConnectionLost("the devicerail daemon closed the connection")),
      error: (_s: Socket<undefined>, e: Error) =>
        c.lost(new ConnectionLost(`the connection to the devicerail daemon failed: ${e.message}`)),
    };
    c.socket =
      "socket" in endpoint
        ? await Bun.connect({ unix: endpoint.socket, socket: handlers })
        : await Bun.connect({ hostname: endpoint.host, port: endpoint.port, socket: handlers });
    if (token !== null) c.socket.write(`DEVICERAIL-TOKEN ${token}\n`);
    return c;
  }

  send(id: number, method: string, params: object | undefined, timeoutMs: number | undefined): Promise<Answer> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const message = {
      jsonrpc: "2.0",
      id,
      method,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(params === undefined ? {} : { params }),
    };
    this.socket.write(`${JSON.stringify(message)}\n`);
    return answer;
  }

  async close(): Promise<void> {
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
      p.resolve(answerOf(msg));
    }
  }

  private lost(e: Error): void {
    if (this.closedWith) return;
    this.closedWith = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}

/** A client on the socket, and its channel (for terminate). */
export async function openSocketClient(
  endpoint: Endpoint,
  token: string | null,
): Promise<{ client: Client; channel: SocketChannel }> {
  const channel = await SocketChannel.open(endpoint, token);
  return { client: clientOver(channel), channel };
}
