import { Connection } from "../rpc/connection.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";

/**
 * One control connection inside the daemon's own process: the same dispatcher, handshake,
 * selection, Session and in-flight table as a socket connection, with messages passed as strings.
 * For embedding the daemon (and for tests that need many connections without sockets).
 */
export class MemoryConnection {
  /** The server side of this connection (its handshake state, selection and Session). */
  readonly connection: Connection;
  private readonly listeners = new Set<(frame: string) => void>();
  private closed = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    services: ServerServices,
  ) {
    this.connection = new Connection({ kind: "memory", framing: "jsonMessage" }, services, (frame) => {
      for (const l of this.listeners) l(frame);
    });
  }

  /** Calls `listener` with every frame the server writes, in order; returns the unsubscribe. */
  onFrame(listener: (frame: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hands one JSON-RPC message (request, notification or batch) to the dispatcher. */
  async send(text: string): Promise<void> {
    if (this.closed) throw new Error("memory connection is closed");
    await this.dispatcher.handleText(this.connection, text);
  }

  /** Closes the connection as a socket close would: in-flight work is cancelled, its Session ended. */
  async close(reason: Parameters<Dispatcher["close"]>[1] = "RPC connection closed"): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dispatcher.close(this.connection, reason);
  }
}
