import type { ErrorInfo } from "../../protocol/errors.ts";
import { errorInfo } from "../../protocol/errors.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { EventLog } from "../sessions/event-log.ts";
import { requiredMinor } from "../event-minor.ts";

export const CAPABILITY_TTL_MS = 30_000;
export const MAX_CAPABILITIES = 256;
export const MAX_SUBSCRIBERS_PER_SESSION = 128;
export const MAX_REPLAY_EVENTS = 100_000;

export type OriginPolicy = { kind: "absent" } | { kind: "exact"; origin: string };
export interface Capability {
  sessionId: string;
  originPolicy: OriginPolicy;
  expiresAtMs: number;
}

export interface Cursor {
  streamEpoch: string;
  sessionId: string;
  sequence: number;
}

export type Termination = { reason: "sessionEnded" } | { reason: string; error: ErrorInfo };

/** What a subscription hands the WebSocket: events in order, then one termination. */
export interface Feed {
  /** Called with each event (replay first, then live), and once with the termination. */
  start(sink: { event(e: TestEvent): void; end(t: Termination): void }): void;
  /** The subscriber went away or was terminated by the transport: stop feeding. */
  stop(): void;
}

const ORIGIN = /^https?:\/\/127\.0\.0\.1:([1-9]\d{0,4})$/;

/**
 * The Session side of the event plane (docs/protocol/event-stream.md): single-use capabilities bound to a Session and an
 * origin policy, and subscriptions that register their replay snapshot and live tail in one tick
 * of the event log, so the subscriber sees every event exactly once and in order.
 */
export class EventStreams {
  readonly epoch = crypto.randomUUID();
  private readonly capabilities = new Map<string, Capability>();
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private shuttingDown = false;
  private readonly unwatch: () => void;

  constructor(
    private readonly log: EventLog,
    private readonly now: () => number = Date.now,
  ) {
    this.unwatch = log.watch({
      committed: (events) => {
        for (const e of events) for (const s of this.subscribers.get(e.sessionId) ?? []) s.live(e);
      },
      deleted: (sessionId, lastSequence) => {
        for (const s of [...(this.subscribers.get(sessionId) ?? [])])
          s.terminate({
            reason: "sessionDeleted",
            error: errorInfo("stream_terminal_session_deleted", { details: { lastSequence } }),
          });
      },
    });
  }

  /** events.stream.open (docs/protocol/event-stream.md#opening-a-stream): a fresh bearer token; the Session is checked at subscribe time. */
  open(sessionId: string, originPolicy: OriginPolicy): { token: string; expiresAtMs: number } {
    if (this.shuttingDown) throw new RpcError("stream_server_shutdown");
    if (originPolicy.kind === "exact") {
      const m = ORIGIN.exec(originPolicy.origin);
      const port = m ? Number(m[1]) : 0;
      const defaultPort = originPolicy.origin.startsWith("https:") ? 443 : 80;
      if (!m || port > 65_535 || port === defaultPort || originPolicy.origin.length > 256)
        throw new RpcError("invalid_stream_origin");
    }
    this.purge();
    if (this.capabilities.size >= MAX_CAPABILITIES) throw new RpcError("stream_capability_limit");
    const token = (crypto.randomUUID() + crypto.randomUUID()).replaceAll("-", "");
    const expiresAtMs = this.now() + CAPABILITY_TTL_MS;
    this.capabilities.set(token, { sessionId, originPolicy, expiresAtMs });
    return { token, expiresAtMs };
  }

  /**
   * The capability a WebSocket upgrade presents. It is consumed only when the origin matches its
   * policy: a browser page that guessed nothing cannot burn a client's capability.
   */
  consume(token: string, origin: string | null): Capability | null {
    this.purge();
    const cap = this.capabilities.get(token);
    if (!cap || this.shuttingDown) return null;
    const ok = cap.originPolicy.kind === "absent" ? origin === null : origin === cap.originPolicy.origin;
    if (!ok) return null;
    this.capabilities.delete(token);
    return cap;
  }

  private purge(): void {
    const now = this.now();
    for (const [token, cap] of this.capabilities) if (cap.expiresAtMs <= now) this.capabilities.delete(token);
  }

