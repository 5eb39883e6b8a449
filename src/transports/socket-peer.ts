import type { Dispatcher } from "../rpc/dispatcher.ts";
import { Connection } from "../rpc/connection.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import { errorObject } from "../protocol/errors.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import { LineSplitter, MAX_LINE_BYTES, decodeUtf8Line, type Frame } from "../rpc/ndjson.ts";
import type { Logger } from "../rpc/rpc-error.ts";
import { type ByteSink, FrameWriter } from "./frame-writer.ts";

/** Received bytes a connection may hold while it is not processing input; past this it is closed. */
export const MAX_INPUT_QUEUE_BYTES = 4 * 1_048_576;
/** Queued input at which the socket stops reading (when the runtime can), so the cap is rarely reached. */
const INPUT_PAUSE_BYTES = 1_048_576;
/** How long shutdown (and end of input) waits for a client to take the last responses. */
const FLUSH_GRACE_MS = 2_000;

/** What a connection needs of a Bun stream socket (TCP or Unix). */
export interface RawSocket {
  /** Hands bytes to the kernel; returns how many it took (possibly fewer), -1 once closed. */
  write(data: string | Uint8Array): number;
  end(): void;
  terminate(): void;
}

/**
 * Bun 1.4's sockets have pause()/resume() at runtime but not in their types; without them the
 * input queue simply grows up to its cap. Returns false when the runtime lacks them.
 */
export function setReading(socket: RawSocket, reading: boolean): boolean {
  const s = socket as unknown as { pause?: () => void; resume?: () => void };
  const fn = reading ? s.resume : s.pause;
  if (typeof fn !== "function") return false;
  fn.call(socket);
  return true;
}

/** One NDJSON stream connection (TCP or Unix): its Connection, framing, bounded input queue and writer. */
export class Peer {
  readonly conn: Connection;
  readonly sink: SocketSink;
  private readonly writer: FrameWriter;
  private readonly splitter = new LineSplitter(MAX_LINE_BYTES);
  private inbox: Uint8Array[] = [];
  private inboxBytes = 0;
  private paused = false;
  private pumping: Promise<void> | null = null;
  private eof = false;
  /** Set once no further input may be processed (peer gone, shutdown, overflow). */
  private halted = false;
  private readonly halt = Promise.withResolvers<void>();
  private closing: Promise<void> | null = null;
  private readonly done = Promise.withResolvers<void>();
  /** Resolves once the connection is closed and its socket released. */
  readonly finished = this.done.promise;

  constructor(
    private readonly socket: RawSocket,
    transport: TransportInfo,
    services: ServerServices,
    private readonly dispatcher: Dispatcher,
    private readonly log: Logger,
    /** How log lines name the transport: "TCP", "Unix socket". */
    private readonly label: string,
    /** Called once, when the connection's hello has been answered with success. */
    private onHandshake: (() => void) | null = null,
  ) {
    this.sink = new SocketSink(socket, (backedUp) =>
      this.log.debug({}, backedUp ? `${label} output backed up; input waits until the client reads` : `${label} output drained`),
    );
    // The socket failed under a write: nobody can read answers any more, like a closed socket.
    this.writer = new FrameWriter(this.sink, (err) => this.gone(err));
    this.conn = new Connection(transport, services, (frame) => this.writer.write(frame));
  }

  receive(chunk: Uint8Array): void {
    if (this.halted || this.eof) return;
    this.inbox.push(chunk);
    this.inboxBytes += chunk.length;
    if (this.inboxBytes > MAX_INPUT_QUEUE_BYTES) {
      this.log.warn({ queuedBytes: this.inboxBytes, limitBytes: MAX_INPUT_QUEUE_BYTES }, `${this.label} input queue overflow while output is backed up; closing the connection`);
      this.stopInput();
      this.sink.fail(new Error("input queue overflow"));
      this.closeConnection("RPC connection closed").then(() => this.release(false));
      return;
    }
    if (this.inboxBytes >= INPUT_PAUSE_BYTES) this.setPaused(true);
    this.pumping ??= this.pump();
  }

  /** The peer half-closed: answer what it sent, then end the connection like EOF on stdio. */
  endOfInput(): void {
    if (this.halted || this.eof) return;
    this.eof = true;
    this.pumping ??= this.pump();
  }

  /** The socket closed or failed: nobody can read answers any more. */
  gone(err: Error | null): void {
    this.sink.fail(err ?? new Error("socket closed"));
    if (this.closing) {
      this.done.resolve();
      return;
    }
    this.log.debug(err ? { err: err.message } : {}, `${this.label} connection closed by the peer`);
    this.stopInput();
    this.closeConnection("RPC connection closed").then(() => this.done.resolve());
  }

  /** Daemon shutdown of this connection. */
  async shutdown(): Promise<void> {
    this.stopInput();
    await this.closeConnection("daemon shutdown");
    await this.release(true);
  }

  private stopInput(): void {
    if (this.halted) return;
    this.halted = true;
    this.inbox = [];
    this.inboxBytes = 0;
    this.halt.resolve();
  }

  /** dispatcher.close exactly once, after the input loop let go of the connection. */
  private closeConnection(reason: "daemon shutdown" | "RPC connection closed"): Promise<void> {
    this.closing ??= (async () => {
      if (this.pumping) await this.pumping;
      await this.dispatcher.close(this.conn, reason);
    })();
    return this.closing;
  }

