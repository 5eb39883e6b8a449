import { describe, expect, test } from "bun:test";
import { stateOf } from "../../../src/core/connection-state.ts";
import { coreHarness } from "../../support/core-harness.ts";
import { FakeDriver } from "../../support/fake-driver.ts";

const ROUTED = [
  "events.snapshot.v1",
  "request.control.v1",
  "device.routing.v1",
  "action.protected.v1",
  "media.stream.v1",
];
const UNROUTED = ROUTED.filter((f) => f !== "device.routing.v1");
const M1 = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b5";
const M2 = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b6";
const M3 = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b7";
const streamId = (n: number) => `d9c8b7a6-9584-4736-a251-40f9e8d7c${n.toString(16).padStart(3, "0")}`;
const err = (code: string, message: string, retryable: boolean, details: unknown) => ({
  code,
  message,
  retryable,
  details,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fake driver that also tells a test when an observation has reached it. */
class EnteredFakeDriver extends FakeDriver {
  private waiting: (() => void)[] = [];
  /** Resolves once the next observation has reached the driver (where hangObserve holds it). */
  nextObserve(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  override observe(...args: Parameters<FakeDriver["observe"]>): ReturnType<FakeDriver["observe"]> {
    for (const resolve of this.waiting.splice(0)) resolve();
    return super.observe(...args);
  }
}

const harness = (policy?: "omit") => coreHarness({ driver: new EnteredFakeDriver(), screenshotPolicy: policy });
type Harness = Awaited<ReturnType<typeof harness>>;
/** The Session's events after `after`, without the random and volatile members. */
const logOf = (s: Harness, sessionId: string, after = 0) =>
  s.core.log
    .read(sessionId, after)
    .map(({ sequence, requestId, deviceId, payload }) => ({ sequence, requestId, deviceId, payload }));

async function withSession(
  features: string[],
  run: (s: Harness, c: Awaited<ReturnType<Harness["connect"]>>, sessionId: string) => Promise<void>,
  policy?: "omit",
) {
  const s = await harness(policy);
  try {
    const c = await s.connect(features);
    await c.ask("device.connect");
    const sessionId = (await c.ask("session.start")).result?.id;
    await run(s, c, sessionId);
  } finally {
    s.cleanup();
  }
}

describe("media streams over a fake driver", () => {
  test("start, capture, exact retry, out of order and end write the stream events (docs/protocol/media-streams.md) with request and device ids", () =>
    withSession(ROUTED, async (s, c, sessionId) => {
      const start = c.call("media.stream.start", { streamId: M1, kind: "screenshot" });
      const info = { id: M1, kind: "screenshot" as const, mediaType: "image/png" };
      expect((await start.response).result).toEqual({ stream: info });
      expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).result).toEqual({
        stream: info,
      });
      const cap = c.call("media.stream.capture", { streamId: M1, frameIndex: 1 });
      const frame = (await cap.response).result.frame;
      const log = logOf(s, sessionId);
      const observation = (log[2]?.payload as any).observation;
      expect(frame).toEqual({ streamId: M1, frameIndex: 1, keyFrame: true, evidence: observation.screenshot });
      expect(log).toEqual([
        { sequence: 1, requestId: expect.any(Number), deviceId: "fake-1", payload: { type: "sessionStarted" } },
        { sequence: 2, requestId: start.id, deviceId: "fake-1", payload: { type: "mediaStreamStarted", stream: info } },
        { sequence: 3, requestId: cap.id, deviceId: "fake-1", payload: { type: "observationCaptured", observation } },
        { sequence: 4, requestId: cap.id, deviceId: "fake-1", payload: { type: "mediaFrameCaptured", frame } },
      ]);
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 })).result).toEqual({ frame });
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 3 })).error.data).toEqual(
        err("media_frame_out_of_order", "media frame index is not the next expected index", false, {
          expectedFrameIndex: 2,
          frameIndex: 3,
          streamId: M1,
        }),
      );
      const end = c.call("media.stream.end", { streamId: M1 });
      expect((await end.response).result).toEqual({ streamId: M1, frameCount: 1 });
      expect((await c.ask("media.stream.end", { streamId: M1 })).result).toEqual({ streamId: M1, frameCount: 1 });
      // Exact retry still works after the end; the next index does not.
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 })).result).toEqual({ frame });
      // Past the 50 ms rate window, so that the answer is about the ended stream alone.
      await sleep(60);
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 2 })).error.data).toEqual(
        err("media_stream_ended", "media stream is already ended", false, { streamId: M1 }),
      );
      expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).result).toEqual({
        stream: info,
      });
      expect(logOf(s, sessionId, 4)).toEqual([
        {
          sequence: 5,
          requestId: end.id,
          deviceId: "fake-1",
          payload: { type: "mediaStreamEnded", streamId: M1, frameCount: 1 },
        },
      ]);
    }));

  test("media events carry no deviceId when the writing connection did not negotiate device.routing.v1", () =>
    withSession(UNROUTED, async (s, c, sessionId) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "video" });
      const frame = (await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1, durationMs: 40 })).result.frame;
      expect(frame).toEqual({
        streamId: M1,
        frameIndex: 1,
        keyFrame: true,
        durationMs: 40,
        evidence: expect.objectContaining({ mediaType: "image/png" }),
      });
      await c.ask("media.stream.end", { streamId: M1 });
      expect(logOf(s, sessionId).map((e) => [e.payload.type, e.deviceId])).toEqual([
        ["sessionStarted", undefined],
        ["mediaStreamStarted", undefined],
        ["observationCaptured", "fake-1"],
        ["mediaFrameCaptured", undefined],
        ["mediaStreamEnded", undefined],
      ]);
    }));

  test("the kind decides durationMs, and a retry with other metadata is media_frame_retry_conflict", () =>
    withSession(ROUTED, async (_s, c) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" });
      await c.ask("media.stream.start", { streamId: M2, kind: "video" });
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1, durationMs: 0 })).error.data).toEqual(
        err("invalid_media_frame", "screenshot stream frames cannot declare durationMs", false, { streamId: M1 }),
      );
      for (const extra of [{}, { durationMs: 0 }])
        expect((await c.ask("media.stream.capture", { streamId: M2, frameIndex: 1, ...extra })).error.data).toEqual(
          err("invalid_media_frame", "video stream frames require a positive durationMs", false, { streamId: M2 }),
        );
      expect(
        (await c.ask("media.stream.capture", { streamId: M2, frameIndex: 1, durationMs: 33 })).result.frame.durationMs,
      ).toBe(33);
      expect((await c.ask("media.stream.capture", { streamId: M2, frameIndex: 1, durationMs: 34 })).error.data).toEqual(
        err("media_frame_retry_conflict", "frame retry metadata differs from the committed frame", false, {
          frameIndex: 1,
          streamId: M2,
        }),
      );
      expect((await c.ask("media.stream.start", { streamId: M2, kind: "screenshot" })).error.data).toEqual(
        err("media_stream_conflict", "media stream id is already bound to different metadata", false, { streamId: M2 }),
      );
      for (const [method, params] of [
        ["media.stream.capture", { streamId: M3, frameIndex: 1 }],
        ["media.stream.end", { streamId: M3 }],
      ] as const)
        expect((await c.ask(method, params)).error.data).toEqual(
          err("media_stream_not_found", "media stream is not owned by this connection", false, { streamId: M3 }),
        );
    }));

  test("attempts are rate limited from admission, also when the attempt was cancelled, which answers the media variant", () =>
    withSession(ROUTED, async (s, c, sessionId) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" });
      s.driver.hangObserve = true;
      // Admission is synchronous: the capture is in flight once call() returns.
      const cap = c.call("media.stream.capture", { streamId: M1, frameIndex: 1 });
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 })).error.data).toEqual(
        err("media_stream_busy", "another capture is already in flight for this stream", true, { streamId: M1 }),
      );
      expect((await c.ask("media.stream.end", { streamId: M1 })).error.data).toEqual(
        err("media_stream_busy", "media stream capture is still in flight", true, { streamId: M1 }),
      );
      await c.ask("request.cancel", { requestId: cap.id });
      const cancelled = err("request_cancelled", "media capture was cancelled", true, null);
      expect((await cap.response).error.data).toEqual(cancelled);
      expect(logOf(s, sessionId, 2)).toEqual([
        { sequence: 3, requestId: cap.id, deviceId: "fake-1", payload: { type: "error", error: cancelled } },
      ]);
      s.driver.hangObserve = false;
      const limited = (await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 })).error.data;
      expect(limited).toEqual(
        err("media_capture_rate_limited", "media capture rate exceeds the per-stream limit", true, {
          retryAfterMs: expect.any(Number),
          streamId: M1,
        }),
      );
      expect(limited.details.retryAfterMs).toBeGreaterThanOrEqual(1);
      expect(limited.details.retryAfterMs).toBeLessThanOrEqual(50);
      // A client that honours retryAfterMs: waiting is what the rate limit asks of it.
      await sleep(limited.details.retryAfterMs + 5);
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 })).result.frame.frameIndex).toBe(1);
      expect((await c.ask("media.stream.capture", { streamId: M1, frameIndex: 2 })).error.data.code).toBe(
        "media_capture_rate_limited",
      );
    }));

  test("a capture that times out after admission answers the media timeout variant", () =>
    withSession(ROUTED, async (s, c) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" });
      s.driver.hangObserve = true;
      expect(
        (await c.ask("media.stream.capture", { streamId: M1, frameIndex: 1 }, { timeoutMs: 20 })).error.data,
      ).toEqual(err("request_timed_out", "media capture timed out", true, null));
    }));

  test("two streams may be open per connection, eight ids per Session, a thousand frames per stream", () =>
    withSession(ROUTED, async (_s, c) => {
      await c.ask("media.stream.start", { streamId: streamId(1), kind: "screenshot" });
      await c.ask("media.stream.start", { streamId: streamId(2), kind: "screenshot" });
      expect((await c.ask("media.stream.start", { streamId: streamId(3), kind: "screenshot" })).error.data).toEqual(
        err("media_stream_active_limit", "too many media streams are active", true, { limit: 2 }),
      );
      // Frame limit: the table is primed as if a thousand frames had been committed.
      const stream = stateOf(c.conn).media.streams.get(streamId(1));
      if (stream)
        stream.last = {
          streamId: streamId(1),
          frameIndex: 1000,
          keyFrame: true,
          evidence: { id: "sha256:x", mediaType: "image/png", uri: "x", sha256: "x" },
        };
      expect((await c.ask("media.stream.capture", { streamId: streamId(1), frameIndex: 1001 })).error.data).toEqual(
        err("media_stream_frame_limit", "media stream frame limit was reached", false, { limit: 1000 }),
      );
      for (let n = 1; n <= 8; n++) {
        if (n > 2)
          expect(
            (await c.ask("media.stream.start", { streamId: streamId(n), kind: "screenshot" })).result.stream.id,
          ).toBe(streamId(n));
        await c.ask("media.stream.end", { streamId: streamId(n) });
      }
      expect((await c.ask("media.stream.start", { streamId: streamId(9), kind: "screenshot" })).error.data).toEqual(
        err("media_stream_session_limit", "the Session media stream limit was reached", false, { limit: 8 }),
      );
    }));

  test("protected or unknown actions and media capture exclude each other on one connection", () =>
    withSession(ROUTED, async (s, c) => {
      s.driver.hangObserve = true;
      const observing = s.driver.nextObserve();
      const swipe = c.call("device.execute", {
        id: "a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d5",
        name: "swipe",
        arguments: {},
      });
      await observing;
      expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).error.data).toEqual(
        err(
          "media_stream_sensitive_action_in_flight",
          "cannot start media capture while a protected or unknown action is in flight",
          true,
          null,
        ),
      );
      await c.ask("request.cancel", { requestId: swipe.id });
      await swipe.response;
      s.driver.hangObserve = false;
      expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).result.stream.id).toBe(M1);
      expect(
        (await c.ask("device.execute", { id: "a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d6", name: "swipe", arguments: {} }))
          .error.data,
      ).toEqual(
        err(
          "media_stream_protected_action_blocked",
          "protected or unknown actions are disabled while media capture is active",
          true,
          null,
        ),
      );
      expect(
        (await c.ask("device.execute", { id: "a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d7", name: "tap", arguments: {} }))
          .result.callId,
      ).toBe("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d7");
      await c.ask("media.stream.end", { streamId: M1 });
      expect(
        (await c.ask("device.execute", { id: "a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d8", name: "swipe", arguments: {} }))
          .error.data.code,
      ).toBe("unknown_action");
    }));

  test("session.end closes open streams with its request id, waiting at most 1 s for a running capture", () =>
    withSession(ROUTED, async (s, c, sessionId) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" });
      await c.ask("media.stream.start", { streamId: M2, kind: "screenshot" });
      await c.ask("media.stream.capture", { streamId: M2, frameIndex: 1 });
      s.driver.hangObserve = true;
      const cap = c.call("media.stream.capture", { streamId: M1, frameIndex: 1 });
      const before = s.core.log.info(sessionId)?.lastSequence ?? 0;
      const t0 = Date.now();
      expect((await c.ask("session.end")).error.data).toEqual(
        err("media_stream_close_timed_out", "timed out while closing media stream", true, { streamId: M1 }),
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
      expect(s.core.log.info(sessionId)?.lastSequence).toBe(before);
      await c.ask("request.cancel", { requestId: cap.id });
      await cap.response;
      const end = c.call("session.end");
      expect((await end.response).result.state).toBe("ended");
      expect(logOf(s, sessionId, before + 1)).toEqual([
        {
          sequence: before + 2,
          requestId: end.id,
          deviceId: "fake-1",
          payload: { type: "mediaStreamEnded", streamId: M1, frameCount: 0 },
        },
        {
          sequence: before + 3,
          requestId: end.id,
          deviceId: "fake-1",
          payload: { type: "mediaStreamEnded", streamId: M2, frameCount: 1 },
        },
        {
          sequence: before + 4,
          requestId: end.id,
          deviceId: "fake-1",
          payload: { type: "sessionEnded", outcome: "completed", reason: null },
        },
      ]);
      // The table went with the Session: the ids are unknown now, and free again in the next one.
      await c.ask("session.start");
      expect((await c.ask("media.stream.end", { streamId: M1 })).error.data.code).toBe("media_stream_not_found");
    }));

  test("closing the connection closes its open streams without a request id, then ends the Session", () =>
    withSession(ROUTED, async (s, c, sessionId) => {
      await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" });
      await s.dispatcher.close(c.conn, "RPC connection closed");
      expect(logOf(s, sessionId, 2)).toEqual([
        {
          sequence: 3,
          requestId: undefined,
          deviceId: "fake-1",
          payload: { type: "mediaStreamEnded", streamId: M1, frameCount: 0 },
        },
        {
          sequence: 4,
          requestId: undefined,
          deviceId: "fake-1",
          payload: { type: "sessionEnded", outcome: "shutdown", reason: "RPC connection closed" },
        },
      ]);
      expect(
        s.core.log
          .read(sessionId)
          .slice(2)
          .every((e) => !("requestId" in e)),
      ).toBe(true);
    }));

  test("media.stream.start needs a Session, and is unavailable when the runtime screenshot policy is omit", async () => {
    const s = await coreHarness();
    try {
      const c = await s.connect(ROUTED);
      expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).error.data.code).toBe(
        "session_required",
      );
    } finally {
      s.cleanup();
    }
    await withSession(
      ROUTED,
      async (_s, c) => {
        expect((await c.ask("media.stream.start", { streamId: M1, kind: "screenshot" })).error.data).toEqual(
          err("method_not_found", "method is not available: media.stream.start", false, {
            method: "media.stream.start",
            requiredFeature: "media.stream.v1",
          }),
        );
      },
      "omit",
    );
  });
});
