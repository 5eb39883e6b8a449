import type { Database, Statement } from "bun:sqlite";
import { and, asc, eq, gt } from "drizzle-orm";
import type { Db, OpenedDatabase } from "./db.ts";
import { events, evidence, sessionEvidence, sessions } from "./tables.ts";
import { MAX_SAFE, type RpcId } from "../../protocol/ids.ts";
import type { TestEvent, TestEventPayload } from "../../protocol/types/event.ts";
import type { SessionInfo, SessionOutcome } from "../../protocol/types/session.ts";
import { RpcError } from "../../rpc/rpc-error.ts";
import { MediaLedger } from "./media-invariants.ts";

/** Evidence an event references: recorded with the event, in the same transaction. */
export interface EvidenceRow {
  sha256: string;
  mediaType: string;
  byteLength: number;
  /**
   * The bytes themselves, for a small object kept in the database: written with the event, so
   * object and reference become durable in one commit. Absent for an object stored as a file.
   */
  inline?: Uint8Array;
}

export interface AppendInput {
  requestId?: RpcId;
  deviceId?: string;
  payload: TestEventPayload;
  evidence?: readonly EvidenceRow[];
}

interface SessionState {
  id: string;
  state: "active" | "ended";
  startedAtMs: number;
  endedAtMs: number | null;
  /** Highest sequence handed out (may be ahead of the disk while a batch is pending). */
  lastSequence: number;
  /** Highest sequence known to be on disk. */
  committedSequence: number;
  committedEnded: boolean;
  startedCalls: Set<string>;
  openCalls: Map<string, { requestId: RpcId | undefined; deviceId: string | undefined }>;
  media: MediaLedger;
  /** Digests this Session references, pending appends included (the per-Session limit). */
  refs: Set<string>;
}

/** Evidence references one Session may hold (10-limits). */
export const MAX_SESSION_REFERENCES = 10_000;

interface Pending {
  state: SessionState;
  event: TestEvent;
  evidence: readonly EvidenceRow[];
  create: boolean;
  resolve: (e: TestEvent) => void;
  reject: (err: unknown) => void;
  /** Restores the in-memory state when the batch holding this event fails. */
  undo: () => void;
}

export const RECOVERY_REASON = "recovered after an unclean daemon exit";

/**
 * The append-only Session log and the only writer of the database. Appends are validated and
 * numbered at once (sequences are contiguous per Session), then written in batches: every append
 * that arrives in one event-loop turn goes into one transaction (group commit). A promise resolves
 * only after its transaction committed with synchronous=FULL, so acknowledged means on disk.
 */
/** Told of every committed batch, in sequence order, in the same tick as the commit. */
export interface EventWatcher {
  committed(events: readonly TestEvent[]): void;
  deleted(sessionId: string, lastSequence: number): void;
}

export class EventLog {
  private readonly watchers = new Set<EventWatcher>();
  private readonly sessions = new Map<string, SessionState>();
  private readonly deleted = new Set<string>();
  private queue: Pending[] = [];
  private scheduled = false;
  private idle: { promise: Promise<void>; resolve: () => void } | null = null;
  private closed = false;
  private readonly insertSession;
  private readonly insertEvent;
  private readonly sealSession;
  private readonly insertEvidence;
  private readonly insertRef;
  private readonly selectEvidence: Statement<{ inline_bytes: Uint8Array | null }, [string]>;
  private readonly raw: Database;
  private readonly db: Db;