  /** events.subscribe checks 4–10 of docs/protocol/event-stream.md#subscribing; returns the result and the feed, or throws the RpcError. */
  subscribe(cap: Capability, params: { sessionId: string; afterCursor?: Cursor }, minor: number) {
    const { sessionId, afterCursor } = params;
    if (sessionId !== cap.sessionId) throw new RpcError("stream_capability_session_mismatch");
    if (afterCursor && afterCursor.sessionId !== cap.sessionId) throw new RpcError("stream_cursor_session_mismatch");
    if (afterCursor && afterCursor.streamEpoch !== this.epoch) throw new RpcError("stream_cursor_epoch_mismatch");
    if (this.log.isDeleted(sessionId)) throw new RpcError("stream_session_deleted", { details: { sessionId } });
    if (this.shuttingDown) throw new RpcError("stream_server_shutdown");
    const info = this.log.info(sessionId);
    if (!info) throw new RpcError("stream_session_not_found", { details: { sessionId } });
    const after = afterCursor?.sequence ?? 0;
    if (after > info.lastSequence)
      throw new RpcError("stream_cursor_ahead", { details: { afterSequence: after, lastSequence: info.lastSequence } });
    if (info.lastSequence - after > MAX_REPLAY_EVENTS)
      throw new RpcError("stream_cursor_too_old", {
        details: { maximumEvents: MAX_REPLAY_EVENTS, requestedEvents: info.lastSequence - after },
      });
    const set = this.subscribers.get(sessionId) ?? new Set<Subscriber>();
    if (set.size >= MAX_SUBSCRIBERS_PER_SESSION)
      throw new RpcError("stream_subscription_limit", { details: { maximumSubscribers: MAX_SUBSCRIBERS_PER_SESSION } });
    // Snapshot and registration in one synchronous step: the log commits and notifies in one tick.
    const replay = this.log.read(sessionId, after);
    const subscriber = new Subscriber(replay, minor, () => {
      set.delete(subscriber);
      if (set.size === 0) this.subscribers.delete(sessionId);
    });
    set.add(subscriber);
    this.subscribers.set(sessionId, set);
    // An ended Session whose replay holds no sessionEnded (the cursor was at its end) ends at once.
    if (info.state === "ended" && !replay.some((e) => e.payload.type === "sessionEnded"))
      subscriber.terminate({ reason: "sessionEnded" });
    const through = replay.at(-1)?.sequence ?? after;
    return {
      result: {
        subscriptionId: crypto.randomUUID(),
        sessionId,
        replayThrough: { streamEpoch: this.epoch, sessionId, sequence: Math.max(through, info.lastSequence) },
        sessionState: info.state === "ended" ? ("ended" as const) : ("active" as const),
      },
      feed: subscriber as Feed,
    };
  }

  /** Shutdown: no more capabilities or subscriptions; every open stream gets serverShutdown. */
  shutdown(): void {
    this.shuttingDown = true;
    this.capabilities.clear();
    for (const set of [...this.subscribers.values()])
      for (const s of [...set]) s.terminate({ reason: "serverShutdown", error: errorInfo("stream_server_shutdown") });
    this.unwatch();
  }
}

/** One subscription: the replay, then live events, until sessionEnded or a terminal condition. */
class Subscriber implements Feed {
  private sink: { event(e: TestEvent): void; end(t: Termination): void } | null = null;
  private pending: TestEvent[];
  private ended: Termination | null = null;
  private done = false;

  constructor(
    replay: TestEvent[],
    private readonly minor: number,
    private readonly release: () => void,
  ) {
    this.pending = replay;
  }

  start(sink: { event(e: TestEvent): void; end(t: Termination): void }): void {
    this.sink = sink;
    const queued = this.pending;
    this.pending = [];
    for (const e of queued) if (!this.deliver(e)) return;
    if (this.ended) this.finish(this.ended);
  }

  live(e: TestEvent): void {
    if (this.done) return;
    if (!this.sink) this.pending.push(e);
    else this.deliver(e);
  }

  terminate(t: Termination): void {
    if (this.done) return;
    if (!this.sink) this.ended = t;
    else this.finish(t);
  }

  stop(): void {
    this.done = true;
    this.release();
  }

  /** Sends one event; a newer-minor event ends the stream before it (never skipped, docs/protocol/sessions-and-events.md#events-and-protocol-versions). */
  private deliver(e: TestEvent): boolean {
    if (this.done) return false;
    const needs = requiredMinor(e);
    if (needs > this.minor) {
      this.finish({
        reason: "internalError",
        error: errorInfo("stream_event_protocol_incompatible", {
          details: {
            requiredProtocol: { major: 1, minor: needs },
            selectedProtocol: { major: 1, minor: this.minor },
            sequence: e.sequence,
          },
        }),
      });
      return false;
    }
    this.sink?.event(e);
    if (e.payload.type === "sessionEnded") {
      this.finish({ reason: "sessionEnded" });
      return false;
    }
    return true;
  }

  private finish(t: Termination): void {
    if (this.done) return;
    this.done = true;
    this.release();
    this.sink?.end(t);
  }
}
