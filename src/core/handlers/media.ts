import type { RpcId } from "../../protocol/ids.ts";
import { MEDIA_TYPE_PNG } from "../../protocol/types/evidence.ts";
import type { MediaFrame, MediaStreamInfo } from "../../protocol/types/media.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { ParamsOf } from "../../protocol/methods.ts";
import type { HandlerContext, Handlers } from "../../rpc/dispatcher.ts";
import { type Logger, RpcError, methodUnavailable } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import { captureObservation } from "../devices/observe.ts";
import { routedDeviceId, stateOf } from "../connection-state.ts";
import { closeStream } from "../media/session-streams.ts";
import { MEDIA_LIMITS, type MediaStream, committedFrames } from "../media/streams.ts";
import { leasedSession, recordError } from "../session-access.ts";

type MediaMethods = "media.stream.start" | "media.stream.capture" | "media.stream.end";

const START_IN_PROGRESS = "media stream start is already in progress";

/** The stream `streamId` of the connection's active Session, or the −32016 error that says why not. */
function knownStream(ctx: HandlerContext, streamId: string): { stream: MediaStream; sessionId: string } {
  const sessionId = ctx.requireSession();
  const stream = stateOf(ctx.conn).media.streams.get(streamId);
  if (!stream) throw new RpcError("media_stream_not_found", { details: { streamId } });
  if (stream.sessionId !== sessionId) throw new RpcError("media_stream_session_mismatch", { details: { streamId } });
  return { stream, sessionId };
}

/** The media-writer variants of −32007/−32008 (docs/protocol/errors.md, docs/protocol/media-streams.md#cancellation-and-timeouts) when this request was cancelled or timed out. */
function mediaAbortError(ctx: HandlerContext): RpcError | null {
  const e = ctx.abortError();
  if (!e) return null;
  return new RpcError(e.code === "request_timed_out" ? "media_capture_timed_out" : "media_capture_cancelled");
}

export function mediaHandlers(core: Core): Pick<Handlers, MediaMethods> {
  return {
    "media.stream.start": async ({ streamId, kind }, ctx) => {
      const { conn } = ctx;
      if (core.screenshotPolicy !== "capture") throw methodUnavailable("media.stream.start", "media.stream.v1");
      ctx.requireSession();
      const deviceId = ctx.route();
      const sessionId = leasedSession(core, ctx, deviceId);
      const table = stateOf(conn).media;
      const known = table.streams.get(streamId);
      if (known) {
        const same = known.info.kind === kind && known.sessionId === sessionId && known.deviceId === deviceId;
        if (known.state === "starting")
          throw new RpcError(same ? "media_stream_busy" : "media_stream_conflict", {
            message: START_IN_PROGRESS,
            details: { streamId },
          });
        if (same) return { stream: known.info };
        throw new RpcError("media_stream_conflict", { details: { streamId } });
      }
      if (table.hasSensitiveAction()) throw new RpcError("media_stream_sensitive_action_in_flight");
      if (table.openStreams().length >= MEDIA_LIMITS.activePerConnection)
        throw new RpcError("media_stream_active_limit", { details: { limit: MEDIA_LIMITS.activePerConnection } });
      if (table.streams.size >= MEDIA_LIMITS.idsPerSession)
        throw new RpcError("media_stream_session_limit", { details: { limit: MEDIA_LIMITS.idsPerSession } });
      const info: MediaStreamInfo = { id: streamId, kind, mediaType: MEDIA_TYPE_PNG };
      const stream: MediaStream = {
        info,
        sessionId,
        deviceId,
        state: "starting",
        poisoned: false,
        last: null,
        lastAttemptMs: null,
        busy: null,
      };
      table.streams.set(streamId, stream);
      try {
        await core.log.append(sessionId, {
          requestId: ctx.requestId,
          ...routedDeviceId(conn, deviceId),
          payload: { type: "mediaStreamStarted", stream: info },
        });
      } catch (err) {
        table.streams.delete(streamId);
        throw err;
      }
      stream.state = "active";
      return { stream: info };
    },

    "media.stream.capture": async (p, ctx) => {
      const { streamId, frameIndex, durationMs } = p;
      const { stream } = knownStream(ctx, streamId);
      if (stream.info.kind === "screenshot" && durationMs !== undefined)
        throw new RpcError("invalid_media_frame", {
          message: "screenshot stream frames cannot declare durationMs",
          details: { streamId },
        });
      if (stream.info.kind === "video" && !durationMs)
        throw new RpcError("invalid_media_frame", {
          message: "video stream frames require a positive durationMs",
          details: { streamId },
        });
      if (stream.busy) throw new RpcError("media_stream_busy", { details: { streamId } });
      const committed = committedFrames(stream);
      if (stream.last && frameIndex === committed) {
        // The caller's idempotency key: the committed frame again, with no new events.
        if (stream.last.durationMs !== durationMs)
          throw new RpcError("media_frame_retry_conflict", { details: { frameIndex, streamId } });
        return { frame: stream.last };
      }
      if (stream.state === "ended") throw new RpcError("media_stream_ended", { details: { streamId } });
      if (stream.poisoned) throw new RpcError("media_stream_poisoned", { details: { streamId } });
      if (frameIndex !== committed + 1)
        throw new RpcError("media_frame_out_of_order", {
          details: { expectedFrameIndex: committed + 1, frameIndex, streamId },
        });
      if (committed >= MEDIA_LIMITS.framesPerStream)
        throw new RpcError("media_stream_frame_limit", { details: { limit: MEDIA_LIMITS.framesPerStream } });
      const now = Date.now();
      const elapsed = stream.lastAttemptMs === null ? Number.POSITIVE_INFINITY : now - stream.lastAttemptMs;
      if (elapsed < MEDIA_LIMITS.minIntervalMs)
        throw new RpcError("media_capture_rate_limited", {
          details: { retryAfterMs: Math.max(1, MEDIA_LIMITS.minIntervalMs - elapsed), streamId },
        });
      // Recorded at admission, before device work: a failing attempt still counts (docs/protocol/media-streams.md#rate-limit).
      stream.lastAttemptMs = now;
      const release = stateOf(ctx.conn).media.hold(stream);
      try {
        return { frame: await captureFrame(core, ctx, stream, p) };
      } finally {
        release();
      }
    },

    "media.stream.end": async ({ streamId }, ctx) => {
      const { stream } = knownStream(ctx, streamId);
      if (stream.busy)
        throw new RpcError("media_stream_busy", {
          message: "media stream capture is still in flight",
          details: { streamId },
        });
      if (stream.state !== "ended") await closeStream(core, ctx.conn, stream, ctx.requestId);
      return { streamId, frameCount: committedFrames(stream) };
    },
  };
}