  /**
   * Reads and deletions go through drizzle; the append path uses prepared statements because it
   * runs for every event inside the group-commit transaction.
   */
  constructor(
    opened: OpenedDatabase,
    private readonly now: () => number = Date.now,
  ) {
    const { raw } = opened;
    this.raw = raw;
    this.db = opened.db;
    this.insertSession = raw.prepare("INSERT INTO sessions (id, state, started_at_ms, ended_at_ms) VALUES (?, 'active', ?, NULL)");
    this.insertEvent = raw.prepare("INSERT INTO events (session_id, sequence, event_id, kind, at_ms, body) VALUES (?, ?, ?, ?, ?, ?)");
    this.sealSession = raw.prepare("UPDATE sessions SET state = 'ended', ended_at_ms = ? WHERE id = ?");
    // An existing row already holds the object (inline or as a file); a row that a deletion removed
    // after the put is written again, with the bytes when they are inline.
    this.insertEvidence = raw.prepare("INSERT OR IGNORE INTO evidence (sha256, media_type, byte_length, created_at_ms, inline_bytes) VALUES (?, ?, ?, ?, ?)");
    this.selectEvidence = raw.prepare("SELECT inline_bytes FROM evidence WHERE sha256 = ?");
    this.insertRef = raw.prepare("INSERT OR IGNORE INTO session_evidence (session_id, sha256) VALUES (?, ?)");
    this.load();
  }

  private load(): void {
    type Row = { id: string; state: string; started_at_ms: number; ended_at_ms: number | null; last_sequence: number };
    const rows = this.raw
      .query<Row, []>(
        "SELECT s.id, s.state, s.started_at_ms, s.ended_at_ms, COALESCE((SELECT MAX(sequence) FROM events e WHERE e.session_id = s.id), 0) AS last_sequence FROM sessions s",
      )
      .all();
    for (const r of rows) {
      if (r.state === "deleted") {
        this.deleted.add(r.id);
        continue;
      }
      const s = this.blank(r.id, r.started_at_ms);
      Object.assign(s, { state: r.state, endedAtMs: r.ended_at_ms, lastSequence: r.last_sequence, committedSequence: r.last_sequence, committedEnded: r.state === "ended" });
      if (r.state === "active") this.loadCalls(s);
      this.sessions.set(r.id, s);
    }
  }

  /** Action and media bookkeeping of an active Session, rebuilt from its log after a restart. */
  private loadCalls(s: SessionState): void {
    s.refs = this.evidenceOf(s.id);
    for (const event of this.read(s.id)) {
      const p = event.payload;
      s.media.apply(p);
      if (p.type === "actionStarted") {
        s.startedCalls.add(p.call.id);
        s.openCalls.set(p.call.id, { requestId: event.requestId ?? undefined, deviceId: event.deviceId ?? undefined });
      } else if (p.type === "actionCompleted") s.openCalls.delete(p.callId);
    }
  }

  private blank(id: string, startedAtMs: number): SessionState {
    return { id, state: "active", startedAtMs, endedAtMs: null, lastSequence: 0, committedSequence: 0, committedEnded: false, startedCalls: new Set(), openCalls: new Map(), media: new MediaLedger(), refs: new Set() };
  }

  /** Creates a Session whose event 1 is sessionStarted. */
  async startSession(opts: { requestId?: RpcId; deviceId?: string } = {}): Promise<{ session: SessionInfo; event: TestEvent }> {
    this.assertOpen();
    const id = crypto.randomUUID();
    const s = this.blank(id, this.now());
    this.sessions.set(id, s);
    const event = await this.enqueue(s, { ...opts, payload: { type: "sessionStarted" } }, true, () => this.sessions.delete(id));
    return { session: this.info(id) as SessionInfo, event };
  }

