import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import { EventLog, MAX_SESSION_REFERENCES, RECOVERY_REASON } from "../../../src/core/sessions/event-log.ts";
import type { TestEventPayload } from "../../../src/protocol/types/event.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";
import { countTransactions } from "../../support/transactions.ts";

const memoryLog = () => {
  const opened = openDatabase(":memory:");
  return { raw: opened.raw, log: new EventLog(opened) };
};

const errorPayload = (n: number): TestEventPayload => ({
  type: "error",
  error: { code: "x", message: `e${n}`, retryable: false, details: null },
});
const started = (id: string): TestEventPayload => ({
  type: "actionStarted",
  call: { id, name: "tap", arguments: { x: 1, y: 2 } },
});
const cancelled = (callId: string): TestEventPayload => ({
  type: "actionCompleted",
  callId,
  outcome: {
    outcome: "cancelled",
    error: {
      code: "action_cancelled",
      message: "request was cancelled: Requested",
      retryable: false,
      details: { reason: "requested" },
    },
  },
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (err) {
    return err instanceof RpcError ? err.code : `not an RpcError: ${err}`;
  }
}

describe("EventLog", () => {
  test("a new Session's first event is sessionStarted with sequence 1", async () => {
    const { log } = memoryLog();
    const { session, event } = await log.startSession({ requestId: "s-1", deviceId: "mock-1" });
    expect(session).toEqual({
      id: event.sessionId,
      state: "active",
      startedAtMs: expect.any(Number),
      endedAtMs: null,
      eventCount: 1,
      lastSequence: 1,
    });
    expect(event).toEqual({
      eventId: expect.any(String),
      sessionId: session.id,
      sequence: 1,
      requestId: "s-1",
      deviceId: "mock-1",
      atMs: expect.any(Number),
      payload: { type: "sessionStarted" },
    });
  });

  test("concurrent appends across Sessions get contiguous sequences and read back in order", async () => {
    const { log } = memoryLog();
    const ids = await Promise.all([1, 2, 3].map(async () => (await log.startSession()).session.id));
    const acks = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        log.append(ids[i % 3] as string, { requestId: i, payload: errorPayload(i) }),
      ),
    );
    for (const id of ids) {
      const events = log.read(id);
      expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
      expect(events.slice(1)).toEqual(acks.filter((a) => a.sessionId === id));
      expect(log.info(id)?.lastSequence).toBe(101);
    }
  });

  test("appends that arrive in one turn are written in one transaction (group commit)", async () => {
    const { raw, log } = memoryLog();
    const { session } = await log.startSession();
    const transactions = countTransactions(raw);
    await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(session.id, { payload: errorPayload(i) })));
    expect(transactions()).toBe(1);
    expect(log.info(session.id)?.lastSequence).toBe(51);
  });

  test("sessionEnded seals the log so later appends and a second end are refused", async () => {
    const { log } = memoryLog();
    const { session } = await log.startSession();
    const end = await log.endSession(session.id, { outcome: "completed", reason: null, requestId: 9 });
    expect(end.session).toEqual({
      ...session,
      state: "ended",
      endedAtMs: expect.any(Number),
      eventCount: 2,
      lastSequence: 2,
    });
    expect(end.event.payload).toEqual({ type: "sessionEnded", outcome: "completed", reason: null });
    expect(await codeOf(log.append(session.id, { payload: errorPayload(1) }))).toBe("session_ended");
    expect(await codeOf(log.endSession(session.id, { outcome: "failed", reason: null }))).toBe("session_ended");
  });

  test("lifecycle payloads, unknown Sessions and broken action pairing are typed errors", async () => {
    const { log } = memoryLog();
    const { session } = await log.startSession();
    const id = session.id;
    expect(await codeOf(log.append(id, { payload: { type: "sessionStarted" } }))).toBe("invalid_event");
    expect(
      await codeOf(log.append(id, { payload: { type: "sessionEnded", outcome: "completed", reason: null } })),
    ).toBe("invalid_event");
    expect(await codeOf(log.append("00000000-0000-4000-8000-000000000000", { payload: errorPayload(1) }))).toBe(
      "session_not_found",
    );
    const call = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
    expect(await codeOf(log.append(id, { payload: cancelled(call) }))).toBe("action_not_started");
    await log.append(id, { requestId: 1, deviceId: "d", payload: started(call) });
    expect(await codeOf(log.append(id, { requestId: 1, deviceId: "d", payload: started(call) }))).toBe(
      "duplicate_action_call",
    );
    expect(await codeOf(log.append(id, { requestId: 2, deviceId: "d", payload: cancelled(call) }))).toBe(
      "action_correlation_mismatch",
    );
    const mismatch: TestEventPayload = {
      type: "actionCompleted",
      callId: call,
      outcome: {
        outcome: "succeeded",
        result: {
          callId: "1f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11",
          startedAtMs: 1,
          finishedAtMs: 2,
          output: null,
          before: null,
          after: null,
          evidence: [],
        },
      },
    };
    expect(await codeOf(log.append(id, { requestId: 1, deviceId: "d", payload: mismatch }))).toBe(
      "action_result_mismatch",
    );
    expect(await codeOf(log.append(id, { requestId: 1, deviceId: "d", payload: cancelled(call) }))).toBe("resolved");
    expect(log.read(id).map((e) => e.payload.type)).toEqual(["sessionStarted", "actionStarted", "actionCompleted"]);
  });

  test("the media lifecycle per stream id is enforced by the store: one start, contiguous frames, one matching end", async () => {
    const { log } = memoryLog();
    const { session } = await log.startSession();
    const id = session.id;
    const streamId = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b5";
    const sha = "9387f2e81524bc51e5729791fb9b3483127b24276cb2adbcf0d7eb0d494944bd";
    const frame = (frameIndex: number, mediaType = "image/png"): TestEventPayload => ({
      type: "mediaFrameCaptured",
      frame: {
        streamId,
        frameIndex,
        keyFrame: true,
        evidence: { id: `sha256:${sha}`, mediaType, uri: `devicerail://assets/sha256/${sha}`, sha256: sha },
      },
    });
    const start: TestEventPayload = {
      type: "mediaStreamStarted",
      stream: { id: streamId, kind: "screenshot", mediaType: "image/png" },
    };
    const end = (frameCount: number): TestEventPayload => ({ type: "mediaStreamEnded", streamId, frameCount });
    expect(await codeOf(log.append(id, { payload: frame(1) }))).toBe("media_stream_not_active");
    expect(await codeOf(log.append(id, { payload: start }))).toBe("resolved");
    expect(await codeOf(log.append(id, { payload: start }))).toBe("duplicate_media_stream");
    expect(await codeOf(log.append(id, { payload: frame(2) }))).toBe("media_frame_out_of_order");
    expect(await codeOf(log.append(id, { payload: frame(1, "image/jpeg") }))).toBe("media_frame_mismatch");
    expect(await codeOf(log.append(id, { payload: frame(1) }))).toBe("resolved");
    expect(await codeOf(log.append(id, { payload: end(2) }))).toBe("media_frame_count_mismatch");
    expect(await codeOf(log.append(id, { payload: end(1) }))).toBe("resolved");
    expect(await codeOf(log.append(id, { payload: frame(2) }))).toBe("media_stream_not_active");
    expect(await codeOf(log.append(id, { payload: end(1) }))).toBe("media_stream_not_active");
    expect(log.read(id).map((e) => e.payload.type)).toEqual([
      "sessionStarted",
      "mediaStreamStarted",
      "mediaFrameCaptured",
      "mediaStreamEnded",
    ]);
  });

  test("a failed batch rejects its events and leaves no gap in the sequence", async () => {
    const { raw, log } = memoryLog();
    const { session } = await log.startSession();
    raw.run(
      "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN json_extract(NEW.body, '$.payload.error.message') = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    const bad = {
      payload: {
        type: "error",
        error: { code: "x", message: "boom", retryable: false, details: null },
      } as TestEventPayload,
    };
    const results = await Promise.allSettled([
      log.append(session.id, { payload: errorPayload(1) }),
      log.append(session.id, bad),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(await codeOf(log.append(session.id, bad))).toBe("event_store_error");
    const next = await log.append(session.id, { payload: errorPayload(2) });
    expect(next.sequence).toBe(2);
    expect(log.read(session.id).map((e) => e.sequence)).toEqual([1, 2]);
  });

  test("sessions.list excludes deleted Sessions and deletion keeps Evidence other Sessions reference", async () => {
    const { log } = memoryLog();
    const a = (await log.startSession()).session.id;
    const b = (await log.startSession()).session.id;
    const shared = { sha256: "a".repeat(64), mediaType: "image/png", byteLength: 3 };
    const own = { sha256: "b".repeat(64), mediaType: "image/png", byteLength: 4 };
    await log.append(a, { payload: errorPayload(1), evidence: [shared, own] });
    await log.append(b, { payload: errorPayload(2), evidence: [shared] });
    expect(await codeOf(log.deleteSession(a))).toBe("session_active");
    await log.endSession(a, { outcome: "completed", reason: null });
    expect(await log.deleteSession(a)).toEqual([own.sha256]);
    expect(log.isReferenced(shared.sha256)).toBe(true);
    expect(log.list().map((s) => s.id)).toEqual([b]);
    expect(log.isDeleted(a)).toBe(true);
    expect(await codeOf(log.deleteSession(a))).toBe("session_not_found");
    expect(await codeOf(log.append(a, { payload: errorPayload(3) }))).toBe("session_not_found");
  });

  test("a Session holds at most 10,000 distinct Evidence references, and repeating one costs nothing", async () => {
    const { log } = memoryLog();
    const { session } = await log.startSession();
    const row = (i: number) => ({ sha256: i.toString(16).padStart(64, "0"), mediaType: "image/png", byteLength: 1 });
    await Promise.all(
      Array.from({ length: 100 }, (_, k) =>
        log.append(session.id, {
          payload: errorPayload(k),
          evidence: Array.from({ length: 100 }, (_, i) => row(k * 100 + i)),
        }),
      ),
    );
    expect(log.evidenceOf(session.id).size).toBe(MAX_SESSION_REFERENCES);
    expect(await codeOf(log.append(session.id, { payload: errorPayload(1), evidence: [row(0), row(5)] }))).toBe(
      "resolved",
    );
    let refused: unknown;
    try {
      await log.append(session.id, { payload: errorPayload(2), evidence: [row(0), row(MAX_SESSION_REFERENCES)] });
    } catch (err) {
      refused = err;
    }
    expect((refused as RpcError).error.data).toEqual({
      code: "evidence_reference_limit",
      message: "session evidence reference limit exceeded",
      retryable: false,
      details: { maximum: MAX_SESSION_REFERENCES },
    });
    expect(log.info(session.id)?.lastSequence).toBe(102);
  });

  test("a closed log refuses appends with event_store_shutting_down", async () => {
    const { log } = memoryLog();
    const { session } = await log.startSession();
    await log.close();
    expect(await codeOf(log.append(session.id, { payload: errorPayload(1) }))).toBe("event_store_shutting_down");
  });
});

