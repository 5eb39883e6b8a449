import { describe, expect, test } from "bun:test";
import { spawnDaemon } from "../support/daemon.ts";
import { LOGIN_SCREEN_SHA } from "../support/mock-screens.ts";

const MOCK_SHA = LOGIN_SCREEN_SHA;
const MOCK_REF = {
  id: `sha256:${MOCK_SHA}`,
  mediaType: "image/png",
  uri: `devicerail://assets/sha256/${MOCK_SHA}`,
  sha256: MOCK_SHA,
};
const M1 = "d9c8b7a6-9584-4736-a251-40f9e8d7c6b5";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("media streams on the Mock over stdio", () => {
  test("start, frames 1..3, exact retry, out of order and end are answered and exported in order", async () => {
    await using d = spawnDaemon();
    expect((await d.hello()).result.features.enabled).toContain("media.stream.v1");
    await d.call("device.connect");
    const sessionId = (await d.call("session.start")).result.id;
    const info = { id: M1, kind: "video", mediaType: "image/png" };
    expect((await d.call("media.stream.start", { streamId: M1, kind: "video" }, { id: "start" })).result).toEqual({
      stream: info,
    });
    const frames = [];
    for (const frameIndex of [1, 2, 3]) {
      // Paced as a client must: the daemon admits one attempt per 50 ms per stream.
      if (frameIndex > 1) await sleep(60);
      const r = await d.call(
        "media.stream.capture",
        { streamId: M1, frameIndex, durationMs: 100 },
        { id: `cap-${frameIndex}` },
      );
      expect(r.result).toEqual({
        frame: { durationMs: 100, evidence: MOCK_REF, frameIndex, keyFrame: true, streamId: M1 },
      });
      frames.push(r.result.frame);
    }
    expect((await d.call("media.stream.capture", { streamId: M1, frameIndex: 3, durationMs: 100 })).result).toEqual({
      frame: frames[2],
    });
    expect(
      (await d.call("media.stream.capture", { streamId: M1, frameIndex: 5, durationMs: 100 })).error?.data,
    ).toEqual({
      code: "media_frame_out_of_order",
      message: "media frame index is not the next expected index",
      retryable: false,
      details: { expectedFrameIndex: 4, frameIndex: 5, streamId: M1 },
    });
    expect((await d.call("media.stream.end", { streamId: M1 }, { id: "end" })).result).toEqual({
      streamId: M1,
      frameCount: 3,
    });
    await d.call("session.end", undefined, { id: "session-end" });

    const { events } = (await d.call("session.export", { sessionId })).result;
    const rows = events.map((e: any) => [e.sequence, e.payload.type, e.requestId, e.deviceId]);
    expect(rows).toEqual([
      [1, "sessionStarted", 3, "mock-1"],
      [2, "mediaStreamStarted", "start", "mock-1"],
      [3, "observationCaptured", "cap-1", "mock-1"],
      [4, "mediaFrameCaptured", "cap-1", "mock-1"],
      [5, "observationCaptured", "cap-2", "mock-1"],
      [6, "mediaFrameCaptured", "cap-2", "mock-1"],
      [7, "observationCaptured", "cap-3", "mock-1"],
      [8, "mediaFrameCaptured", "cap-3", "mock-1"],
      [9, "mediaStreamEnded", "end", "mock-1"],
      [10, "sessionEnded", "session-end", "mock-1"],
    ]);
    expect(events[1].payload).toEqual({ stream: info, type: "mediaStreamStarted" });
    for (const i of [0, 1, 2]) {
      expect(events[3 + 2 * i].payload).toEqual({ frame: frames[i], type: "mediaFrameCaptured" });
      expect(events[2 + 2 * i].payload.observation.screenshot).toEqual(frames[i].evidence);
    }
    expect(events[8].payload).toEqual({ frameCount: 3, streamId: M1, type: "mediaStreamEnded" });
  });

  test("with screenshot policy omit the feature is not offered and the methods are not available", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_SCREENSHOT_POLICY: "omit" } });
    expect((await d.hello()).result.features.enabled).not.toContain("media.stream.v1");
    expect((await d.call("media.stream.start", { streamId: M1, kind: "screenshot" })).error?.data).toEqual({
      code: "method_not_found",
      message: "method is not available: media.stream.start",
      retryable: false,
      details: { method: "media.stream.start", requiredFeature: "media.stream.v1" },
    });
  });
});
