import type { Socket } from "bun";
import type { Logger } from "../protocol/rpc-error.ts";
import { isLoopbackAddress } from "./ip-address.ts";
import { type AcceptOptions, Accepted } from "./sniff.ts";
import { setTcpUserTimeout } from "./tcp-user-timeout.ts";

/**
 * Connection limits of one listener. A connection is *pending* until its handshake is done (an
 * NDJSON hello answered, an HTTP request head complete) and *working* after. The two are bounded
 * separately so that peers which connect and never finish (idle sockets, slow-header HTTP) can
 * only ever push out each other, never a client that has said hello.
 */
export interface ConnectionLimits {
  /** Pending connections; when full, the oldest one is closed to admit the new one. */
  pending: number;
  /** Working connections; a connection that finishes its handshake past this is closed. */
  working: number;
  /** How long a connection may stay pending (hello, or the first HTTP request head). */
  handshakeMs: number;
  /** TCP keepalive idle time, so peers that vanish without FIN or RST are noticed; null on Unix sockets. */
  keepAliveMs: number | null;
}

export const DEFAULT_LIMITS: Omit<ConnectionLimits, "keepAliveMs"> = { pending: 64, working: 256, handshakeMs: 10_000 };
/** With Bun's keepalive probes (one a second, ten of them) a vanished TCP peer is closed about 20 s after it went silent. */
export const TCP_KEEPALIVE_MS = 10_000;
/** How long Bun's keepalive probes take to give up: ten, one a second. */
const KEEPALIVE_PROBING_MS = 10_000;
/** The descriptor of a Bun socket: present at run time, missing from bun-types; -1 when absent. */
export const socketFd = (socket: Socket<unknown>): number => (socket as unknown as { fd?: number }).fd ?? -1;

/** Shed connections are summed into at most one log line per this interval, so a flood cannot flood the log. */
const SHED_LOG_MS = 1_000;

/**
 * The connections of one stream listener (TCP or Unix): admission under the pending and working
 * limits, the socket handlers that feed each Accepted, and the shutdown that ends them after
 * their last answers.
 */
export class AcceptTable {
  /** In arrival order, so the first is the oldest. */
  private readonly pending = new Set<Accepted>();
  private readonly working = new Set<Accepted>();
  private stopping = false;
  private nextSerial = 1;
  private shed = { evicted: 0, overWorking: 0, timedOut: 0 };
  private shedTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly accept: AcceptOptions,
    private readonly opts: {
      limits: ConnectionLimits;
      log: Logger;
      logKey: string;
      admit?: (socket: Socket<Accepted | undefined>) => boolean;
    },
  ) {}

  get size(): number {
    return this.pending.size + this.working.size;
  }

  /** The `socket` handlers for Bun.listen. */
  readonly handlers = {
    open: (socket: Socket<Accepted | undefined>) => {
      const { log, limits } = this.opts;
      if (this.stopping) {
        socket.terminate();
        return;
      }
      if (this.opts.admit && !this.opts.admit(socket)) return;
      if (this.pending.size >= limits.pending) this.evictOldestPending();
      if (limits.keepAliveMs !== null) {
        socket.setKeepAlive(true, limits.keepAliveMs);
        // Data in flight to a vanished peer gets the same budget as silence (tcp-user-timeout.ts).
        // Not on loopback: there the kernel closes a dead process's sockets itself, and a peer that
        // only stops reading for a while (paused in a debugger) must not lose its connection.
        if (!isLoopbackAddress(socket.remoteAddress))
          setTcpUserTimeout(socketFd(socket), limits.keepAliveMs + KEEPALIVE_PROBING_MS);
      }
      const accepted: Accepted = new Accepted(
        socket,
        this.accept,
        log.child({ [this.opts.logKey]: this.nextSerial++ }),
        {
          handshakeMs: limits.handshakeMs,
          ready: (): boolean => this.promote(accepted),
          timedOut: () => this.count("timedOut"),
        },
      );
      socket.data = accepted;
      this.pending.add(accepted);
      accepted.finished.then(() => {
        this.pending.delete(accepted);
        this.working.delete(accepted);
      });
      log.debug({ pending: this.pending.size, working: this.working.size }, `${this.accept.label} connection opened`);
    },
    data: (socket: Socket<Accepted | undefined>, chunk: Uint8Array) => socket.data?.receive(chunk),
    drain: (socket: Socket<Accepted | undefined>) => socket.data?.drain(),
    end: (socket: Socket<Accepted | undefined>) => socket.data?.endOfInput(),
    error: (socket: Socket<Accepted | undefined>, err: Error) => socket.data?.gone(err),
    close: (socket: Socket<Accepted | undefined>, err?: Error) => socket.data?.gone(err ?? null),
  };

  private closed: Promise<void> | null = null;

  /**
   * Stops the listener (once, however often asked): no new connections, the open ones ended after
   * their last answers (bounded) while `http` stops too, then the listening socket closed.
   */
  close(listener: { stop(closeActiveConnections?: boolean): void }, http: { stop(): Promise<void> }): Promise<void> {
    this.closed ??= (async () => {
      listener.stop(false);
      await this.shutdown(http.stop());
      listener.stop(true);
    })();
    return this.closed;
  }

  /** Refuses new connections and ends the open ones (each flushes its last answers, bounded). */
  private async shutdown(alsoStop: Promise<void>): Promise<void> {
    this.stopping = true;
    if (this.shedTimer) clearTimeout(this.shedTimer);
    this.logShed();
    const all = [...this.pending, ...this.working];
    this.opts.log.info({ connections: all.length }, `${this.accept.label} listener stopping`);
    await Promise.all([alsoStop, ...all.map((a) => a.shutdown())]);
  }

  private promote(accepted: Accepted): boolean {
    if (!this.pending.delete(accepted)) return this.working.has(accepted);
    if (this.working.size >= this.opts.limits.working) {
      this.count("overWorking");
      return false;
    }
    this.working.add(accepted);
    return true;
  }

  private evictOldestPending(): void {
    const oldest = this.pending.values().next().value;
    if (!oldest) return;
    this.pending.delete(oldest);
    oldest.shed();
    this.count("evicted");
  }

  private count(kind: keyof AcceptTable["shed"]): void {
    this.shed[kind]++;
    this.shedTimer ??= setTimeout(() => {
      this.shedTimer = null;
      this.logShed();
    }, SHED_LOG_MS);
  }

  private logShed(): void {
    const { evicted, overWorking, timedOut } = this.shed;
    if (evicted + overWorking + timedOut === 0) return;
    const { pending, working } = this.opts.limits;
    this.opts.log.warn(
      {
        evictedPending: evicted,
        refusedOverWorkingLimit: overWorking,
        handshakeTimedOut: timedOut,
        pendingLimit: pending,
        workingLimit: working,
        pending: this.pending.size,
        working: this.working.size,
      },
      `${this.accept.label} connections shed`,
    );
    this.shed = { evicted: 0, overWorking: 0, timedOut: 0 };
  }
}
