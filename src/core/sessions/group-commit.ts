import type { TestEvent } from "../../protocol/types/event.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { AppendInput, EvidenceRow } from "./append-input.ts";
import type { Undo } from "./append-invariants.ts";
import type { SessionState } from "./session-state.ts";

/** One numbered event waiting for its batch, with what its rows need besides the event. */
export interface PendingAppend {
  state: SessionState;
  event: TestEvent;
  evidence: readonly EvidenceRow[];
  /** The Session's first event: its sessions row is inserted in the same transaction. */
  create: boolean;
}

/** Where batches go: one call is one transaction, committed (and synced) before it returns. */
export interface BatchStore {
  /** Writes every row of the batch or, by throwing, none; `atMs` stamps new Evidence rows. */
  writeBatch(batch: readonly PendingAppend[], atMs: number): void;
}

/** Runs `fn` once after `delayMs`; returns the cancel. Injected so tests drive retries by hand. */
export type RetryTimer = (fn: () => void, delayMs: number) => () => void;

const unrefTimer: RetryTimer = (fn, delayMs) => {
  // Unref'd: a pending retry must not keep a stopping daemon alive.
  const t = setTimeout(fn, delayMs);
  t.unref?.();
  return () => clearTimeout(t);
};

/** First retry of an unwritten outcome, doubled after each failure up to the maximum. */
export const OWED_RETRY_FIRST_MS = 50;
export const OWED_RETRY_MAX_MS = 2_000;

interface Waiting extends PendingAppend {
  resolve: (e: TestEvent) => void;
  reject: (err: unknown) => void;
  /** Reverts the invariants' bookkeeping (not the sequence: a failed batch renumbers). */
  undo: Undo;
}

/**
 * Numbers events as they are appended (sequences are contiguous per Session) and writes them in
 * batches: every append that arrives in one event-loop turn goes into one transaction, so many
 * appends share one sync. A promise resolves only after its transaction committed, so
 * acknowledged means on disk; a failed batch rejects all of its appends and hands their sequences
 * back.
 *
 * The exception is an action's terminal event (actionCompleted of a call whose actionStarted is
 * on disk): the device may already have acted, so it is not given back. Its append is rejected
 * with action_outcome_unknown (never retryable) and the event is owed: written, in its own
 * transaction and ahead of anything else, at the next flush or retry, with back-off. Until it is
 * written its Session takes no other event, so no later event (sessionEnded above all) can reach
 * the disk before it and every actionStarted keeps exactly one terminal event.
 */
export class GroupCommit {
  private queue: Waiting[] = [];
  private owed: Waiting[] = [];
  private scheduled = false;
  private idle: { promise: Promise<void>; resolve: () => void } | null = null;
  private closed = false;
  private cancelRetry: (() => void) | null = null;
  private retryMs = OWED_RETRY_FIRST_MS;
  private lastFailure = "";

  constructor(
    private readonly store: BatchStore,
    private readonly now: () => number,
    /** Runs after a commit and before any append of the batch resolves. */
    private readonly onCommitted: (batch: readonly PendingAppend[]) => void,
    private readonly retryTimer: RetryTimer = unrefTimer,
  ) {}

  /** Refuses work once the log is closing (event_store_shutting_down). */
  assertOpen(): void {
    if (this.closed) throw new RpcError("event_store_shutting_down");
  }

