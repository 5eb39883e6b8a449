import type { RpcId } from "../../protocol/ids.ts";
import type { Connection } from "../../rpc/connection.ts";
import { withinGrace } from "../../rpc/grace.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import { routedDeviceId, stateOf } from "../connection-state.ts";
import type { Core } from "../core.ts";
import { MEDIA_LIMITS, type MediaStream, committedFrames } from "./streams.ts";

/** Appends mediaStreamEnded (request id when an RPC caused it) and closes the stream. */
export async function closeStream(
  core: Core,
  conn: Connection,
  stream: MediaStream,
  requestId: RpcId | undefined,
): Promise<void> {
  await core.log.append(stream.sessionId, {
    requestId,
    ...routedDeviceId(conn, stream.deviceId),
    payload: { type: "mediaStreamEnded", streamId: stream.info.id, frameCount: committedFrames(stream) },
  });
  stream.state = "ended";
}

/**
 * Closes every open stream of the connection's Session before it ends (session.end with its
 * request id; connection close and shutdown without): a running capture is awaited at most 1 s
 * (docs/protocol/media-streams.md).
 */
export async function closeSessionStreams(core: Core, conn: Connection, requestId: RpcId | undefined): Promise<void> {
  for (const stream of stateOf(conn).media.openStreams()) {
    if (stream.busy && !(await withinGrace(stream.busy, MEDIA_LIMITS.closeWaitMs)))
      throw new RpcError("media_stream_close_timed_out", { details: { streamId: stream.info.id } });
    if (stream.state !== "ended") await closeStream(core, conn, stream, requestId);
  }
}

/** Forgets the streams of a Session that ended. */
export function clearSessionStreams(conn: Connection): void {
  stateOf(conn).media.streams.clear();
}
