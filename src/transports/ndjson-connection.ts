import type { Dispatcher } from "../rpc/dispatcher.ts";
import { Connection, type ConnectionGrant } from "../rpc/connection.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import { errorObject } from "../protocol/errors.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import { withinGrace } from "../rpc/grace.ts";
import { abort } from "../rpc/method-steps.ts";
import { LineSplitter, MAX_LINE_BYTES, decodeUtf8Line, type Frame } from "../rpc/ndjson.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { FrameWriter } from "./frame-writer.ts";
import { InputLoop } from "./input-loop.ts";
import { BYTES, Outbox, type OutboxSink } from "./outbox.ts";

/** Received bytes a connection may hold while it is not processing input; past this it is closed. */
export const MAX_INPUT_QUEUE_BYTES = 4 * 1_048_576;
/** Queued input at which reading stops (when the runtime can), so the cap is rarely reached. */
const INPUT_PAUSE_BYTES = 1_048_576;

/** The byte stream under an NDJSON connection: a TCP or Unix socket, or stdin/stdout. */
export interface ByteChannel {
  readonly output: OutboxSink<string | Uint8Array>;
  /** Stops or resumes reading input; false when the runtime cannot. */
  setReading(reading: boolean): boolean;
  /** Closes after what was written (FIN). */
  end(): void;
  /** Cuts the connection now (RST). */
  terminate(): void;
}

/**
 * After end of input, the most a request without timeoutMs may still run (a minute: longer than
 * any device call the drivers bound themselves, short enough that a piped script ends).
 */
export const END_OF_INPUT_MS = 60_000;

export interface NdjsonOptions {
  transport: TransportInfo;
  services: ServerServices;
  dispatcher: Dispatcher;
  log: Logger;
  /** How log lines name the transport: "TCP", "Unix socket", "stdio". */
  label: string;
  /** The reason a Session of this connection ends with when the client goes (stdio: the daemon stops with it). */
  closeReason: "daemon shutdown" | "RPC connection closed";
  /** How long closing waits for the client to take the last responses. */
  flushGraceMs: number;
  /** Called once, when the connection's hello has been answered with success. */
  onHandshake?: () => void;
  /**
   * After the input ended, how long a request without its own deadline (no timeoutMs) may still
   * run before it is cancelled as a signal would cancel it (default END_OF_INPUT_MS).
   */
  endOfInputMs?: number;
  /**
   * Queued input past which the client is overflowing (default MAX_INPUT_QUEUE_BYTES). A channel
   * that is only read when the loop asks for more (stdin) cannot overflow and passes Infinity.
   */
  maxQueuedInputBytes?: number;
  /** What the connection is limited to when it authenticated with a grant's credential. */
  grant?: ConnectionGrant | null;
}

/**
 * One NDJSON JSON-RPC connection over a byte channel: its Connection, line framing, the bounded
 * input loop and the outbox with backpressure. The one implementation behind stdio, TCP and Unix
 * socket clients; each transport only adapts its byte channel and reports what happens to it.
 */
export class NdjsonConnection {
  readonly conn: Connection;
  readonly outbox: Outbox<string | Uint8Array>;
  private readonly writer: FrameWriter;
  private readonly splitter = new LineSplitter(MAX_LINE_BYTES);
  private readonly input: InputLoop<Uint8Array>;
  private onHandshake: (() => void) | null;
  private closing: Promise<void> | null = null;
  private readonly closed = Promise.withResolvers<void>();
  /** Resolves once the connection is closed and its channel released. */
  readonly finished = this.closed.promise;

