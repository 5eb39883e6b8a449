import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import { EventLog } from "../../../src/core/sessions/event-log.ts";
import { sessionSummaries } from "../../../src/core/sessions/session-summaries.ts";
import type { TestEventPayload } from "../../../src/protocol/types/event.ts";
import type { SessionSummary } from "../../../src/protocol/types/extensions.ts";

const CALLS = Array.from({ length: 6 }, (_, i) => `0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d1${i}`);
const failure = (code: string) => ({ code, message: code, retryable: false, details: null });
const started = (id: string): TestEventPayload => ({
  type: "actionStarted",
  call: { id, name: "tap", arguments: { x: 1, y: 2 } },
});
const result = (callId: string) => ({
  callId,
  startedAtMs: 1,
  finishedAtMs: 2,
  output: { accepted: true },
  before: null,
  after: null,
  evidence: [],
});
const observation = (deviceId: string): TestEventPayload => ({
  type: "observationCaptured",
  observation: {
    id: CALLS[5] as string,
    deviceId,
    capturedAtMs: 1,
    viewport: { width: 1, height: 1, scaleFactor: 1 },
    screenshot: null,
    metadata: {},
  },
});
const verdict = (status: "pass" | "fail" | "unknown", summary: string): TestEventPayload => ({
  type: "verdictRecorded",
  verdict: { status, summary, evidence: [] },
});

/** A log on an in-memory database whose clock the test moves. */
function clockedLog() {
  const opened = openDatabase(":memory:");
  const clock = { now: 1_000 };
  return { db: opened.db, clock, log: new EventLog(opened, () => clock.now) };
}

/** The summary fields a Session with no actions, errors, verdict or end has. */
const quiet = (id: string, startedAtMs: number, now: number): SessionSummary => ({
  id,
  state: "active",
  startedAtMs,
  endedAtMs: null,
  eventCount: 1,
  lastSequence: 1,
  deviceId: "mock-1",
  durationMs: now - startedAtMs,
  actions: 0,
  errors: 0,
  outcome: null,
  reason: null,
  verdict: null,
});

