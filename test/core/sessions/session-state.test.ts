import { describe, expect, test } from "bun:test";
import { committedInfo, newSessionState } from "../../../src/core/sessions/session-state.ts";

const A = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";

describe("committedInfo", () => {
  test("shows a new Session as active with no events when nothing is committed yet", () => {
    expect(committedInfo(newSessionState(A, 5))).toEqual({
      id: A,
      state: "active",
      startedAtMs: 5,
      endedAtMs: null,
      eventCount: 0,
      lastSequence: 0,
    });
  });

  test("shows only the committed sequence and keeps the Session active when its end is still pending", () => {
    const s = {
      ...newSessionState(A, 5),
      state: "ended" as const,
      endedAtMs: 9,
      lastSequence: 4,
      committedSequence: 3,
    };
    expect(committedInfo(s)).toEqual({
      id: A,
      state: "active",
      startedAtMs: 5,
      endedAtMs: null,
      eventCount: 3,
      lastSequence: 3,
    });
  });

  test("shows the Session ended with its end time when its sessionEnded is committed", () => {
    const s = {
      ...newSessionState(A, 5),
      state: "ended" as const,
      endedAtMs: 9,
      lastSequence: 4,
      committedSequence: 4,
      committedEnded: true,
    };
    expect(committedInfo(s)).toEqual({
      id: A,
      state: "ended",
      startedAtMs: 5,
      endedAtMs: 9,
      eventCount: 4,
      lastSequence: 4,
    });
  });
});
