/** Where encoded frames go: a pipe, a socket. `write` returns false when the OS buffer is full. */
export interface ByteSink {
  write(data: string, done?: (err?: Error | null) => void): boolean;
  once(event: "drain", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** Flush at once past this many queued bytes, so a busy input loop cannot starve the deferred flush. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Batches frames into few writes (pipelined clients send many lines per read) and applies
 * backpressure: while the sink is full, `write` returns a promise, so the connection stops reading
 * input until the client drains its side. Queued output therefore stays bounded.
 */
export class FrameWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  private full: Promise<void> | null = null;
  private releaseFull: (() => void) | null = null;
  /** Set once the sink failed (the reader went away, EPIPE): output is dropped from then on. */
  broken: Error | null = null;

  /** `onBroken` runs once when the sink fails, so the connection can shut down instead of writing into the void. */
  constructor(
    private readonly sink: ByteSink,
    onBroken: (err: Error) => void = () => {},
  ) {
    sink.on("error", (err) => {
      if (this.broken) return;
      this.broken = err;
      this.pending = [];
      this.pendingBytes = 0;
      this.releaseFull?.();
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
      // the byte threshold above bounds the queue meanwhile.
      setImmediate(() => {
        this.scheduled = false;
        this.flushNow();
      });
    }
    return this.full ?? undefined;
  }

  private flushNow(): void {
    if (this.pending.length === 0 || this.broken) return;
    const data = this.pending.join("");
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.sink.write(data) && !this.full) {
      this.full = new Promise((resolve) => {
        this.releaseFull = () => {
          this.full = null;
          this.releaseFull = null;
          resolve();
        };
        this.sink.once("drain", this.releaseFull);
      });
    }
  }

  /** Writes everything queued and resolves once the sink has accepted it. */
  async drain(): Promise<void> {
    const data = this.pending.join("");
    this.pending = [];
    this.pendingBytes = 0;
    if (this.full) await this.full;
    if (data.length === 0 || this.broken) return;
    await new Promise<void>((resolve) => {
      this.sink.write(data, () => resolve());
      // A sink that fails during the final write never calls back; do not wait for it.
      this.sink.on("error", () => resolve());
    });
  }
}
