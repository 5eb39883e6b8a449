import type { RpcId } from "../../protocol/ids.ts";
import type { TestEvent, TestEventPayload } from "../../protocol/types/event.ts";
import type { SessionSummary } from "../../protocol/types/extensions.ts";
import type { SessionInfo, SessionOutcome } from "../../protocol/types/session.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { AppendInput } from "./append-input.ts";
import { admitAppend, admitEnd, appendableSession } from "./append-invariants.ts";
import type { Db, OpenedDatabase } from "./db.ts";
import { GroupCommit, type PendingAppend } from "./group-commit.ts";
import { RawStatements } from "./raw-statements.ts";
import { recoverSessions, restoreSessions } from "./recovery.ts";
import { deleteSessionRows } from "./session-deletion.ts";
import { SessionQueries } from "./session-queries.ts";
import { type SummaryFilter, sessionSummaries } from "./session-summaries.ts";
import { committedInfo, newSessionState, type SessionState } from "./session-state.ts";

export type { AppendInput, EvidenceRow } from "./append-input.ts";
export { MAX_SESSION_REFERENCES } from "./append-invariants.ts";
export { RECOVERY_REASON } from "./recovery.ts";

/** Told of every committed batch, in sequence order, in the same tick as the commit. */
export interface EventWatcher {
  committed(events: readonly TestEvent[]): void;
  deleted(sessionId: string, lastSequence: number): void;
}

/**
 * The append-only Session log and the only writer of the database. An append is checked against
 * its Session's invariants and numbered at once, then group-committed: it resolves only once its
 * transaction is on disk (synchronous=FULL), so acknowledged means durable. An action's terminal
 * event the disk refused is kept and written as soon as the store accepts writes again.
 */
export class EventLog {
  private readonly watchers = new Set<EventWatcher>();
  private readonly sessions: Map<string, SessionState>;
  private readonly deleted: Set<string>;
  private readonly db: Db;
  private readonly statements: RawStatements;
  private readonly committed: SessionQueries;
  private readonly writer: GroupCommit;

  constructor(
    opened: OpenedDatabase,
    private readonly now: () => number = Date.now,
  ) {
    this.db = opened.db;
    this.statements = new RawStatements(opened.raw);
    this.committed = new SessionQueries(opened.db);
    this.writer = new GroupCommit(this.statements, now, (batch) => this.notifyCommitted(batch));
    ({ sessions: this.sessions, deleted: this.deleted } = restoreSessions(
      this.statements.loadSessions(),
      this.committed,
    ));
  }

  /** Creates a Session whose event 1 is sessionStarted. */
  async startSession(
    opts: { requestId?: RpcId; deviceId?: string } = {},
  ): Promise<{ session: SessionInfo; event: TestEvent }> {
    this.writer.assertOpen();
    const id = crypto.randomUUID();
    const s = newSessionState(id, this.now());
    this.sessions.set(id, s);
    const event = await this.writer.enqueue(s, { ...opts, payload: { type: "sessionStarted" } }, true, () =>
      this.sessions.delete(id),
    );
    return { session: this.info(id) as SessionInfo, event };
  }

