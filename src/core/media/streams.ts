import type { MediaFrame, MediaStreamInfo } from "../../protocol/types/media.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import { once } from "../once.ts";

/** The media limits of docs/protocol/limits.md#media-streams. */
export const MEDIA_LIMITS = {
  activePerConnection: 2,
  idsPerSession: 8,
  framesPerStream: 1000,
  minIntervalMs: 50,
  closeWaitMs: 1000,
} as const;

/** One stream id of the connection's active Session (docs/protocol/media-streams.md#stream-states). */
export interface MediaStream {
  readonly info: MediaStreamInfo;
  readonly sessionId: string;
  readonly deviceId: string;
  state: "starting" | "active" | "ended";
  /** An ambiguous frame append closed the stream; kept so the cause stays visible. */
  poisoned: boolean;
  /** The last committed frame; frames are numbered 1, 2, 3, … so its index is the committed count. */
  last: MediaFrame | null;
  /** When the previous capture attempt was admitted (the rate limit counts failed attempts too). */
  lastAttemptMs: number | null;
  /** Settles when the running capture finishes; null while none runs. */
  busy: Promise<void> | null;
}

export const committedFrames = (s: MediaStream): number => s.last?.frameIndex ?? 0;

/**
 * The per-connection stream table (docs/protocol/media-streams.md#stream-states), cleared when the Session ends, and the count of
 * protected/unknown actions in flight that media capture must not overlap (docs/protocol/media-streams.md).
 */
export class MediaTable {
  readonly streams = new Map<string, MediaStream>();
  private sensitiveActions = 0;

  openStreams(): MediaStream[] {
    return [...this.streams.values()].filter((s) => s.state !== "ended");
  }

  hasSensitiveAction(): boolean {
    return this.sensitiveActions > 0;
  }

  /** Registers a protected/unknown action; refused while a stream is active or starting. */
  beginSensitiveAction(): () => void {
    if (this.openStreams().length > 0) throw new RpcError("media_stream_protected_action_blocked");
    this.sensitiveActions++;
    return once(() => {
      this.sensitiveActions--;
    });
  }

  /** Marks a capture as running on `stream` until the returned release runs. */
  hold(stream: MediaStream): () => void {
    const { promise, resolve } = Promise.withResolvers<void>();
    stream.busy = promise;
    return () => {
      stream.busy = null;
      resolve();
    };
  }
}