describe("EventLog on disk", () => {
  const withDir = async (fn: (path: string) => Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), "devicerail-log-"));
    try {
      await fn(join(dir, "devicerail.sqlite"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  test("acknowledged events are all there after the database is reopened", async () => {
    await withDir(async (path) => {
      const first = openDatabase(path);
      const log = new EventLog(first);
      const { session } = await log.startSession();
      const acked = await Promise.all(
        Array.from({ length: 20 }, (_, i) => log.append(session.id, { requestId: `r${i}`, payload: errorPayload(i) })),
      );
      log.dispose();
      first.raw.close();
      const second = openDatabase(path);
      const again = new EventLog(second);
      expect(again.read(session.id).slice(1)).toEqual(acked);
      expect(again.info(session.id)?.lastSequence).toBe(21);
      again.dispose();
      second.raw.close();
    });
  });

  test("recovery completes interrupted actions and seals Sessions left active", async () => {
    await withDir(async (path) => {
      const first = openDatabase(path);
      const log = new EventLog(first);
      const active = (await log.startSession()).session.id;
      const ended = (await log.startSession()).session.id;
      await log.endSession(ended, { outcome: "completed", reason: null });
      const call = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
      await log.append(active, { requestId: 7, deviceId: "mock-1", payload: started(call) });
      const streamId = "5f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
      const png = {
        id: `sha256:${"a".repeat(64)}`,
        mediaType: "image/png",
        uri: `devicerail://assets/sha256/${"a".repeat(64)}`,
        sha256: "a".repeat(64),
      };
      await log.append(active, {
        payload: { type: "mediaStreamStarted", stream: { id: streamId, kind: "screenshot", mediaType: "image/png" } },
      });
      await log.append(active, {
        payload: { type: "mediaFrameCaptured", frame: { streamId, frameIndex: 1, keyFrame: true, evidence: png } },
      });
      log.dispose();
      first.raw.close();
      const second = openDatabase(path);
      const again = new EventLog(second);
      expect(await again.recover()).toEqual({ sealed: [active], interruptedActions: 1 });
      const events = again.read(active);
      expect(events.map((e) => [e.sequence, e.payload.type])).toEqual([
        [1, "sessionStarted"],
        [2, "actionStarted"],
        [3, "mediaStreamStarted"],
        [4, "mediaFrameCaptured"],
        [5, "actionCompleted"],
        [6, "mediaStreamEnded"],
        [7, "sessionEnded"],
      ]);
      expect(events[5]?.payload).toEqual({ type: "mediaStreamEnded", streamId, frameCount: 1 });
      expect(events[4]).toEqual(expect.objectContaining({ requestId: 7, deviceId: "mock-1" }));
      expect(events[4]?.payload).toEqual({
        type: "actionCompleted",
        callId: call,
        outcome: {
          outcome: "cancelled",
          error: {
            code: "action_cancelled",
            message: "request was cancelled: Shutdown",
            retryable: false,
            details: { reason: "shutdown" },
          },
        },
      });
      expect(events[6]?.payload).toEqual({ type: "sessionEnded", outcome: "shutdown", reason: RECOVERY_REASON });
      expect(again.read(ended).length).toBe(2);
      expect(await again.recover()).toEqual({ sealed: [], interruptedActions: 0 });
      again.dispose();
      second.raw.close();
    });
  });
});

describe("EventLog when the database is full", () => {
  /** SQLite's own "database or disk is full": the file may not grow past the pages it has now. */
  const fillUp = (raw: ReturnType<typeof memoryLog>["raw"]) => {
    const pages = raw.query<{ page_count: number }, []>("PRAGMA page_count").get()?.page_count ?? 0;
    raw.run(`PRAGMA max_page_count = ${pages}`);
  };
  const failedWith = (callId: string, text: string): TestEventPayload => ({
    type: "actionCompleted",
    callId,
    outcome: {
      outcome: "failed",
      error: { code: "driver_internal_error", message: text, retryable: false, details: null },
    },
  });

  test("writes a refused terminal event before sessionEnded, and refuses sessionEnded until then, when space returns", async () => {
    const { raw, log } = memoryLog();
    const { session } = await log.startSession();
    const call = "9d7c3b52-40a4-4b7e-9a53-1d2f3e4a5b6c";
    await log.append(session.id, { payload: started(call) });
    fillUp(raw);
    // Larger than any free space in the pages the file has, so it needs new ones.
    const completion = await codeOf(log.append(session.id, { payload: failedWith(call, "x".repeat(64 * 1024)) }));
    const endWhileFull = await codeOf(log.endSession(session.id, { outcome: "completed", reason: null }));
    const whileFull = { info: log.info(session.id), owed: log.owedOutcomes() };
    raw.run("PRAGMA max_page_count = 1073741823");
    await log.endSession(session.id, { outcome: "completed", reason: null });
    expect({
      completion,
      endWhileFull,
      whileFull,
      owed: log.owedOutcomes(),
      kinds: log.read(session.id).map((e) => [e.sequence, e.payload.type]),
    }).toEqual({
      completion: "action_outcome_unknown",
      endWhileFull: "event_store_error",
      whileFull: { info: { ...session, eventCount: 2, lastSequence: 2 }, owed: 1 },
      owed: 0,
      kinds: [
        [1, "sessionStarted"],
        [2, "actionStarted"],
        [3, "actionCompleted"],
        [4, "sessionEnded"],
      ],
    });
  });
});