  /** Flushes what the client still takes (bounded), then closes the socket. */
  private async release(flush: boolean): Promise<void> {
    let flushed = false;
    if (flush && !this.sink.failed) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      flushed = await Promise.race([
        this.writer.drain().then(() => this.sink.idle()).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), FLUSH_GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    if (flushed) this.socket.end();
    else this.socket.terminate();
    this.done.resolve();
  }

  private setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    if (setReading(this.socket, !paused)) this.paused = paused;
  }

  private woken(pending: Promise<void>): Promise<void> {
    return Promise.race([pending, this.halt.promise]);
  }

  /** Processes queued input in order, one line at a time, waiting out inline methods and backpressure. */
  private async pump(): Promise<void> {
    let endOfInput = false;
    try {
      while (!this.halted) {
        const chunk = this.inbox.shift();
        if (chunk === undefined) break;
        this.inboxBytes -= chunk.length;
        if (this.inboxBytes < INPUT_PAUSE_BYTES / 2) this.setPaused(false);
        await this.handle(this.splitter.push(chunk));
      }
      if (this.eof && !this.halted) {
        await this.handle(this.splitter.end());
        endOfInput = !this.halted;
        this.stopInput();
      }
    } catch (err) {
      if (!this.halted) {
        this.log.error({ err }, `${this.label} connection input failed; closing the connection`);
        this.stopInput();
        // Its close handler ends the connection once this loop has returned.
        this.socket.terminate();
      }
    }
    this.pumping = null;
    // Not awaited here: closeConnection waits for this loop to have ended.
    if (endOfInput) void this.closeConnection("RPC connection closed").then(() => this.release(true));
  }

  private async handle(frames: Frame[]): Promise<void> {
    for (const frame of frames) {
      if (this.halted) return;
      if (frame.kind === "oversized") {
        const pending = this.conn.send(
          checkedFailureFrame(
            null,
            errorObject("request_line_too_large", { details: { actualBytesAtLeast: frame.bytesAtLeast, limitBytes: MAX_LINE_BYTES } }),
          ),
        );
        if (pending) await this.woken(pending);
        continue;
      }
      const text = decodeUtf8Line(frame.bytes);
      if (text === null) {
        const pending = this.conn.send(checkedFailureFrame(null, errorObject("request_not_utf8", { details: { reason: "invalidUtf8" } })));
        if (pending) await this.woken(pending);
        continue;
      }
      const pending = this.dispatcher.handleText(this.conn, text);
      if (this.onHandshake && this.conn.phase === "ready") {
        const done = this.onHandshake;
        this.onHandshake = null;
        done();
      }
      if (pending) await this.woken(pending);
    }
  }
}

type QueuedWrite = { bytes: Uint8Array; done: (() => void) | undefined };

/**
 * A Bun socket as a FrameWriter sink. Bun's `write` hands bytes straight to the kernel and returns
 * how many it took (possibly fewer, -1 once closed) without buffering the rest, and reports
 * writability through the listener's `drain` handler; so the unwritten tail is queued here,
 * written on `drain`, and `write` reports false while anything is queued.
 */
export class SocketSink implements ByteSink {
  private queue: QueuedWrite[] = [];
  private drainListeners: (() => void)[] = [];
  private errorListeners: ((err: Error) => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  failed: Error | null = null;

  constructor(
    private readonly socket: RawSocket,
    /** Told when output starts queueing here (true) and when the queue emptied again (false). */
    private readonly onBackpressure: (backedUp: boolean) => void = () => {},
  ) {}

  write(data: string, done?: () => void): boolean {
    if (this.failed) {
      // Output is dropped once the socket failed; a final flush must not wait for it.
      done?.();
      return true;
    }
    if (this.queue.length > 0) {
      this.queue.push({ bytes: Buffer.from(data), done });
      return false;
    }
    const size = Buffer.byteLength(data);
    const n = this.rawWrite(data);
    if (n < 0) return true;
    if (n >= size) {
      done?.();
      return true;
    }
    this.queue.push({ bytes: Buffer.from(data).subarray(n), done });
    this.onBackpressure(true);
    return false;
  }

  once(_event: "drain", listener: () => void): void {
    if (this.queue.length === 0) queueMicrotask(listener);
    else this.drainListeners.push(listener);
  }

  on(_event: "error", listener: (err: Error) => void): void {
    const failed = this.failed;
    if (failed) queueMicrotask(() => listener(failed));
    else this.errorListeners.push(listener);
  }

  /** The socket can take more: write queued bytes in order. */
  onDrain(): void {
    if (this.queue.length === 0) {
      this.notifyIdle();
      return;
    }
    while (this.queue.length > 0 && !this.failed) {
      const head = this.queue[0]!;
      const n = this.rawWrite(head.bytes);
      if (n < 0) return;
      if (n < head.bytes.length) {
        head.bytes = head.bytes.subarray(n);
        return;
      }
      this.queue.shift();
      head.done?.();
    }
    if (this.queue.length === 0 && !this.failed) {
      this.onBackpressure(false);
      this.notifyIdle();
    }
  }

  /** Resolves once nothing is queued (or the socket failed). */
  idle(): Promise<void> {
    if (this.queue.length === 0 || this.failed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The socket is unusable: drop queued output and tell the writer (once). */
  fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    this.queue = [];
    // Asynchronously, so a writer never sees the failure in the middle of its own write call.
    queueMicrotask(() => {
      for (const l of this.errorListeners.splice(0)) l(err);
      this.notifyIdle();
    });
  }

  private notifyIdle(): void {
    for (const l of this.drainListeners.splice(0)) l();
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private rawWrite(data: string | Uint8Array): number {
    let n: number;
    try {
      n = this.socket.write(data);
    } catch (err) {
      n = -1;
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
    if (n < 0) this.fail(new Error("socket closed"));
    return n;
  }
}