  /** Appends one event to an active Session; refused with the store's typed errors (02 Event Store codes). */
  append(sessionId: string, input: AppendInput): Promise<TestEvent> {
    try {
      this.assertOpen();
      const s = this.active(sessionId);
      const t = input.payload.type;
      if (t === "sessionStarted" || t === "sessionEnded") throw new RpcError("invalid_event");
      const undoRefs = this.trackRefs(s, input.evidence ?? []);
      let undoCalls: () => void;
      let undoMedia: () => void;
      try {
        // At most one of the two applies: a payload is either an action or a media event.
        undoCalls = this.trackCalls(s, input);
        undoMedia = s.media.apply(input.payload);
      } catch (err) {
        undoRefs();
        throw err;
      }
      return this.enqueue(s, input, false, () => {
        undoMedia();
        undoCalls();
        undoRefs();
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Appends sessionEnded and seals the log: nothing can be appended afterwards. */
  async endSession(
    sessionId: string,
    opts: { outcome: SessionOutcome; reason: string | null; requestId?: RpcId; deviceId?: string },
  ): Promise<{ session: SessionInfo; event: TestEvent }> {
    this.assertOpen();
    const s = this.active(sessionId);
    const endedAtMs = this.now();
    s.state = "ended";
    s.endedAtMs = endedAtMs;
    const payload: TestEventPayload = { type: "sessionEnded", outcome: opts.outcome, reason: opts.reason };
    const event = await this.enqueue(s, { requestId: opts.requestId, deviceId: opts.deviceId, payload }, false, () => {
      s.state = "active";
      s.endedAtMs = null;
    });
    return { session: this.info(sessionId) as SessionInfo, event };
  }

  private active(sessionId: string): SessionState {
    const s = this.sessions.get(sessionId);
    if (!s) throw new RpcError("session_not_found", { arg: sessionId, details: { sessionId } });
    if (s.state === "ended") throw new RpcError("session_ended", { arg: sessionId, details: { sessionId } });
    if (s.lastSequence >= MAX_SAFE) throw new RpcError("event_sequence_exhausted", { arg: sessionId, details: { sessionId } });
    return s;
  }

  /** At most MAX_SESSION_REFERENCES distinct Evidence objects per Session; returns how to undo it. */
  private trackRefs(s: SessionState, rows: readonly EvidenceRow[]): () => void {
    const added = [...new Set(rows.map((r) => r.sha256))].filter((d) => !s.refs.has(d));
    if (s.refs.size + added.length > MAX_SESSION_REFERENCES)
      throw new RpcError("evidence_reference_limit", { details: { maximum: MAX_SESSION_REFERENCES } });
    for (const d of added) s.refs.add(d);
    return () => {
      for (const d of added) s.refs.delete(d);
    };
  }

  /** Enforces the actionStarted/actionCompleted pairing of 06 §4; returns how to undo it. */
  private trackCalls(s: SessionState, input: AppendInput): () => void {
    const p = input.payload;
    if (p.type === "actionStarted") {
      const callId = p.call.id;
      if (s.startedCalls.has(callId)) throw new RpcError("duplicate_action_call", { arg: callId, details: { callId } });
      s.startedCalls.add(callId);
      s.openCalls.set(callId, { requestId: input.requestId, deviceId: input.deviceId });
      return () => {
        s.startedCalls.delete(callId);
        s.openCalls.delete(callId);
      };
    }
    if (p.type === "actionCompleted") {
      const open = s.openCalls.get(p.callId);
      if (!open) throw new RpcError("action_not_started", { arg: p.callId, details: { callId: p.callId } });
      if (open.requestId !== input.requestId || open.deviceId !== input.deviceId)
        throw new RpcError("action_correlation_mismatch", { arg: p.callId, details: { callId: p.callId } });
      if (p.outcome.outcome === "succeeded" && p.outcome.result.callId !== p.callId)
        throw new RpcError("action_result_mismatch", { arg: p.callId, details: { callId: p.callId } });
      s.openCalls.delete(p.callId);
      return () => s.openCalls.set(p.callId, open);
    }
    return () => {};
  }

  private enqueue(s: SessionState, input: AppendInput, create: boolean, undoState: () => void): Promise<TestEvent> {
    const sequence = ++s.lastSequence;
    const event: TestEvent = {
      eventId: crypto.randomUUID(),
      sessionId: s.id,
      sequence,
      ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
      ...(input.deviceId !== undefined ? { deviceId: input.deviceId } : {}),
      atMs: this.now(),
      payload: input.payload,
    };
    return new Promise<TestEvent>((resolve, reject) => {
      this.queue.push({
        state: s,
        event,
        evidence: input.evidence ?? [],
        create,
        resolve,
        reject,
        undo: () => {
          s.lastSequence = Math.min(s.lastSequence, sequence - 1);
          undoState();
        },
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Writes every queued event in one transaction, then answers all of them. */
  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return this.settleIdle();
    try {
      this.raw.transaction(() => {
        const at = this.now();
        for (const p of batch) {
          const e = p.event;
          if (p.create) this.insertSession.run(e.sessionId, p.state.startedAtMs);
          this.insertEvent.run(e.sessionId, e.sequence, e.eventId, e.payload.type, e.atMs, JSON.stringify(e));
          for (const ev of p.evidence) {
            this.insertEvidence.run(ev.sha256, ev.mediaType, ev.byteLength, at, ev.inline ?? null);
            this.insertRef.run(e.sessionId, ev.sha256);
          }
          if (e.payload.type === "sessionEnded") this.sealSession.run(p.state.endedAtMs, e.sessionId);
        }
      })();
    } catch (err) {
      for (const p of [...batch].reverse()) p.undo();
      const failure = new RpcError("event_store_error", { arg: String((err as Error).message ?? err) });
      for (const p of batch) p.reject(failure);
      return this.settleIdle();
    }
    for (const p of batch) {
      p.state.committedSequence = Math.max(p.state.committedSequence, p.event.sequence);
      if (p.event.payload.type === "sessionEnded") p.state.committedEnded = true;
    }
    // Before anything else runs: a reader that registers after read() can neither miss nor repeat one.
    if (this.watchers.size > 0) {
      const committed = batch.map((p) => p.event);
      for (const w of this.watchers) w.committed(committed);
    }
    for (const p of batch) p.resolve(p.event);
    this.settleIdle();
  }

  /** Registers a watcher of committed events and deletions; returns the unregister. */
  watch(w: EventWatcher): () => void {
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  private settleIdle(): void {
    if (this.queue.length === 0 && this.idle) {
      this.idle.resolve();
      this.idle = null;
    }
  }

  /** Resolves once everything appended so far is on disk. */
  flushed(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled) return Promise.resolve();
    this.idle ??= Promise.withResolvers<void>();
    return this.idle.promise;
  }

  info(id: string): SessionInfo | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const ended = s.committedEnded;
    return {
      id,
      state: ended ? "ended" : "active",
      startedAtMs: s.startedAtMs,
      endedAtMs: ended ? s.endedAtMs : null,
      eventCount: s.committedSequence,
      lastSequence: s.committedSequence,
    };
  }

  isDeleted(id: string): boolean {
    return this.deleted.has(id);
  }

  /** Every Session that was not deleted, ordered by id. */
  list(): SessionInfo[] {
    return [...this.sessions.keys()]
      .sort()
      .map((id) => this.info(id))
      .filter((x): x is SessionInfo => x !== undefined && x.lastSequence > 0);
  }

  /** Committed events with sequence > afterSequence, at most `limit`. */
  read(sessionId: string, afterSequence = 0, limit?: number): TestEvent[] {
    const q = this.db
      .select({ body: events.body })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), gt(events.sequence, afterSequence)))
      .orderBy(asc(events.sequence));
    const rows = limit === undefined ? q.all() : q.limit(limit).all();
    return rows.map((r) => JSON.parse(r.body) as TestEvent);
  }

  /** Digests of the Evidence this Session references. */
  evidenceOf(sessionId: string): Set<string> {
    const rows = this.db.select({ sha256: sessionEvidence.sha256 }).from(sessionEvidence).where(eq(sessionEvidence.sessionId, sessionId)).all();
    return new Set(rows.map((r) => r.sha256));
  }

  /** True when the digest has a row (its bytes are inline, or its object file is expected to exist). */
  hasEvidence(sha256: string): boolean {
    return this.selectEvidence.get(sha256) !== null;
  }

  /** The bytes of an object kept in the database, as committed; null when unknown or stored as a file. */
  inlineEvidence(sha256: string): Uint8Array | null {
    return this.selectEvidence.get(sha256)?.inline_bytes ?? null;
  }

  /** True when some Session references the digest (objects without references may be removed). */
  isReferenced(sha256: string): boolean {
    return this.db.select({ sha256: sessionEvidence.sha256 }).from(sessionEvidence).where(eq(sessionEvidence.sha256, sha256)).limit(1).all().length > 0;
  }

  /**
   * Deletes one ended Session's log and its Evidence references, leaving a tombstone so the id is
   * never reused. Returns the digests no Session references any more; the caller removes their files.
   */
  async deleteSession(sessionId: string): Promise<string[]> {
    await this.flushed();
    const s = this.sessions.get(sessionId);
    if (!s) throw new RpcError("session_not_found", { arg: sessionId, details: { sessionId } });
    if (!s.committedEnded) throw new RpcError("session_active", { arg: sessionId, details: { sessionId } });
    const orphans: string[] = [];
    this.db.transaction((tx) => {
      const refs = [...this.evidenceOf(sessionId)];
      tx.delete(events).where(eq(events.sessionId, sessionId)).run();
      tx.delete(sessionEvidence).where(eq(sessionEvidence.sessionId, sessionId)).run();
      for (const sha of refs)
        if (!this.isReferenced(sha)) {
          tx.delete(evidence).where(eq(evidence.sha256, sha)).run();
          orphans.push(sha);
        }
      tx.update(sessions).set({ state: "deleted" }).where(eq(sessions.id, sessionId)).run();
    });
    this.sessions.delete(sessionId);
    this.deleted.add(sessionId);
    for (const w of this.watchers) w.deleted(sessionId, s.lastSequence);
    return orphans.sort();
  }

  /**
   * After an unclean exit: every action left without its terminal event is completed as cancelled
   * (reason shutdown, as a graceful shutdown would have written), every open media stream is ended
   * with its committed frame count (a Session never ends with an open stream), then every active
   * Session is sealed with outcome "shutdown" and RECOVERY_REASON.
   */
  async recover(): Promise<{ sealed: string[]; interruptedActions: number }> {
    const sealed: string[] = [];
    let interruptedActions = 0;
    const work: Promise<unknown>[] = [];
    for (const s of [...this.sessions.values()].filter((x) => x.state === "active").sort((a, b) => (a.id < b.id ? -1 : 1))) {
      for (const [callId, corr] of s.openCalls) {
        interruptedActions++;
        const error = { code: "action_cancelled", message: "request was cancelled: Shutdown", retryable: false, details: { reason: "shutdown" } };
        work.push(this.append(s.id, { ...corr, payload: { type: "actionCompleted", callId, outcome: { outcome: "cancelled", error } } }));
      }
      for (const { streamId, frameCount } of s.media.openStreams()) work.push(this.append(s.id, { payload: { type: "mediaStreamEnded", streamId, frameCount } }));
      work.push(this.endSession(s.id, { outcome: "shutdown", reason: RECOVERY_REASON }));
      sealed.push(s.id);
    }
    await Promise.all(work);
    return { sealed, interruptedActions };
  }

  /** Writes what is queued, then refuses further appends (event_store_shutting_down). */
  async close(): Promise<void> {
    await this.flushed();
    this.closed = true;
  }

  /** Releases the prepared statements; without this bun:sqlite keeps the file (and its lock) open. */
  dispose(): void {
    this.closed = true;
    for (const st of [this.insertSession, this.insertEvent, this.sealSession, this.insertEvidence, this.insertRef, this.selectEvidence]) st.finalize();
  }

  private assertOpen(): void {
    if (this.closed) throw new RpcError("event_store_shutting_down");
  }
}