  constructor(
    private readonly channel: ByteChannel,
    private readonly opts: NdjsonOptions,
  ) {
    const { log, label } = opts;
    this.onHandshake = opts.onHandshake ?? null;
    this.outbox = new Outbox(channel.output, BYTES, (backedUp) =>
      log.debug(
        {},
        backedUp ? `${label} output backed up; input waits until the client reads` : `${label} output drained`,
      ),
    );
    // The output failed under a write: nobody can read answers any more, like a closed socket.
    this.writer = new FrameWriter(this.outbox, (err) => this.gone(err));
    this.conn = new Connection(opts.transport, opts.services, (frame) => this.writer.write(frame));
    this.conn.grant = opts.grant ?? null;
    const maxQueuedInput = opts.maxQueuedInputBytes ?? MAX_INPUT_QUEUE_BYTES;
    this.input = new InputLoop<Uint8Array>({
      size: (chunk) => chunk.length,
      pauseBytes: INPUT_PAUSE_BYTES,
      maxBytes: maxQueuedInput,
      setReading: (reading) => channel.setReading(reading),
      handle: (chunk, woken) => this.handle(this.splitter.push(chunk), woken),
      atEnd: (woken) => this.handle(this.splitter.end(), woken),
      overflow: (queuedBytes) => {
        log.warn(
          { queuedBytes, limitBytes: maxQueuedInput },
          `${label} input queue overflow while output is backed up; closing the connection`,
        );
        this.outbox.fail(new Error("input queue overflow"));
        void this.close(opts.closeReason, false);
      },
      failed: (err) => {
        log.error({ err }, `${label} connection input failed; closing the connection`);
        // Its close handler ends the connection once the loop has let go.
        channel.terminate();
      },
    });
    // Input ended: what was read is answered first, each request within its own deadline
    // (docs/protocol/transport-and-framing.md#shutdown-and-disconnects); a signal or a lost
    // channel meanwhile closes at once, cancelling what still runs.
    void this.input.done.then(async (how) => {
      if (how !== "ended") return;
      // A request without a deadline could run forever (a hung device call); it gets a bounded while.
      const unbounded = setTimeout(() => {
        for (const flight of this.conn.inFlight.values()) if (flight.deadline === null) abort(flight, "shutdown");
      }, opts.endOfInputMs ?? END_OF_INPUT_MS);
      await opts.dispatcher.settled(this.conn);
      clearTimeout(unbounded);
      void this.close(opts.closeReason, true);
    });
  }

  receive(chunk: Uint8Array): void {
    this.input.push(chunk);
  }

  /** The client ended its input (EOF, a half-close): answer what it sent, then close. */
  endOfInput(): void {
    this.input.end();
  }

  /** The channel can take more output. */
  writable(): void {
    this.outbox.writable();
  }

  /** The channel closed or failed: nobody can read answers any more. */
  gone(err: Error | null): void {
    this.outbox.fail(err ?? new Error("connection closed"));
    if (!this.closing)
      this.opts.log.debug(err ? { err: err.message } : {}, `${this.opts.label} connection closed by the peer`);
    void this.close(this.opts.closeReason, false);
  }

  /** Daemon shutdown of this connection: its Session ends, its last answers are flushed (bounded). */
  shutdown(): Promise<void> {
    return this.close("daemon shutdown", true);
  }

  /** dispatcher.close exactly once, after the input loop let go; then the channel is released. */
  private close(reason: "daemon shutdown" | "RPC connection closed", flush: boolean): Promise<void> {
    this.closing ??= (async () => {
      this.input.stop();
      await this.input.idle();
      await this.opts.dispatcher.close(this.conn, reason);
      const flushed = flush && !this.outbox.failed && (await withinGrace(this.writer.drain(), this.opts.flushGraceMs));
      if (flushed) this.channel.end();
      else this.channel.terminate();
      this.closed.resolve();
    })();
    return this.closing;
  }

  private async handle(frames: Frame[], woken: <P>(p: Promise<P>) => Promise<P | void>): Promise<void> {
    for (const frame of frames) {
      if (this.input.stopped) return;
      const pending = this.dispatchFrame(frame);
      if (this.onHandshake && this.conn.phase === "ready") {
        const done = this.onHandshake;
        this.onHandshake = null;
        done();
      }
      if (pending) await woken(pending);
    }
  }

  private dispatchFrame(frame: Frame): void | Promise<void> {
    if (frame.kind === "oversized")
      return this.conn.send(
        checkedFailureFrame(
          null,
          errorObject("request_line_too_large", {
            details: { actualBytesAtLeast: frame.bytesAtLeast, limitBytes: MAX_LINE_BYTES },
          }),
        ),
      );
    const text = decodeUtf8Line(frame.bytes);
    if (text === null)
      return this.conn.send(
        checkedFailureFrame(null, errorObject("request_not_utf8", { details: { reason: "invalidUtf8" } })),
      );
    return this.opts.dispatcher.handleText(this.conn, text);
  }
}

/** Bun 1.4's sockets have pause()/resume() at runtime but not in their types. Returns false when the runtime lacks them. */
export function setReading(socket: object, reading: boolean): boolean {
  const s = socket as { pause?: () => void; resume?: () => void };
  const fn = reading ? s.resume : s.pause;
  if (typeof fn !== "function") return false;
  fn.call(socket);
  return true;
}
