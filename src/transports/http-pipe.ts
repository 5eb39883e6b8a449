import type { Socket } from "bun";
import { withinGrace } from "../rpc/grace.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { setReading } from "./ndjson-connection.ts";
import { BYTES, Outbox, type OutboxSink, socketSink } from "./outbox.ts";
import type { RawSocket } from "./sniff.ts";

/** Bytes queued toward one side before the other side stops being read. */
const PAUSE_BYTES = 256 * 1024;

/** Output to a socket that may not be connected yet: until then everything waits in the outbox. */
const laterSocketSink = (socket: () => RawSocket | null): OutboxSink<string | Uint8Array> => ({
  offer: (data) => {
    const s = socket();
    return s ? socketSink(s).offer(data) : { taken: "partial", rest: data };
  },
});

/**
 * A public connection that began like HTTP, spliced byte for byte onto the internal HTTP server's
 * Unix socket: Bun's HTTP/1.1 parser and WebSocket implementation then serve it, and the public
 * port stays one port. Each direction is bounded: past PAUSE_BYTES queued toward a side, the
 * other side is no longer read until it drains. It never becomes anything else than HTTP.
 */
export class HttpPipe {
  private back: Socket<HttpPipe> | null = null;
  private readonly toBack = new Outbox(
    laterSocketSink(() => this.back),
    BYTES,
  );
  private readonly toFront: Outbox<string | Uint8Array>;
  private frontEnded = false;
  private backEnded = false;
  /** The server stopped taking bytes (it answered, e.g. 413, and closed its read side): the rest is dropped. */
  private backRefused = false;
  private closed = false;
  private readonly done = Promise.withResolvers<void>();
  /** Resolves once both sides are closed. */
  readonly finished = this.done.promise;

  constructor(
    private readonly front: RawSocket & { shutdown?(): void },
    backPath: string,
    first: Uint8Array,
    private readonly log: Logger,
  ) {
    this.toFront = new Outbox(socketSink(front), BYTES);
    this.toBack.push(first);
    if (this.toBack.bytes >= PAUSE_BYTES) setReading(front, false);
    Bun.connect<HttpPipe>({
      unix: backPath,
      data: this,
      socket: {
        open: (s) => this.backOpened(s),
        data: (_s, chunk) => this.fromBack(chunk),
        drain: () => this.backDrained(),
        end: () => this.backFinished(),
        close: () => this.backFinished(),
        error: (_s, err) => this.fail(err),
      },
    }).catch((err: Error) => this.fail(err));
  }

  /** Bytes from the public client. */
  receive(chunk: Uint8Array): void {
    if (this.closed || this.backRefused) return;
    if (this.toBack.push(chunk) === "closed") return this.refusedByBack();
    if (this.toBack.bytes >= PAUSE_BYTES) setReading(this.front, false);
  }

  /** Answers the client with `response` instead of the internal server (which is cut off), then ends. */
  answerInstead(response: Uint8Array): void {
    if (this.closed) return;
    this.closed = true;
    this.back?.terminate();
    this.toBack.clear();
    this.front.write(response);
    this.front.end();
    this.done.resolve();
  }

  /** The public client half-closed: pass it on once its bytes are through. */
  endOfInput(): void {
    this.frontEnded = true;
    this.passEnd();
  }

  /** The public socket can take more. */
  frontDrained(): void {
    this.toFront.writable();
    if (this.toFront.failed) return this.close();
    if (this.toFront.empty) {
      if (this.back) setReading(this.back, true);
      if (this.backEnded) this.close();
    }
  }

  /** The public socket closed or failed. */
  gone(): void {
    this.close();
  }

  /** Daemon shutdown: the server's last bytes (a WebSocket Close frame) pass for up to `graceMs`, then both sides are cut. */
  async shutdown(graceMs: number): Promise<void> {
    await withinGrace(this.finished, graceMs);
    this.close();
  }

  private backOpened(s: Socket<HttpPipe>): void {
    if (this.closed) {
      s.terminate();
      return;
    }
    this.back = s;
    this.backDrained();
  }

  private fromBack(chunk: Uint8Array): void {
    if (this.closed) return;
    if (this.toFront.push(chunk) === "closed") return this.close();
    if (this.toFront.bytes >= PAUSE_BYTES && this.back) setReading(this.back, false);
  }

  private backDrained(): void {
    if (this.backRefused) return;
    this.toBack.writable();
    if (this.toBack.failed) return this.refusedByBack();
    if (this.toBack.empty) {
      setReading(this.front, true);
      this.passEnd();
    }
  }

  /** Its answer may still be on the way: keep reading it until the server closes. */
  private refusedByBack(): void {
    this.backRefused = true;
    this.toBack.clear();
    setReading(this.front, true);
  }

  private passEnd(): void {
    if (this.frontEnded && this.back && this.toBack.empty) this.back.shutdown();
  }

  /** The HTTP server closed its side: the client gets what is queued, then the connection ends. */
  private backFinished(): void {
    this.backEnded = true;
    if (this.toFront.empty) this.close();
  }

  private fail(err: Error): void {
    if (!this.closed) this.log.debug({ err: err.message }, "HTTP connection to the internal server failed");
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    const clean = this.toFront.empty;
    this.back?.terminate();
    if (clean) this.front.end();
    else this.front.terminate();
    this.done.resolve();
  }
}
