import type { TestEvent } from "../../protocol/types/event.ts";
import { RpcError } from "../../rpc/rpc-error.ts";
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

interface Waiting extends PendingAppend {
  resolve: (e: TestEvent) => void;
  reject: (err: unknown) => void;
  undo: Undo;
}

/**
 * Numbers events as they are appended (sequences are contiguous per Session) and writes them in
 * batches: every append that arrives in one event-loop turn goes into one transaction, so many
 * appends share one sync. A promise resolves only after its transaction committed, so
 * acknowledged means on disk; a failed batch rejects all of its appends and hands their sequences
 * back.
 */
export class GroupCommit {
  private queue: Waiting[] = [];
  private scheduled = false;
  private idle: { promise: Promise<void>; resolve: () => void } | null = null;
  private closed = false;

  constructor(
    private readonly store: BatchStore,
    private readonly now: () => number,
    /** Runs after a commit and before any append of the batch resolves. */
    private readonly onCommitted: (batch: readonly PendingAppend[]) => void,
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

  /** Resolves once everything appended so far is on disk. */
  flushed(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled) return Promise.resolve();
    this.idle ??= Promise.withResolvers<void>();
    return this.idle.promise;
  }

  /** Writes what is queued, then refuses further appends. */
  async close(): Promise<void> {
    await this.flushed();
    this.closed = true;
  }

  /** Refuses further appends without waiting for the queue. */
  refuse(): void {
    this.closed = true;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return this.settleIdle();
    try {
      this.store.writeBatch(batch, this.now());
    } catch (err) {
      // Latest first: each undo expects the appends after it undone (a completion before its start).
      for (const p of [...batch].reverse()) p.undo();
      const failure = new RpcError("event_store_error", { arg: String((err as Error).message ?? err) });
      for (const p of batch) p.reject(failure);
      return this.settleIdle();
    }
    for (const p of batch) {
      p.state.committedSequence = Math.max(p.state.committedSequence, p.event.sequence);
      if (p.event.payload.type === "sessionEnded") p.state.committedEnded = true;
    }
    this.onCommitted(batch);
    for (const p of batch) p.resolve(p.event);
    this.settleIdle();
  }

  private settleIdle(): void {
    if (this.queue.length === 0 && this.idle) {
      this.idle.resolve();
      this.idle = null;
    }
  }
}
