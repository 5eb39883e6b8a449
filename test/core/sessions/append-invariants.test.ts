import { describe, expect, test } from "bun:test";
import type { AppendInput } from "../../../src/core/sessions/append-input.ts";
import {
  admitAppend,
  admitEnd,
  appendableSession,
  MAX_SESSION_REFERENCES,
  replayCommitted,
} from "../../../src/core/sessions/append-invariants.ts";
import { newSessionState, type SessionState } from "../../../src/core/sessions/session-state.ts";
import { MAX_SAFE } from "../../../src/protocol/ids.ts";
import type { TestEvent, TestEventPayload } from "../../../src/protocol/types/event.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";

const SESSION = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const CALL = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
const STREAM = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b5";

const note: TestEventPayload = {
  type: "error",
  error: { code: "x", message: "note", retryable: false, details: null },
};
const started = (id = CALL): TestEventPayload => ({
  type: "actionStarted",
  call: { id, name: "tap", arguments: { x: 1, y: 2 } },
});
const cancelled = (callId = CALL): TestEventPayload => ({
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
const streamStarted: TestEventPayload = {
  type: "mediaStreamStarted",
  stream: { id: STREAM, kind: "screenshot", mediaType: "image/png" },
};
const digest = (i: number) => i.toString(16).padStart(64, "0");
const row = (i: number) => ({ sha256: digest(i), mediaType: "image/png", byteLength: 1 });

/** The whole bookkeeping an append can change, as plain values. */
const bookkeeping = (s: SessionState) => ({
  state: s.state,
  endedAtMs: s.endedAtMs,
  startedCalls: [...s.startedCalls],
  openCalls: [...s.openCalls],
  refs: [...s.refs].sort(),
  openStreams: s.media.openStreams(),
});

function refusal(fn: () => unknown): unknown {
  try {
    fn();
    return "admitted";
  } catch (err) {
    return err instanceof RpcError ? { code: err.code, details: err.error.data.details } : `not an RpcError: ${err}`;
  }
}

describe("appendableSession", () => {
  test("returns the Session when it is active", () => {
    const s = newSessionState(SESSION, 1);
    expect(appendableSession(new Map([[SESSION, s]]), SESSION)).toBe(s);
  });

  test("is session_not_found when the id is unknown", () => {
    expect(refusal(() => appendableSession(new Map(), SESSION))).toEqual({
      code: "session_not_found",
      details: { sessionId: SESSION },
    });
  });

  test("is session_ended when the Session's end is queued, before it is committed", () => {
    const s = newSessionState(SESSION, 1);
    admitEnd(s, 2);
    expect({
      committedEnded: s.committedEnded,
      refusal: refusal(() => appendableSession(new Map([[SESSION, s]]), SESSION)),
    }).toEqual({
      committedEnded: false,
      refusal: { code: "session_ended", details: { sessionId: SESSION } },
    });
  });

  test("is event_sequence_exhausted when the last sequence is the largest safe integer", () => {
    const s = { ...newSessionState(SESSION, 1), lastSequence: MAX_SAFE };
    expect(refusal(() => appendableSession(new Map([[SESSION, s]]), SESSION))).toEqual({
      code: "event_sequence_exhausted",
      details: { sessionId: SESSION },
    });
  });
});

describe("admitAppend", () => {
  test("refuses lifecycle payloads with invalid_event when they do not come from start or end", () => {
    const s = newSessionState(SESSION, 1);
    expect([
      refusal(() => admitAppend(s, { payload: { type: "sessionStarted" } })),
      refusal(() => admitAppend(s, { payload: { type: "sessionEnded", outcome: "completed", reason: null } })),
    ]).toEqual([
      { code: "invalid_event", details: null },
      { code: "invalid_event", details: null },
    ]);
  });

  test("gives each broken action pairing its typed error when the completion does not match its start", () => {
    const s = newSessionState(SESSION, 1);
    const completion = (input: Partial<AppendInput>) =>
      refusal(() => admitAppend(s, { requestId: 1, deviceId: "d", payload: cancelled(), ...input }));
    const before = completion({});
    admitAppend(s, { requestId: 1, deviceId: "d", payload: started() });
    const succeededForOther: TestEventPayload = {
      type: "actionCompleted",
      callId: CALL,
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
    expect({
      before,
      duplicate: refusal(() => admitAppend(s, { requestId: 1, deviceId: "d", payload: started() })),
      otherRequest: completion({ requestId: 2 }),
      otherDevice: completion({ deviceId: "e" }),
      otherResult: completion({ payload: succeededForOther }),
      matching: completion({}),
    }).toEqual({
      before: { code: "action_not_started", details: { callId: CALL } },
      duplicate: { code: "duplicate_action_call", details: { callId: CALL } },
      otherRequest: { code: "action_correlation_mismatch", details: { callId: CALL } },
      otherDevice: { code: "action_correlation_mismatch", details: { callId: CALL } },
      otherResult: { code: "action_result_mismatch", details: { callId: CALL } },
      matching: "admitted",
    });
  });

  test("a call id stays used when its action completed", () => {
    const s = newSessionState(SESSION, 1);
    admitAppend(s, { payload: started() });
    admitAppend(s, { payload: cancelled() });
    expect(refusal(() => admitAppend(s, { payload: started() }))).toEqual({
      code: "duplicate_action_call",
      details: { callId: CALL },
    });
  });

  test("is evidence_reference_limit when an append would pass the per-Session limit, counting a repeated digest once", () => {
    const s = newSessionState(SESSION, 1);
    for (let i = 0; i < MAX_SESSION_REFERENCES; i++) s.refs.add(digest(i));
    expect({
      repeated: refusal(() => admitAppend(s, { payload: note, evidence: [row(0), row(1), row(0)] })),
      oneMore: refusal(() => admitAppend(s, { payload: note, evidence: [row(0), row(MAX_SESSION_REFERENCES)] })),
      size: s.refs.size,
    }).toEqual({
      repeated: "admitted",
      oneMore: { code: "evidence_reference_limit", details: { maximum: MAX_SESSION_REFERENCES } },
      size: MAX_SESSION_REFERENCES,
    });
  });

  test("records nothing when the media lifecycle refuses an append that carries evidence", () => {
    const s = newSessionState(SESSION, 1);
    const sha = "9".repeat(64);
    const frame: TestEventPayload = {
      type: "mediaFrameCaptured",
      frame: {
        streamId: STREAM,
        frameIndex: 1,
        keyFrame: true,
        evidence: {
          id: `sha256:${sha}`,
          mediaType: "image/png",
          uri: `devicerail://assets/sha256/${sha}`,
          sha256: sha,
        },
      },
    };
    const before = bookkeeping(s);
    expect(
      refusal(() =>
        admitAppend(s, { payload: frame, evidence: [{ sha256: sha, mediaType: "image/png", byteLength: 1 }] }),
      ),
    ).toEqual({
      code: "media_stream_not_active",
      details: { streamId: STREAM },
    });
    expect(bookkeeping(s)).toEqual(before);
  });

  test("its undo puts the bookkeeping back when undone latest first", () => {
    const s = newSessionState(SESSION, 1);
    const blank = bookkeeping(s);
    const undos = [
      admitAppend(s, { requestId: 1, payload: started(), evidence: [row(1)] }),
      admitAppend(s, { requestId: 1, payload: cancelled(), evidence: [row(1), row(2)] }),
      admitAppend(s, { payload: streamStarted }),
    ];
    for (const undo of undos.reverse()) undo();
    expect(bookkeeping(s)).toEqual(blank);
  });
});

describe("admitEnd", () => {
  test("seals the Session and its undo reopens it when the end's batch fails", () => {
    const s = newSessionState(SESSION, 1);
    const undo = admitEnd(s, 5);
    const sealed = bookkeeping(s);
    undo();
    expect({ sealed: [sealed.state, sealed.endedAtMs], undone: [s.state, s.endedAtMs] }).toEqual({
      sealed: ["ended", 5],
      undone: ["active", null],
    });
  });
});

describe("replayCommitted", () => {
  test("rebuilds open actions with their correlation and open streams when replaying a committed log", () => {
    const s = newSessionState(SESSION, 1);
    const other = "2f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
    const event = (sequence: number, payload: TestEventPayload, correlation: Partial<TestEvent> = {}): TestEvent => ({
      eventId: crypto.randomUUID(),
      sessionId: SESSION,
      sequence,
      atMs: 1,
      payload,
      ...correlation,
    });
    const log = [
      event(1, { type: "sessionStarted" }),
      event(2, started(other), { requestId: 3 }),
      event(3, started(), { requestId: 4, deviceId: "d" }),
      event(4, cancelled(other), { requestId: 3 }),
      event(5, streamStarted),
    ];
    for (const e of log) replayCommitted(s, e);
    expect(bookkeeping(s)).toEqual({
      state: "active",
      endedAtMs: null,
      startedCalls: [other, CALL],
      openCalls: [[CALL, { requestId: 4, deviceId: "d" }]],
      refs: [],
      openStreams: [{ streamId: STREAM, frameCount: 0 }],
    });
  });
});
