/**
 * The one input loop of every connection: what arrives (byte chunks, WebSocket messages) is
 * queued and handled strictly in order, one item at a time; an item whose handling returns a
 * promise (an inline method still running, output backpressure) is waited for before the next.
 * The queue is bounded: past `pauseBytes` the transport stops reading (resuming at half), and a
 * client that keeps sending past `maxBytes` anyway is overflowing and gets closed.
 */

export interface InputLoopOptions<T> {
  size(item: T): number;
  /** Queued bytes at which reading pauses; it resumes below half of it. */
  pauseBytes: number;
  /** Queued bytes (or items) past which `overflow` is called instead of queueing. */
  maxBytes: number;
  maxItems?: number;
  /** Stops or resumes reading input; false when the runtime cannot (the queue then simply grows to its cap). */
  setReading(reading: boolean): boolean;
  /**
   * Handles one item. `woken` wraps any promise the handler waits on, so that stopping the loop
   * wakes it at once (the connection is gone: nobody will drain its output).
   */
  handle(item: T, woken: <P>(pending: Promise<P>) => Promise<P | void>): void | Promise<void>;
  /** After the last item once input ended (a framing layer flushes its unterminated tail here). */
  atEnd?(woken: <P>(pending: Promise<P>) => Promise<P | void>): void | Promise<void>;
  /** The queue overflowed; the loop has already stopped. */
  overflow(queuedBytes: number): void;
  /** A handler threw (a bug); the loop has already stopped. */
  failed(err: unknown): void;
}

export class InputLoop<T> {
  private queue: T[] = [];
  private queuedBytes = 0;
  private paused = false;
  /** The current run of the loop; `running` says whether it is still going (a run may end synchronously). */
  private pumping: Promise<void> = Promise.resolve();
  private running = false;
  private inputEnded = false;
  /** Set once no further input is handled (stopped, overflowed, failed). */
  stopped = false;
  private readonly halt = Promise.withResolvers<void>();
  private readonly finished = Promise.withResolvers<"ended" | "stopped">();
  /** Resolves once the loop is over: "ended" after the last item of ended input, "stopped" otherwise. */
  readonly done = this.finished.promise;

  constructor(private readonly opts: InputLoopOptions<T>) {}

  private readonly woken = <P>(pending: Promise<P>): Promise<P | void> => Promise.race([pending, this.halt.promise]);

  push(item: T): void {
    if (this.stopped || this.inputEnded) return;
    this.queue.push(item);
    this.queuedBytes += this.opts.size(item);
    const { maxBytes, maxItems, pauseBytes } = this.opts;
    if (this.queuedBytes > maxBytes || (maxItems !== undefined && this.queue.length > maxItems)) {
      const bytes = this.queuedBytes;
      this.stop();
      this.opts.overflow(bytes);
      return;
    }
    if (this.queuedBytes >= pauseBytes) this.setPaused(true);
    this.kick();
  }

  /** No more input will come: handle what is queued, then `atEnd`, then `done` resolves "ended". */
  end(): void {
    if (this.stopped || this.inputEnded) return;
    this.inputEnded = true;
    this.kick();
  }

  /** Handles nothing more; a handler waiting on `woken` is woken. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.halt.resolve();
    if (!this.running) this.finished.resolve("stopped");
  }

  /** Resolves once no handler runs any more. */
  idle(): Promise<void> {
    return this.pumping;
  }

  private kick(): void {
    if (!this.running) this.pumping = this.pump();
  }

  private setPaused(paused: boolean): void {
    if (this.paused !== paused && this.opts.setReading(!paused)) this.paused = paused;
  }

  private async pump(): Promise<void> {
    this.running = true;
    let how: "ended" | "stopped" | null = null;
    try {
      while (!this.stopped) {
        const item = this.queue.shift();
        if (item === undefined) break;
        this.queuedBytes -= this.opts.size(item);
        if (this.queuedBytes < this.opts.pauseBytes / 2) this.setPaused(false);
        const pending = this.opts.handle(item, this.woken);
        if (pending) await this.woken(pending);
      }
      if (this.inputEnded && !this.stopped) {
        const pending = this.opts.atEnd?.(this.woken);
        if (pending) await this.woken(pending);
        if (!this.stopped) {
          this.stopped = true;
          how = "ended";
        }
      }
    } catch (err) {
      if (!this.stopped) {
        this.stop();
        this.opts.failed(err);
      }
    }
    this.running = false;
    if (how) this.finished.resolve(how);
    else if (this.stopped) this.finished.resolve("stopped");
  }
}