/** A full observation through the device path, then its screenshot committed as the next frame (docs/protocol/media-streams.md#capturing-frames). */
async function captureFrame(
  core: Core,
  ctx: HandlerContext,
  stream: MediaStream,
  p: ParamsOf<"media.stream.capture">,
): Promise<MediaFrame> {
  const { conn, requestId } = ctx;
  const streamId = stream.info.id;
  const deviceId = ctx.route();
  if (deviceId !== stream.deviceId) throw new RpcError("media_stream_device_changed", { details: { streamId } });
  const sessionId = leasedSession(core, ctx, deviceId);
  const release = core.devices.begin(sessionId, "observations");
  try {
    // Like routing and lease failures, a failed probe writes no event (docs/protocol/devices-and-actions.md#observing).
    await core.devices.probe(deviceId, ctx).catch((err: unknown) => {
      throw mediaAbortError(ctx) ?? err;
    });
    let captured;
    try {
      captured = await captureObservation(core, deviceId, conn, ctx);
      await core.log.append(sessionId, {
        requestId,
        deviceId,
        payload: { type: "observationCaptured", observation: captured.observation },
        evidence: captured.stored.map((s) => s.row),
      });
    } catch (err) {
      const failure = mediaAbortError(ctx) ?? (err instanceof RpcError ? err : new RpcError("driver_internal_error"));
      if (!(err instanceof RpcError) && !ctx.abortError())
        ctx.log.error({ err }, "media capture observation failed unexpectedly");
      await recordError(core, sessionId, deviceId, ctx, failure);
      throw failure;
    }
    const shot = captured.observation.screenshot;
    if (!shot) throw new RpcError("media_capture_unavailable", { details: { streamId } });
    if (shot.mediaType !== stream.info.mediaType)
      throw new RpcError("media_capture_format_unsupported", { details: { mediaType: shot.mediaType, streamId } });
    const frame: MediaFrame = {
      streamId,
      frameIndex: p.frameIndex,
      keyFrame: true,
      ...(p.durationMs !== undefined ? { durationMs: p.durationMs } : {}),
      evidence: shot,
    };
    const pinned = captured.stored.filter((s) => s.ref.sha256 === shot.sha256).map((s) => s.row);
    try {
      await core.log.append(sessionId, {
        requestId,
        ...routedDeviceId(conn, deviceId),
        payload: { type: "mediaFrameCaptured", frame },
        evidence: pinned,
      });
    } catch (err) {
      await poison(core, conn, stream, requestId, ctx.log);
      throw err;
    }
    stream.last = frame;
    // Committed, yet the RPC still reports the cancellation; a retry of this index returns the frame.
    const aborted = mediaAbortError(ctx);
    if (aborted) throw aborted;
    return frame;
  } finally {
    release();
  }
}

/** An ambiguous frame append: the stream can no longer vouch for its frames and is closed at once. */
async function poison(core: Core, conn: Connection, stream: MediaStream, requestId: RpcId, log: Logger): Promise<void> {
  stream.poisoned = true;
  try {
    await closeStream(core, conn, stream, requestId);
  } catch (err) {
    log.warn({ err: String(err), streamId: stream.info.id }, "could not record the end of a poisoned media stream");
  }
  stream.state = "ended";
}
