import type { Outbox } from "./outbox.ts";

/** Flush at once past this many batched bytes, so a busy input loop cannot starve the deferred flush. */
const FLUSH_BYTES = 64 * 1024;

/**
 * NDJSON output: batches frames into few writes (pipelined clients send many lines per read) and
 * passes backpressure on: while the outbox holds unwritten output, `write` returns a promise, so
 * the connection stops reading input until the client drains its side.
 */
export class FrameWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  /** Set once the outbox failed (the reader went away, EPIPE): output is dropped from then on. */
  broken: Error | null = null;

  /** `onBroken` runs once when the output fails, so the connection can shut down instead of writing into the void. */
  constructor(
    private readonly out: Outbox<string | Uint8Array>,
    onBroken: (err: Error) => void = () => {},
  ) {
    out.onFailure((err) => {
      this.broken = err;
      this.pending = [];
      this.pendingBytes = 0;
      onBroken(err);
    });
  }

  write(frame: string): void | Promise<void> {
    if (this.broken) return;
    this.pending.push(frame, "\n");
    this.pendingBytes += frame.length + 1;
    if (this.pendingBytes >= FLUSH_BYTES) this.flushNow();
    else if (!this.scheduled) {
      this.scheduled = true;
      // Input that is already buffered is delivered in microtasks, so an idle turn may be far off;
      // the byte threshold above bounds the batch meanwhile.
      setImmediate(() => {
        this.scheduled = false;
        this.flushNow();
      });
    }
    return this.out.empty ? undefined : this.out.drained();
  }

  /** Writes everything batched and resolves once it has left the process (or the output failed). */
  async drain(): Promise<void> {
    this.flushNow();
    await this.out.flushed();
  }

  private flushNow(): void {
    if (this.pending.length === 0 || this.broken) return;
    const data = this.pending.join("");
    this.pending = [];
    this.pendingBytes = 0;
    this.out.push(data);
  }
}
