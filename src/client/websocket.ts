/**
 * The event plane's wiring (docs/protocol/event-stream.md): JSON-RPC over the WebSocket a
 * capability from events.stream.open names, one message a frame. Answers are matched by id as on
 * the socket; the stream's notifications (events.stream.event, events.stream.terminal) go to the
 * listener.
 */
import type { RpcErrorObject } from "../protocol/errors.ts";
import { type Answer, type Channel, type Client, answerOf, clientOver } from "./client.ts";
import { ConnectionLost } from "./remote-error.ts";

export type Notification = { method: string; params?: unknown };

export class WebSocketChannel implements Channel {
  private readonly pending = new Map<number, { resolve(a: Answer): void; reject(e: Error): void }>();
  private closedWith: Error | null = null;
  /** Resolves when the socket closes, from either side. */
  readonly closed: Promise<void>;

  private constructor(
    private readonly ws: WebSocket,
    onNotification: (n: Notification) => void,
  ) {
    const closed = Promise.withResolvers<void>();
    this.closed = closed.promise;
    ws.addEventListener("message", (m) => {
      const msg = JSON.parse(String(m.data)) as {
        id?: unknown;
        result?: unknown;
        error?: RpcErrorObject;
        method?: string;
        params?: unknown;
      };
      if (typeof msg.method === "string" && msg.id === undefined)
        return onNotification({ method: msg.method, params: msg.params });
      const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
      if (!p) return;
      this.pending.delete(msg.id as number);
      p.resolve(answerOf(msg));
    });
    ws.addEventListener("close", () => {
      this.closedWith ??= new ConnectionLost("the event stream closed");
      for (const p of this.pending.values()) p.reject(this.closedWith);
      this.pending.clear();
      closed.resolve();
    });
  }

  /** Connects; rejects with ConnectionLost when the socket closes before it opens. */
  static open(url: string, protocols: string[], onNotification: (n: Notification) => void): Promise<WebSocketChannel> {
    const ws = new WebSocket(url, protocols);
    const channel = new WebSocketChannel(ws, onNotification);
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => resolve(channel), { once: true });
      void channel.closed.then(() => reject(new ConnectionLost("the event stream closed before it opened")));
    });
  }

  send(id: number, method: string, params: object | undefined): Promise<Answer> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    return answer;
  }

  async close(): Promise<void> {
    this.ws.close();
  }
}

/** A client on the event plane, and its channel (for `closed`). */
export async function openEventClient(
  url: string,
  protocols: string[],
  onNotification: (n: Notification) => void,
): Promise<{ client: Client; channel: WebSocketChannel }> {
  const channel = await WebSocketChannel.open(url, protocols, onNotification);
  return { client: clientOver(channel), channel };
}