  /** Appends one event to an active Session; refused with the store's typed errors (docs/protocol/errors.md#-32006). */
  append(sessionId: string, input: AppendInput): Promise<TestEvent> {
    try {
      this.writer.assertOpen();
      const s = appendableSession(this.sessions, sessionId);
      const undo = admitAppend(s, input);
      return this.writer.enqueue(s, input, false, undo);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Appends sessionEnded and seals the log: nothing can be appended afterwards. */
  async endSession(
    sessionId: string,
    opts: { outcome: SessionOutcome; reason: string | null; requestId?: RpcId; deviceId?: string },
  ): Promise<{ session: SessionInfo; event: TestEvent }> {
    this.writer.assertOpen();
    const s = appendableSession(this.sessions, sessionId);
    const undo = admitEnd(s, this.now());
    const payload: TestEventPayload = { type: "sessionEnded", outcome: opts.outcome, reason: opts.reason };
    const event = await this.writer.enqueue(
      s,
      { requestId: opts.requestId, deviceId: opts.deviceId, payload },
      false,
      undo,
    );
    return { session: this.info(sessionId) as SessionInfo, event };
  }

  /** Registers a watcher of committed events and deletions; returns the unregister. */
  watch(w: EventWatcher): () => void {
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** Resolves once everything appended so far is on disk, or failed. */
  flushed(): Promise<void> {
    return this.writer.flushed();
  }

  /** Actions whose terminal event the store refused and that are waiting for it (group-commit.ts). */
  owedOutcomes(): number {
    return this.writer.owedCount();
  }

  info(id: string): SessionInfo | undefined {
    const s = this.sessions.get(id);
    return s ? committedInfo(s) : undefined;
  }

  isDeleted(id: string): boolean {
    return this.deleted.has(id);
  }

  /** Every Session that was not deleted and has a committed event, ordered by id. */
  list(): SessionInfo[] {
    return [...this.sessions.keys()]
      .sort()
      .map((id) => this.info(id))
      .filter((x): x is SessionInfo => x !== undefined && x.lastSequence > 0);
  }

  /** Summaries of the committed, undeleted Sessions, newest first; active ones are timed up to now. */
  summaries(filter: SummaryFilter = {}): SessionSummary[] {
    return sessionSummaries(this.db, filter, this.now());
  }

  /** Committed events with sequence > afterSequence, at most `limit`. */
  read(sessionId: string, afterSequence = 0, limit?: number): TestEvent[] {
    return this.committed.read(sessionId, afterSequence, limit);
  }

  /** The JSON size of each committed event after afterSequence, at most `limit`, without reading the events. */
  sizes(sessionId: string, afterSequence: number, limit: number): { sequence: number; bytes: number }[] {
    return this.committed.sizes(sessionId, afterSequence, limit);
  }

  /** Digests of the Evidence this Session references. */
  evidenceOf(sessionId: string): Set<string> {
    return this.committed.evidenceOf(sessionId);
  }

  /** Whether this Session references the digest. */
  references(sessionId: string, sha256: string): boolean {
    return this.committed.references(sessionId, sha256);
  }

  /** Committed events that may carry the Observation with this id, newest first. */
  eventsNaming(sessionId: string, observationId: string): TestEvent[] {
    return this.committed.eventsNaming(sessionId, observationId);
  }

  /** True when the digest has a row (its bytes are inline, or its object file is expected to exist). */
  hasEvidence(sha256: string): boolean {
    return this.committed.hasEvidence(sha256);
  }

  /** The bytes of an object kept in the database, as committed; null when unknown or stored as a file. */
  inlineEvidence(sha256: string): Uint8Array | null {
    return this.committed.inlineEvidence(sha256);
  }

  /** True when some Session references the digest (objects without references may be removed). */
  isReferenced(sha256: string): boolean {
    return this.committed.isReferenced(sha256);
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
    const orphans = deleteSessionRows(this.db, sessionId);
    this.sessions.delete(sessionId);
    this.deleted.add(sessionId);
    for (const w of this.watchers) w.deleted(sessionId, s.lastSequence);
    return orphans;
  }

  /** Completes interrupted actions and media streams and seals Sessions an unclean exit left active. */
  recover(): Promise<{ sealed: string[]; interruptedActions: number }> {
    return recoverSessions(this.sessions.values(), this);
  }

  /** Writes what is queued, then refuses further appends (event_store_shutting_down). */
  close(): Promise<void> {
    return this.writer.close();
  }

  /** Releases the prepared statements; without this bun:sqlite keeps the file (and its lock) open. */
  dispose(): void {
    this.writer.refuse();
    this.statements.finalize();
  }

  /** Before any append of the batch resolves: a reader that registers after read() can neither miss nor repeat one. */
  private notifyCommitted(batch: readonly PendingAppend[]): void {
    if (this.watchers.size === 0) return;
    const events = batch.map((p) => p.event);
    for (const w of this.watchers) w.committed(events);
  }
}
