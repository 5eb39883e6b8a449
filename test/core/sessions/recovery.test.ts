import { describe, expect, test } from "bun:test";
import type { AppendInput } from "../../../src/core/sessions/append-input.ts";
import { admitAppend } from "../../../src/core/sessions/append-invariants.ts";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import { EventLog } from "../../../src/core/sessions/event-log.ts";
import {
  type CommittedLog,
  RECOVERY_REASON,
  type RecoveryWriter,
  recoverSessions,
  restoreSessions,
} from "../../../src/core/sessions/recovery.ts";
import { newSessionState, type SessionState } from "../../../src/core/sessions/session-state.ts";
import type { TestEvent, TestEventPayload } from "../../../src/protocol/types/event.ts";
import { countTransactions } from "../../support/transactions.ts";

const A = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const B = "4c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const C = "5c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const CALL = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
const STREAM = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b5";
const SHUTDOWN_ERROR = {
  code: "action_cancelled",
  message: "request was cancelled: Shutdown",
  retryable: false,
  details: { reason: "shutdown" },
};

const started = (id = CALL): TestEventPayload => ({
  type: "actionStarted",
  call: { id, name: "tap", arguments: { x: 1, y: 2 } },
});
const streamStarted: TestEventPayload = {
  type: "mediaStreamStarted",
  stream: { id: STREAM, kind: "screenshot", mediaType: "image/png" },
};
const event = (
  sessionId: string,
  sequence: number,
  payload: TestEventPayload,
  correlation: Partial<TestEvent> = {},
): TestEvent => ({
  eventId: `e${sequence}`,
  sessionId,
  sequence,
  atMs: 1,
  payload,
  ...correlation,
});

/** Records what recovery asks to write, in order. */
class FakeWriter implements RecoveryWriter {
  calls: unknown[] = [];
  async append(sessionId: string, input: AppendInput): Promise<TestEvent> {
    this.calls.push({ append: sessionId, ...input });
    return event(sessionId, 0, input.payload);
  }
  async endSession(sessionId: string, opts: object): Promise<unknown> {
    this.calls.push({ end: sessionId, ...opts });
    return undefined;
  }
}

describe("restoreSessions", () => {
  test("rebuilds only active Sessions from their log and keeps tombstones apart when the log starts", () => {
    const read: string[] = [];
    const log: CommittedLog = {
      read: (id) => {
        read.push(id);
        return [
          event(id, 1, { type: "sessionStarted" }),
          event(id, 2, started(), { requestId: 7, deviceId: "d" }),
          event(id, 3, streamStarted),
        ];
      },
      evidenceOf: () => new Set(["a".repeat(64)]),
    };
    const { sessions, deleted } = restoreSessions(
      [
        { id: A, state: "active", startedAtMs: 1, endedAtMs: null, lastSequence: 3 },
        { id: B, state: "ended", startedAtMs: 2, endedAtMs: 9, lastSequence: 4 },
        { id: C, state: "deleted", startedAtMs: 3, endedAtMs: 5, lastSequence: 0 },
      ],
      log,
    );
    const a = sessions.get(A) as SessionState;
    const b = sessions.get(B) as SessionState;
    expect({
      read,
      ids: [...sessions.keys()],
      deleted: [...deleted],
      a: { ...a, media: a.media.openStreams() },
      b: { ...b, media: b.media.openStreams() },
    }).toEqual({
      read: [A],
      ids: [A, B],
      deleted: [C],
      a: {
        ...newSessionState(A, 1),
        lastSequence: 3,
        committedSequence: 3,
        startedCalls: new Set([CALL]),
        openCalls: new Map([[CALL, { requestId: 7, deviceId: "d" }]]),
        refs: new Set(["a".repeat(64)]),
        media: [{ streamId: STREAM, frameCount: 0 }],
      },
      b: {
        ...newSessionState(B, 2),
        state: "ended",
        endedAtMs: 9,
        lastSequence: 4,
        committedSequence: 4,
        committedEnded: true,
        media: [],
      },
    });
  });
});

describe("recoverSessions", () => {
  test("completes open actions, ends open streams, then seals each active Session in id order when the last exit was unclean", async () => {
    const b = newSessionState(B, 1);
    admitAppend(b, { requestId: 7, deviceId: "d", payload: started() });
    admitAppend(b, { payload: streamStarted });
    const a = newSessionState(A, 1);
    const ended = { ...newSessionState(C, 1), state: "ended" as const };
    const writer = new FakeWriter();
    const result = await recoverSessions([b, ended, a], writer);
    expect({ result, calls: writer.calls }).toEqual({
      result: { sealed: [A, B], interruptedActions: 1 },
      calls: [
        { end: A, outcome: "shutdown", reason: RECOVERY_REASON },
        {
          append: B,
          requestId: 7,
          deviceId: "d",
          payload: { type: "actionCompleted", callId: CALL, outcome: { outcome: "cancelled", error: SHUTDOWN_ERROR } },
        },
        { append: B, payload: { type: "mediaStreamEnded", streamId: STREAM, frameCount: 0 } },
        { end: B, outcome: "shutdown", reason: RECOVERY_REASON },
      ],
    });
  });

  test("writes nothing when every Session already ended", async () => {
    const writer = new FakeWriter();
    const result = await recoverSessions([{ ...newSessionState(A, 1), state: "ended" }], writer);
    expect({ result, calls: writer.calls }).toEqual({ result: { sealed: [], interruptedActions: 0 }, calls: [] });
  });

  test("commits all of recovery in one transaction when an EventLog restarts over an unclean log", async () => {
    const opened = openDatabase(":memory:");
    const before = new EventLog(opened);
    const ids = await Promise.all([1, 2, 3].map(async () => (await before.startSession()).session.id));
    await Promise.all(
      ids.map((id, i) =>
        before.append(id, { requestId: i, payload: started(`${i}f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11`) }),
      ),
    );
    // The daemon dies here: no end, no close; the next one starts over the same database.
    before.dispose();
    const after = new EventLog(opened);
    const { raw } = opened;
    const transactions = countTransactions(raw);
    const result = await after.recover();
    expect({
      result,
      transactions: transactions(),
      kinds: ids.map((id) => after.read(id).map((e) => e.payload.type)),
      states: ids.map((id) => after.info(id)?.state),
    }).toEqual({
      result: { sealed: [...ids].sort(), interruptedActions: 3 },
      transactions: 1,
      kinds: ids.map(() => ["sessionStarted", "actionStarted", "actionCompleted", "sessionEnded"]),
      states: ["ended", "ended", "ended"],
    });
  });
});
