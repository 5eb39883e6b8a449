import { describe, expect, test } from "bun:test";
import { type BatchStore, GroupCommit, type PendingAppend } from "../../../src/core/sessions/group-commit.ts";
import { newSessionState } from "../../../src/core/sessions/session-state.ts";
import type { TestEventPayload } from "../../../src/protocol/types/event.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";

const SESSION = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const note = (n: number): TestEventPayload => ({
  type: "error",
  error: { code: "x", message: `e${n}`, retryable: false, details: null },
});

/** Records each batch as one transaction would commit it; refuses batches while `failing`. */
class FakeStore implements BatchStore {
  batches: { sequences: number[]; atMs: number }[] = [];
  failing = false;
  writeBatch(batch: readonly PendingAppend[], atMs: number): void {
    if (this.failing) throw new Error("disk full");
    this.batches.push({ sequences: batch.map((p) => p.event.sequence), atMs });
  }
}

function setup() {
  const store = new FakeStore();
  const trace: string[] = [];
  const writer = new GroupCommit(
    store,
    () => 1000,
    (batch) => trace.push(`committed ${batch.map((p) => p.event.sequence).join(",")}`),
  );
  const s = newSessionState(SESSION, 1);
  return { store, trace, writer, s };
}

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (err) {
    return err instanceof RpcError ? { code: err.code, message: err.message } : `not an RpcError: ${err}`;
  }
}

function thrown(fn: () => void): unknown {
  try {
    fn();
    return "open";
  } catch (err) {
    return err instanceof RpcError ? { code: err.code, message: err.message } : `not an RpcError: ${err}`;
  }
}

const SHUTTING_DOWN = { code: "event_store_shutting_down", message: "event store is shutting down" };

describe("GroupCommit", () => {
  test("writes every append of one turn in one batch when they arrive together", async () => {
    const { store, writer, s } = setup();
    const acks = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => writer.enqueue(s, { payload: note(n) }, n === 1, () => {})),
    );
    expect({ batches: store.batches, sequences: acks.map((e) => e.sequence) }).toEqual({
      batches: [{ sequences: [1, 2, 3, 4, 5], atMs: 1000 }],
      sequences: [1, 2, 3, 4, 5],
    });
  });

  test("writes one batch per turn when each append waits for the previous acknowledgement", async () => {
    const { store, writer, s } = setup();
    for (const n of [1, 2, 3]) await writer.enqueue(s, { payload: note(n) }, false, () => {});
    expect(store.batches.map((b) => b.sequences)).toEqual([[1], [2], [3]]);
  });

  test("stamps the event and carries the correlation only when it is given", async () => {
    const { writer, s } = setup();
    const [plain, correlated] = await Promise.all([
      writer.enqueue(s, { payload: note(1) }, false, () => {}),
      writer.enqueue(s, { requestId: "r-1", deviceId: "mock-1", payload: note(2) }, false, () => {}),
    ]);
    expect([plain, correlated]).toEqual([
      { eventId: expect.any(String), sessionId: SESSION, sequence: 1, atMs: 1000, payload: note(1) },
      {
        eventId: expect.any(String),
        sessionId: SESSION,
        sequence: 2,
        requestId: "r-1",
        deviceId: "mock-1",
        atMs: 1000,
        payload: note(2),
      },
    ]);
  });

  test("counts an event as committed when its batch is written, not before", async () => {
    const { writer, s } = setup();
    const ack = writer.enqueue(
      s,
      { payload: { type: "sessionEnded", outcome: "completed", reason: null } },
      false,
      () => {},
    );
    const pending = { last: s.lastSequence, committed: s.committedSequence, ended: s.committedEnded };
    await ack;
    expect({
      pending,
      written: { last: s.lastSequence, committed: s.committedSequence, ended: s.committedEnded },
    }).toEqual({
      pending: { last: 1, committed: 0, ended: false },
      written: { last: 1, committed: 1, ended: true },
    });
  });

  test("tells the watcher hook before any append resolves when a batch commits", async () => {
    const { trace, writer, s } = setup();
    await Promise.all(
      [1, 2].map((n) =>
        writer.enqueue(s, { payload: note(n) }, false, () => {}).then((e) => trace.push(`resolved ${e.sequence}`)),
      ),
    );
    expect(trace).toEqual(["committed 1,2", "resolved 1", "resolved 2"]);
  });

  test("rejects the whole batch, undoes it latest first and reuses its sequences when the write fails", async () => {
    const { store, trace, writer, s } = setup();
    await writer.enqueue(s, { payload: note(0) }, false, () => {});
    store.failing = true;
    const undone: number[] = [];
    const results = await Promise.all(
      [1, 2, 3].map((n) => outcome(writer.enqueue(s, { payload: note(n) }, false, () => undone.push(n)))),
    );
    store.failing = false;
    const next = await writer.enqueue(s, { payload: note(4) }, false, () => {});
    const failure = { code: "event_store_error", message: "event store failed: disk full" };
    expect({ results, undone, next: next.sequence, committed: s.committedSequence, trace }).toEqual({
      results: [failure, failure, failure],
      undone: [3, 2, 1],
      next: 2,
      committed: 2,
      trace: ["committed 1", "committed 2"],
    });
  });

  test("flushed resolves only after the queued batch is written when appends are pending", async () => {
    const { store, writer, s } = setup();
    void writer.enqueue(s, { payload: note(1) }, false, () => {});
    const queued = store.batches.length;
    await writer.flushed();
    expect({ queued, written: store.batches.length }).toEqual({ queued: 0, written: 1 });
  });

  test("refuses appends with event_store_shutting_down when closed, after writing what was queued", async () => {
    const { store, writer, s } = setup();
    const ack = writer.enqueue(s, { payload: note(1) }, false, () => {});
    const before = thrown(() => writer.assertOpen());
    await writer.close();
    expect({
      before,
      written: store.batches.length,
      ack: (await ack).sequence,
      after: thrown(() => writer.assertOpen()),
    }).toEqual({
      before: "open",
      written: 1,
      ack: 1,
      after: SHUTTING_DOWN,
    });
  });

  test("refuses appends at once when told to refuse, without waiting for the queue", () => {
    const { writer } = setup();
    writer.refuse();
    expect(thrown(() => writer.assertOpen())).toEqual(SHUTTING_DOWN);
  });
});