  /**
   * Numbers and queues one event the invariants already admitted; `undoState` reverts their
   * bookkeeping if the batch fails.
   */
  enqueue(s: SessionState, input: AppendInput, create: boolean, undoState: Undo): Promise<TestEvent> {
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
      this.queue.push({ state: s, event, evidence: input.evidence ?? [], create, resolve, reject, undo: undoState });
      this.schedule();
    });
  }

  /** Terminal events whose write failed and that are still waiting for the store. */
  owedCount(): number {
    return this.owed.length;
  }

  /** Resolves once everything appended so far is on disk, or failed (owed outcomes keep retrying). */
  flushed(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled) return Promise.resolve();
    this.idle ??= Promise.withResolvers<void>();
    return this.idle.promise;
  }

  /** Writes what is queued (owed outcomes get one last try), then refuses further appends. */
  async close(): Promise<void> {
    await this.flushed();
    if (this.owed.length) this.writeOwed();
    this.refuse();
  }

  /** Refuses further appends without waiting for the queue. */
  refuse(): void {
    this.closed = true;
    this.cancelRetry?.();
    this.cancelRetry = null;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (this.owed.length) this.writeOwed();
    if (batch.length) this.writeQueued(batch);
    this.settleIdle();
    this.armRetry();
  }

  /** The owed outcomes in one transaction of their own, so a batch they cannot join is not lost with them. */
  private writeOwed(): void {
    const owed = this.owed;
    try {
      this.store.writeBatch(owed, this.now());
    } catch (err) {
      this.lastFailure = failureText(err);
      this.retryMs = Math.min(this.retryMs * 2, OWED_RETRY_MAX_MS);
      return;
    }
    this.owed = [];
    this.retryMs = OWED_RETRY_FIRST_MS;
    this.committed(owed);
  }

  private writeQueued(batch: Waiting[]): void {
    // A Session whose outcome is still owed takes nothing else: the terminal must land first.
    const waiting = new Set(this.owed.map((p) => p.state));
    const blocked = batch.filter((p) => waiting.has(p.state));
    if (blocked.length) this.fail(blocked, this.lastFailure);
    const ready = blocked.length ? batch.filter((p) => !waiting.has(p.state)) : batch;
    if (ready.length === 0) return;
    try {
      this.store.writeBatch(ready, this.now());
    } catch (err) {
      this.lastFailure = failureText(err);
      this.fail(ready, this.lastFailure);
      return;
    }
    this.committed(ready);
  }

  private committed(batch: readonly Waiting[]): void {
    for (const p of batch) {
      p.state.committedSequence = Math.max(p.state.committedSequence, p.event.sequence);
      if (p.event.payload.type === "sessionEnded") p.state.committedEnded = true;
    }
    this.onCommitted(batch);
    for (const p of batch) p.resolve(p.event);
  }

  /**
   * Rejects a batch that did not reach the disk. Everything but owed terminals is undone (latest
   * first: each undo expects the appends after it undone, a completion before its start); then
   * each Session's uncommitted sequences, all of them in this batch or owed, are renumbered.
   */
  private fail(batch: readonly Waiting[], reason: string): void {
    const startedHere = new Set(
      batch.flatMap((p) =>
        p.event.payload.type === "actionStarted" ? [`${p.state.id} ${p.event.payload.call.id}`] : [],
      ),
    );
    const owes = (p: Waiting) =>
      p.event.payload.type === "actionCompleted" && !startedHere.has(`${p.state.id} ${p.event.payload.callId}`);
    for (const p of [...batch].reverse()) if (!owes(p)) p.undo();
    const storeError = new RpcError("event_store_error", { arg: reason });
    for (const p of batch) {
      if (owes(p)) {
        this.owed.push(p);
        // Another append's undo may have dropped a digest this outcome references too.
        for (const row of p.evidence) p.state.refs.add(row.sha256);
        const callId = (p.event.payload as { callId: string }).callId;
        p.reject(
          new RpcError("action_outcome_unknown", {
            arg: callId,
            details: { callId, reason: `event store failed: ${reason}` },
          }),
        );
      } else p.reject(storeError);
    }
    for (const s of new Set(batch.map((p) => p.state))) {
      s.lastSequence = s.committedSequence;
      for (const o of this.owed) if (o.state === s) o.event = { ...o.event, sequence: ++s.lastSequence };
    }
  }

  private armRetry(): void {
    if (this.owed.length === 0 || this.closed || this.cancelRetry) return;
    this.cancelRetry = this.retryTimer(() => {
      this.cancelRetry = null;
      if (!this.closed) this.schedule();
    }, this.retryMs);
  }

  private settleIdle(): void {
    if (this.queue.length === 0 && this.idle) {
      this.idle.resolve();
      this.idle = null;
    }
  }
}

const failureText = (err: unknown): string => String((err as Error)?.message ?? err);
