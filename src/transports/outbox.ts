/**
 * The one output queue of every transport. A sink takes what it can right now (a Bun socket
 * hands bytes to the kernel and may take only part of them; a WebSocket takes whole messages
 * while its buffer is under a window; a stream takes a chunk unless it asked for a drain); the
 * rest waits here, in order, and is written when the sink reports it can take more. Waiters
 * learn when the queue is empty again, so an input loop can stop reading while its client is not
 * reading (backpressure), and close paths can flush within a grace.
 */

/** What a sink did with an item. */
export type Offered<T> =
  /** All of it was taken. */
  | { taken: "all" }
  /** Nothing or only part: `rest` is what still has to be written. */
  | { taken: "partial"; rest: T }
  /** The sink is gone (closed, failed, or it dropped the item). */
  | { taken: "closed"; error: Error };

export interface OutboxSink<T> {
  /** Writes what it can of `item` now, without blocking. */
  offer(item: T): Offered<T>;
  /** Resolves once everything taken has left the process, where the sink can tell (a stream's own buffer); optional. */
  settled?(): Promise<void>;
}

export interface OutboxLimits<T> {
  /** How an item counts against `maxBytes`. */
  size(item: T): number;
  /** Queued items or bytes past which `push` answers "overflow" instead of queueing. */
  maxItems?: number;
  maxBytes?: number;
}

export type PushResult = "written" | "queued" | "overflow" | "closed";

export class Outbox<T> {
  private queue: T[] = [];
  private queuedBytes = 0;
  private drainedSignal: { promise: Promise<void>; resolve: () => void } | null = null;
  private failureListeners: ((err: Error) => void)[] = [];
  /** Set once the sink failed: everything queued was dropped and later items are dropped too. */
  failed: Error | null = null;

  constructor(
    private readonly sink: OutboxSink<T>,
    private readonly limits: OutboxLimits<T>,
    /** Told when output starts queueing (true) and when the queue empties again (false). */
    private readonly onBackedUp: (backedUp: boolean) => void = () => {},
  ) {}

  get items(): number {
    return this.queue.length;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  get empty(): boolean {
    return this.queue.length === 0;
  }

  /** Writes `item` now when nothing is queued ahead of it and the sink takes it; otherwise queues it within the limits. */
  push(item: T): PushResult {
    if (this.failed) return "closed";
    if (this.queue.length === 0) {
      const offered = this.sink.offer(item);
      if (offered.taken === "all") return "written";
      if (offered.taken === "closed") {
        this.fail(offered.error);
        return "closed";
      }
      item = offered.rest;
    } else if (this.over(item)) return "overflow";
    this.enqueue(item);
    return "queued";
  }

  /** The sink can take more: write what is queued, in order. */
  writable(): void {
    while (this.queue.length > 0 && !this.failed) {
      const head = this.queue[0] as T;
      const offered = this.sink.offer(head);
      if (offered.taken === "closed") return this.fail(offered.error);
      const size = this.limits.size(head);
      if (offered.taken === "partial") {
        this.queue[0] = offered.rest;
        this.queuedBytes -= size - this.limits.size(offered.rest);
        return;
      }
      this.queue.shift();
      this.queuedBytes -= size;
    }
    if (this.queue.length === 0 && !this.failed) {
      this.onBackedUp(false);
      this.wake();
    }
  }

  /** Resolves once nothing is queued (or the sink failed). */
  drained(): Promise<void> {
    if (this.queue.length === 0 || this.failed) return Promise.resolve();
    // One promise for every writer waiting on this backed-up stretch, not one per write.
    this.drainedSignal ??= Promise.withResolvers<void>();
    return this.drainedSignal.promise;
  }

  /** Resolves once everything pushed has left the process (or the sink failed). */
  async flushed(): Promise<void> {
    await this.drained();
    if (!this.failed) await this.sink.settled?.();
  }

  /** Calls `listener` once when the sink fails (at once, in a microtask, if it already has). */
  onFailure(listener: (err: Error) => void): void {
    const failed = this.failed;
    if (failed) queueMicrotask(() => listener(failed));
    else this.failureListeners.push(listener);
  }

  /** The sink is unusable: drop what is queued, wake the waiters, tell the listeners (once). */
  fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    this.queue = [];
    this.queuedBytes = 0;
    // Asynchronously, so a writer never sees the failure in the middle of its own push.
    queueMicrotask(() => {
      for (const l of this.failureListeners.splice(0)) l(err);
      this.wake();
    });
  }