/** Retries the writer asked for, fired by hand: no timers, no sleeps. */
function manualRetries() {
  const asked: number[] = [];
  let pending: (() => void) | null = null;
  const timer = (fn: () => void, delayMs: number) => {
    asked.push(delayMs);
    pending = fn;
    return () => {
      pending = null;
    };
  };
  return {
    timer,
    asked,
    pending: () => pending !== null,
    /** Fires the pending retry and waits for the flush it schedules. */
    async fire(writer: GroupCommit) {
      const fn = pending;
      pending = null;
      fn?.();
      await writer.flushed();
    },
  };
}

const CALL = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
const startedPayload = (id = CALL): TestEventPayload => ({
  type: "actionStarted",
  call: { id, name: "tap", arguments: { x: 1, y: 2 } },
});
const completedPayload = (id = CALL): TestEventPayload => ({
  type: "actionCompleted",
  callId: id,
  outcome: {
    outcome: "failed",
    error: { code: "driver_internal_error", message: "x", retryable: false, details: null },
  },
});
const OUTCOME_UNKNOWN = {
  code: "action_outcome_unknown",
  message: `the outcome of action ${CALL} could not be recorded; it may have run on the device: observe the device before retrying`,
  retryable: false,
  details: { callId: CALL, reason: "event store failed: disk full" },
};

async function rpcData(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (err) {
    return err instanceof RpcError ? err.error.data : `not an RpcError: ${err}`;
  }
}

function owedSetup() {
  const store = new FakeStore();
  const retries = manualRetries();
  const kinds: string[] = [];
  const writer = new GroupCommit(
    store,
    () => 1000,
    (batch) => kinds.push(batch.map((p) => `${p.event.sequence}:${p.event.payload.type}`).join(",")),
    retries.timer,
  );
  const s = newSessionState(SESSION, 1);
  return { store, retries, kinds, writer, s };
}

