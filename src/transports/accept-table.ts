import type { Socket } from "bun";
import type { Logger } from "../rpc/rpc-error.ts";
import { type AcceptOptions, Accepted } from "./sniff.ts";

/**
 * The connections of one stream listener (TCP or Unix): admission under a limit, the socket
 * handlers that feed each Accepted, and the shutdown that ends them after their last answers.
 */
export class AcceptTable {
  private readonly open = new Set<Accepted>();
  private stopping = false;
  private nextSerial = 1;

  constructor(
    private readonly accept: AcceptOptions,
    private readonly opts: { limit: number; log: Logger; logKey: string; admit?: (socket: Socket<Accepted | undefined>) => boolean },
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** The `socket` handlers for Bun.listen. */
  readonly handlers = {
    open: (socket: Socket<Accepted | undefined>) => {
      const { log, limit } = this.opts;
      if (this.stopping) {
        socket.terminate();
        return;
      }
      if (this.opts.admit && !this.opts.admit(socket)) return;
      if (this.open.size >= limit) {
        log.warn({ limit }, `${this.accept.label} connection limit reached; closing the new connection`);
        socket.end();
        return;
      }
      const accepted = new Accepted(socket, this.accept, log.child({ [this.opts.logKey]: this.nextSerial++ }));
      socket.data = accepted;
      this.open.add(accepted);
      accepted.finished.then(() => this.open.delete(accepted));
      log.debug({ open: this.open.size }, `${this.accept.label} connection opened`);
    },
    data: (socket: Socket<Accepted | undefined>, chunk: Uint8Array) => socket.data?.receive(chunk),
    drain: (socket: Socket<Accepted | undefined>) => socket.data?.drain(),
    end: (socket: Socket<Accepted | undefined>) => socket.data?.endOfInput(),
    error: (socket: Socket<Accepted | undefined>, err: Error) => socket.data?.gone(err),
    close: (socket: Socket<Accepted | undefined>, err?: Error) => socket.data?.gone(err ?? null),
  };

  /** Refuses new connections and ends the open ones (each flushes its last answers, bounded). */
  async shutdown(alsoStop: Promise<void>): Promise<void> {
    this.stopping = true;
    const all = [...this.open];
    this.opts.log.info({ connections: all.length }, `${this.accept.label} listener stopping`);
    await Promise.all([alsoStop, ...all.map((a) => a.shutdown())]);
  }
}
