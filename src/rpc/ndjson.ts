/**
 * Byte-level NDJSON framing. Splitting happens before decoding so that a
 * multi-byte character cut by a chunk boundary can never corrupt a line, and
 * so that an oversized line can be measured and dropped without decoding it.
 */

export const MAX_LINE_BYTES = 1_048_576;

export type Frame = { kind: "line"; bytes: Uint8Array } | { kind: "oversized"; bytesAtLeast: number };

const LF = 10;
const CR = 13;
const INITIAL_CAPACITY = 1024;
// A connection that once sent a near-limit line should not pin that much
// memory for the rest of its life.
const RETAINED_CAPACITY = 64 * 1024;
const EMPTY = new Uint8Array(0);

export class LineSplitter {
  private readonly maxLineBytes: number;
  /** Copy of the unfinished line; copied because callers may reuse chunk buffers. */
  private pending: Uint8Array = EMPTY;
  private pendingLength = 0;
  /** Set once the unfinished line is known to be too long; its bytes are then only counted. */
  private discarding = false;
  private discardedBytes = 0;
  private lastDiscardedByte = 0;

  constructor(maxLineBytes: number = MAX_LINE_BYTES) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 0) {
      throw new RangeError(`maxLineBytes must be a non-negative integer, got ${maxLineBytes}`);
    }
    this.maxLineBytes = maxLineBytes;
  }

  /**
   * Feed a chunk; returns the complete frames it finishes, in order.
   * Lines lying entirely within `chunk` are views into it, valid until the
   * caller overwrites the chunk.
   */
  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    const length = chunk.length;
    let from = 0;
    while (from < length) {
      const newline = chunk.indexOf(LF, from);
      if (newline === -1) {
        this.absorb(chunk, from, length);
        break;
      }
      frames.push(this.finishLine(chunk, from, newline));
      from = newline + 1;
    }
    return frames;
  }

  /** End of input: a pending partial line (no trailing LF) is returned as a final frame; empty pending input returns []. */
  end(): Frame[] {
    // Without an LF there is no terminator, so a final CR is ordinary content.
    let frame: Frame | null = null;
    if (this.discarding) {
      frame = { kind: "oversized", bytesAtLeast: this.discardedBytes };
    } else if (this.pendingLength > this.maxLineBytes) {
      frame = { kind: "oversized", bytesAtLeast: this.pendingLength };
    } else if (this.pendingLength > 0) {
      frame = { kind: "line", bytes: this.pending.slice(0, this.pendingLength) };
    }
    this.reset();
    return frame === null ? [] : [frame];
  }

  /** Bytes currently buffered for the unfinished line (for tests of bounded memory). */
  get bufferedBytes(): number {
    return this.pendingLength;
  }

  private finishLine(chunk: Uint8Array, start: number, newline: number): Frame {
    const head = newline - start;
    if (this.discarding) {
      const lastByte = head > 0 ? chunk[newline - 1] : this.lastDiscardedByte;
      const bytesAtLeast = this.discardedBytes + head - (lastByte === CR ? 1 : 0);
      this.reset();
      return { kind: "oversized", bytesAtLeast };
    }
    const buffered = this.pendingLength;
    const lastByte = head > 0 ? chunk[newline - 1] : buffered > 0 ? this.pending[buffered - 1] : 0;
    const contentLength = buffered + head - (lastByte === CR ? 1 : 0);
    if (contentLength > this.maxLineBytes) {
      this.reset();
      return { kind: "oversized", bytesAtLeast: contentLength };
    }
    if (buffered === 0) return { kind: "line", bytes: chunk.subarray(start, start + contentLength) };
    const bytes = new Uint8Array(contentLength);
    bytes.set(this.pending.subarray(0, Math.min(buffered, contentLength)));
    if (contentLength > buffered) bytes.set(chunk.subarray(start, start + contentLength - buffered), buffered);
    this.reset();
    return { kind: "line", bytes };
  }

  /** Keeps the unterminated tail `chunk[from, to)` for the next push. */
  private absorb(chunk: Uint8Array, from: number, to: number): void {
    const tail = to - from;
    if (this.discarding) {
      this.discardedBytes += tail;
      this.lastDiscardedByte = chunk[to - 1]!;
      return;
    }
    const needed = this.pendingLength + tail;
    // One extra byte is tolerated because it may turn out to be the CR of a
    // CRLF terminator, which does not count against the limit.
    if (needed > this.maxLineBytes + 1) {
      this.discarding = true;
      this.discardedBytes = needed;
      this.lastDiscardedByte = chunk[to - 1]!;
      this.pendingLength = 0;
      this.releaseLargeBuffer();
      return;
    }
    if (needed > this.pending.length) {
      const grown = new Uint8Array(
        Math.min(Math.max(needed, this.pending.length * 2, INITIAL_CAPACITY), this.maxLineBytes + 1),
      );
      grown.set(this.pending.subarray(0, this.pendingLength));
      this.pending = grown;
    }
    this.pending.set(chunk.subarray(from, to), this.pendingLength);
    this.pendingLength = needed;
  }

  private reset(): void {
    this.pendingLength = 0;
    this.discarding = false;
    this.discardedBytes = 0;
    this.lastDiscardedByte = 0;
    this.releaseLargeBuffer();
  }

  private releaseLargeBuffer(): void {
    if (this.pending.length > RETAINED_CAPACITY) this.pending = EMPTY;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Strict UTF-8 decode (fatal, BOM kept so it fails JSON parsing); null when the bytes are not valid UTF-8. */
export function decodeUtf8Line(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}