describe("GroupCommit with an action's terminal event the store refused", () => {
  test("answers action_outcome_unknown, never retryable, when the terminal event cannot be written", async () => {
    const { store, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    expect(await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {}))).toEqual(OUTCOME_UNKNOWN);
  });

  test("writes the terminal event at the next retry when the store accepts writes again", async () => {
    const { store, retries, kinds, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    const undone: string[] = [];
    await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => undone.push("completion")));
    const owedWhileFull = writer.owedCount();
    await retries.fire(writer);
    store.failing = false;
    await retries.fire(writer);
    expect({
      owedWhileFull,
      undone,
      kinds,
      committed: s.committedSequence,
      owed: writer.owedCount(),
      retryPending: retries.pending(),
    }).toEqual({
      owedWhileFull: 1,
      undone: [],
      kinds: ["1:actionStarted", "2:actionCompleted"],
      committed: 2,
      owed: 0,
      retryPending: false,
    });
  });

  test("writes the terminal event in its own transaction before a later event of the Session when both are queued", async () => {
    const { store, kinds, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {}));
    store.failing = false;
    const ended = await writer.enqueue(
      s,
      { payload: { type: "sessionEnded", outcome: "completed", reason: null } },
      false,
      () => {},
    );
    expect({ kinds, ended: ended.sequence, batches: store.batches.map((b) => b.sequences) }).toEqual({
      kinds: ["1:actionStarted", "2:actionCompleted", "3:sessionEnded"],
      ended: 3,
      batches: [[1], [2], [3]],
    });
  });

  test("refuses every other event of the Session, sessionEnded included, while the terminal event cannot be written", async () => {
    const { store, kinds, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {}));
    const undone: string[] = [];
    const end = await rpcData(
      writer.enqueue(s, { payload: { type: "sessionEnded", outcome: "completed", reason: null } }, false, () =>
        undone.push("end"),
      ),
    );
    expect({
      end,
      undone,
      kinds,
      last: s.lastSequence,
      committed: s.committedSequence,
      owed: writer.owedCount(),
    }).toEqual({
      end: { code: "event_store_error", message: "event store failed: disk full", retryable: true, details: null },
      undone: ["end"],
      kinds: ["1:actionStarted"],
      last: 2,
      committed: 1,
      owed: 1,
    });
  });

  test("renumbers the terminal event when an earlier event of its failed batch is given back", async () => {
    const { store, retries, kinds, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    await Promise.all([
      rpcData(writer.enqueue(s, { payload: note(1) }, false, () => {})),
      rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {})),
    ]);
    store.failing = false;
    await retries.fire(writer);
    const next = await writer.enqueue(s, { payload: note(2) }, false, () => {});
    expect({ kinds, next: next.sequence }).toEqual({
      kinds: ["1:actionStarted", "2:actionCompleted", "3:error"],
      next: 3,
    });
  });

  test("gives a terminal event back like any other when its actionStarted is in the same failed batch", async () => {
    const { store, retries, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: note(0) }, true, () => {});
    store.failing = true;
    const [start, end] = await Promise.all([
      rpcData(writer.enqueue(s, { payload: startedPayload() }, false, () => {})),
      rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {})),
    ]);
    const failure = {
      code: "event_store_error",
      message: "event store failed: disk full",
      retryable: true,
      details: null,
    };
    expect({ start, end, owed: writer.owedCount(), last: s.lastSequence, retryPending: retries.pending() }).toEqual({
      start: failure,
      end: failure,
      owed: 0,
      last: 1,
      retryPending: false,
    });
  });

  test("retries with a back-off doubling from 50 ms up to 2 s when the store keeps refusing", async () => {
    const { store, retries, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {}));
    for (let i = 0; i < 8; i++) await retries.fire(writer);
    expect(retries.asked).toEqual([50, 100, 200, 400, 800, 1600, 2000, 2000, 2000]);
  });

  test("tries the terminal event once more and stops retrying when closed", async () => {
    const { store, retries, kinds, writer, s } = owedSetup();
    await writer.enqueue(s, { payload: startedPayload() }, true, () => {});
    store.failing = true;
    await rpcData(writer.enqueue(s, { payload: completedPayload() }, false, () => {}));
    store.failing = false;
    await writer.close();
    expect({ kinds, owed: writer.owedCount(), retryPending: retries.pending() }).toEqual({
      kinds: ["1:actionStarted", "2:actionCompleted"],
      owed: 0,
      retryPending: false,
    });
  });
});