  /** Hands every queued item to `send`, in order, past the sink's window (the last words before a Close frame). */
  takeAll(send: (item: T) => void): void {
    const items = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    for (const item of items) send(item);
    this.wake();
  }

  /** Drops what is queued (a connection cut on purpose); waiters are woken. */
  clear(): void {
    this.queue = [];
    this.queuedBytes = 0;
    this.wake();
  }

  private over(item: T): boolean {
    const { maxItems, maxBytes } = this.limits;
    if (maxItems !== undefined && this.queue.length >= maxItems) return true;
    return maxBytes !== undefined && this.queuedBytes + this.limits.size(item) > maxBytes;
  }

  private enqueue(item: T): void {
    if (this.queue.length === 0) this.onBackedUp(true);
    this.queue.push(item);
    this.queuedBytes += this.limits.size(item);
  }

  private wake(): void {
    const signal = this.drainedSignal;
    this.drainedSignal = null;
    signal?.resolve();
  }
}

const byteLength = (b: string | Uint8Array) => (typeof b === "string" ? Buffer.byteLength(b) : b.length);

/** Byte sizes for outboxes of socket and stream output. */
export const BYTES: OutboxLimits<string | Uint8Array> = { size: byteLength };

/** A socket whose `write` returns how many bytes the kernel took (possibly fewer), -1 once closed, as Bun's do. */
export interface WritableSocket {
  write(data: string | Uint8Array): number;
}

/** Bun socket output: the unwritten tail of a write stays queued (Bun does not buffer it). */
export function socketSink(socket: WritableSocket): OutboxSink<string | Uint8Array> {
  return {
    offer(data) {
      let n: number;
      try {
        n = socket.write(data);
      } catch (err) {
        return { taken: "closed", error: err instanceof Error ? err : new Error(String(err)) };
      }
      if (n < 0) return { taken: "closed", error: new Error("socket closed") };
      const size = byteLength(data);
      if (n >= size) return { taken: "all" };
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      return { taken: "partial", rest: bytes.subarray(n) };
    },
  };
}

/** What the stream sink needs of a Node writable (process.stdout). */
export interface WritableStreamLike {
  write(data: string | Uint8Array, done?: (err?: Error | null) => void): boolean;
  on(event: "drain", listener: () => void): unknown;
}

/**
 * Node stream output (stdout): the stream buffers a chunk it takes and says, by returning false,
 * that it wants a drain first; until then nothing more is offered to it. The owner calls
 * `outbox.writable()` on the stream's 'drain' and `fail` on its 'error'. A chunk has left the
 * process when its write callback ran (Bun calls an empty write's callback at once, so the
 * callbacks of real writes are counted instead).
 */
export function streamSink(stream: WritableStreamLike): OutboxSink<string | Uint8Array> {
  let wantsDrain = false;
  let unsettled = 0;
  let settledWaiters: (() => void)[] = [];
  stream.on("drain", () => (wantsDrain = false));
  const settledOne = () => {
    if (--unsettled === 0) for (const w of settledWaiters.splice(0)) w();
  };
  return {
    offer(data) {
      if (wantsDrain) return { taken: "partial", rest: data };
      unsettled++;
      wantsDrain = !stream.write(data, settledOne);
      return { taken: "all" };
    },
    settled: () => (unsettled === 0 ? Promise.resolve() : new Promise<void>((resolve) => settledWaiters.push(resolve))),
  };
}

/** What a message sink needs of a Bun ServerWebSocket. */
export interface MessageSocket {
  getBufferedAmount(): number;
  /** Bun: bytes sent, -1 when queued by the runtime under backpressure, 0 when dropped. */
  send(message: string): number;
}

/**
 * WebSocket output: whole messages are handed to Bun while its buffer holds less than
 * `windowBytes` (far below the runtime's own limit, so a send is never dropped); the rest waits
 * here and is sent on the socket's `drain`.
 */
export function messageSink<T>(
  ws: MessageSocket,
  windowBytes: number,
  text: (item: T) => string,
  sent: (item: T) => void = () => {},
): OutboxSink<T> {
  return {
    offer(item) {
      if (ws.getBufferedAmount() >= windowBytes) return { taken: "partial", rest: item };
      if (ws.send(text(item)) === 0) return { taken: "closed", error: new Error("message dropped by the runtime") };
      sent(item);
      return { taken: "all" };
    },
  };
}
