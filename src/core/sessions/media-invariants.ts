import type { TestEventPayload } from "../../protocol/types/event.ts";
import { RpcError } from "../../protocol/rpc-error.ts";

interface StreamRecord {
  mediaType: string;
  frames: number;
  ended: boolean;
}

/**
 * The store's own check of the media lifecycle of one Session (docs/protocol/sessions-and-events.md#invariants): one start per stream id,
 * frames 1, 2, 3, … of the stream's media type while it is open, one end whose frameCount equals
 * the frames. The handlers already keep to it; this catches a bug before it reaches the disk.
 */
export class MediaLedger {
  private readonly streams = new Map<string, StreamRecord>();

  /** Validates `p` and applies it; returns how to undo it if its batch fails. */
  apply(p: TestEventPayload): () => void {
    if (p.type === "mediaStreamStarted") {
      const id = p.stream.id;
      if (this.streams.has(id)) throw new RpcError("duplicate_media_stream", { arg: id, details: { streamId: id } });
      this.streams.set(id, { mediaType: p.stream.mediaType, frames: 0, ended: false });
      return () => this.streams.delete(id);
    }
    if (p.type === "mediaFrameCaptured") {
      const s = this.open(p.frame.streamId);
      if (p.frame.frameIndex !== s.frames + 1) throw new RpcError("store_media_frame_out_of_order");
      if (p.frame.evidence.mediaType !== s.mediaType) throw new RpcError("media_frame_mismatch");
      s.frames++;
      return () => s.frames--;
    }
    if (p.type === "mediaStreamEnded") {
      const s = this.open(p.streamId);
      if (p.frameCount !== s.frames) throw new RpcError("media_frame_count_mismatch");
      s.ended = true;
      return () => {
        s.ended = false;
      };
    }
    return () => {};
  }

  /** Streams started and not ended, with their committed frame count (for recovery). */
  openStreams(): { streamId: string; frameCount: number }[] {
    return [...this.streams].filter(([, s]) => !s.ended).map(([streamId, s]) => ({ streamId, frameCount: s.frames }));
  }

  private open(streamId: string): StreamRecord {
    const s = this.streams.get(streamId);
    if (!s || s.ended) throw new RpcError("media_stream_not_active", { arg: streamId, details: { streamId } });
    return s;
  }
}