describe("sessionSummaries", () => {
  test("counts actions and failures, and reads the device, outcome, reason and last verdict when a Session ended", async () => {
    const { log, clock } = clockedLog();
    const { session } = await log.startSession({ deviceId: "mock-1" });
    const id = session.id;
    const [ok, failed, cancelled, timedOut, open] = CALLS as [string, string, string, string, string];
    for (const call of [ok, failed, cancelled, timedOut])
      await log.append(id, { deviceId: "mock-1", payload: started(call) });
    await log.append(id, {
      deviceId: "mock-1",
      payload: { type: "actionCompleted", callId: ok, outcome: { outcome: "succeeded", result: result(ok) } },
    });
    await log.append(id, {
      deviceId: "mock-1",
      payload: {
        type: "actionCompleted",
        callId: failed,
        outcome: { outcome: "failed", error: failure("invalid_arguments") },
      },
    });
    await log.append(id, {
      deviceId: "mock-1",
      payload: {
        type: "actionCompleted",
        callId: cancelled,
        outcome: { outcome: "cancelled", error: failure("action_cancelled") },
      },
    });
    await log.append(id, {
      deviceId: "mock-1",
      payload: {
        type: "actionCompleted",
        callId: timedOut,
        outcome: { outcome: "timedOut", error: failure("action_timeout"), timeoutMs: 30 },
      },
    });
    await log.append(id, { deviceId: "mock-1", payload: { type: "error", error: failure("driver_timed_out") } });
    await log.append(id, { payload: verdict("fail", "the first look was wrong") });
    await log.append(id, { payload: verdict("pass", "signed in and synced 3 items") });
    // One more action after the verdict: the verdict is the last verdictRecorded, not the last event.
    await log.append(id, { deviceId: "mock-1", payload: started(open) });
    await log.append(id, {
      deviceId: "mock-1",
      payload: { type: "actionCompleted", callId: open, outcome: { outcome: "succeeded", result: result(open) } },
    });
    clock.now = 1_750;
    await log.endSession(id, { outcome: "failed", reason: "assertion failed", deviceId: "mock-1" });
    clock.now = 9_999;
    expect(log.summaries()).toEqual([
      {
        id,
        state: "ended",
        startedAtMs: 1_000,
        endedAtMs: 1_750,
        eventCount: 15,
        lastSequence: 15,
        deviceId: "mock-1",
        durationMs: 750,
        actions: 5,
        errors: 4,
        outcome: "failed",
        reason: "assertion failed",
        verdict: { status: "pass", summary: "signed in and synced 3 items" },
      },
    ]);
  });

  test("times an active Session up to now and leaves its outcome and verdict null when it has not ended", async () => {
    const { log, clock } = clockedLog();
    const { session } = await log.startSession({ deviceId: "mock-1" });
    clock.now = 1_234;
    expect(log.summaries()).toEqual([quiet(session.id, 1_000, 1_234)]);
  });

  test("keeps a null reason when the Session ended without one", async () => {
    const { log, clock } = clockedLog();
    const { session } = await log.startSession({ deviceId: "mock-1" });
    clock.now = 1_100;
    await log.endSession(session.id, { outcome: "completed", reason: null });
    expect(log.summaries()).toEqual([
      {
        ...quiet(session.id, 1_000, 1_100),
        state: "ended",
        endedAtMs: 1_100,
        eventCount: 2,
        lastSequence: 2,
        outcome: "completed",
        reason: null,
      },
    ]);
  });

  test("lists newest first, by start time and then by creation, when Sessions started in the same millisecond", async () => {
    const { log, clock } = clockedLog();
    clock.now = 5_000;
    const later = (await log.startSession({ deviceId: "mock-1" })).session.id;
    clock.now = 2_000;
    const earliest = (await log.startSession({ deviceId: "mock-1" })).session.id;
    clock.now = 7_000;
    const sameA = (await log.startSession({ deviceId: "mock-1" })).session.id;
    const sameB = (await log.startSession({ deviceId: "mock-1" })).session.id;
    expect(log.summaries().map((s) => s.id)).toEqual([sameB, sameA, later, earliest]);
  });

  test("returns the newest `limit` Sessions of the requested state, and never a deleted one, when filtered", async () => {
    const { log, clock } = clockedLog();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.now = 1_000 + i;
      ids.push((await log.startSession({ deviceId: "mock-1" })).session.id);
    }
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    for (const id of [a, b, d]) await log.endSession(id, { outcome: "completed", reason: null });
    await log.deleteSession(b);
    expect({
      all: log.summaries().map((s) => s.id),
      ended: log.summaries({ state: "ended" }).map((s) => s.id),
      active: log.summaries({ state: "active" }).map((s) => s.id),
      newestTwo: log.summaries({ limit: 2 }).map((s) => s.id),
      newestEnded: log.summaries({ state: "ended", limit: 1 }).map((s) => s.id),
    }).toEqual({ all: [e, d, c, a], ended: [d, a], active: [e, c], newestTwo: [e, d], newestEnded: [d] });
  });

  test("names the device of the first observation or action when sessionStarted names none", async () => {
    const { log } = clockedLog();
    // A client without device.routing.v1: its Session-level events carry no deviceId.
    const observed = (await log.startSession()).session.id;
    await log.append(observed, {
      deviceId: "android-adb:emulator-5554",
      payload: observation("android-adb:emulator-5554"),
    });
    const untouched = (await log.startSession()).session.id;
    const byId = new Map(log.summaries().map((s) => [s.id, s.deviceId]));
    expect({ observed: byId.get(observed), untouched: byId.get(untouched) }).toEqual({
      observed: "android-adb:emulator-5554",
      untouched: null,
    });
  });

  test("agrees with sessions.list on every SessionInfo field when Sessions are active, ended and deleted", async () => {
    const { log, clock } = clockedLog();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      clock.now = 2_000 + i * 10;
      ids.push((await log.startSession({ deviceId: "mock-1" })).session.id);
      await log.append(ids[i] as string, { deviceId: "mock-1", payload: { type: "error", error: failure("x") } });
    }
    clock.now = 3_000;
    for (const id of ids.slice(0, 2)) await log.endSession(id, { outcome: "completed", reason: null });
    await log.deleteSession(ids[0] as string);
    const info = ({ id, state, startedAtMs, endedAtMs, eventCount, lastSequence }: SessionSummary) => ({
      id,
      state,
      startedAtMs,
      endedAtMs,
      eventCount,
      lastSequence,
    });
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(log.summaries().map(info).sort(byId)).toEqual(log.list().sort(byId));
  });

  test("answers an empty list when nothing was recorded", () => {
    const { db } = clockedLog();
    expect(sessionSummaries(db, {}, 0)).toEqual([]);
  });
});
