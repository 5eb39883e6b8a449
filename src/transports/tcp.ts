import type { Socket, TCPSocketListener } from "bun";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import { Connection } from "../rpc/connection.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import { errorObject } from "../protocol/errors.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import { LineSplitter, MAX_LINE_BYTES, decodeUtf8Line, type Frame } from "../rpc/ndjson.ts";
import type { Logger } from "../rpc/rpc-error.ts";
import { type ByteSink, FrameWriter } from "./frame-writer.ts";

export interface TcpOptions {
  host: string;
  port: number;
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
}

export interface TcpListener {
  /** The bound port (the OS's choice when 0 was asked for). */
  port: number;
  /** Daemon shutdown: stop accepting, close every connection, flush (bounded), close sockets. */
  stop(): Promise<void>;
}

/** The listen address is not one this transport may bind (a configuration error, exit 2). */
export class ListenAddressError extends Error {}

/** Simultaneous connections (10 limits); further ones are accepted and closed at once. */
export const MAX_TCP_CONNECTIONS = 64;
/** Received bytes a connection may hold while it is not processing input; past this it is closed. */
export const MAX_INPUT_QUEUE_BYTES = 4 * 1_048_576;
/** Queued input at which the socket stops reading (when the runtime can), so the cap is rarely reached. */
const INPUT_PAUSE_BYTES = 1_048_576;
/** How long shutdown (and end of input) waits for a client to take the last responses. */
const FLUSH_GRACE_MS = 2_000;

/** True for a loopback address literal: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isLoopbackV4(bare)) return true;
  if (!bare.includes(":")) return false;
  let normalized: string;
  try {
    // The URL parser canonicalises IPv6 literals (0:0:0:0:0:0:0:1 → ::1, ::ffff:7f00:1 for mapped IPv4).
    normalized = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return false;
  }
  if (normalized === "::1") return true;
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(normalized);
  return mapped !== null && parseInt(mapped[1]!, 16) >> 8 === 127;
}

function isLoopbackV4(address: string): boolean {
  const parts = address.split(".");
  if (parts.length !== 4) return false;
  if (!parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return false;
  return parts[0] === "127";
}

/** Throws ListenAddressError unless `host:port` may be bound: a loopback literal and a valid port. */
export function checkListenAddress(host: string, port: number): void {
  if (!isLoopbackAddress(host)) {
    throw new ListenAddressError(
      `refusing to listen on ${JSON.stringify(host)}: only loopback addresses (127.0.0.0/8, ::1) are allowed without authentication`,
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ListenAddressError(`invalid TCP port ${port}: expected 0…65535`);
}

/**
 * Serves NDJSON JSON-RPC connections on a loopback TCP listener (01 §2). Every connection has its
 * own handshake state, framing, output queue with backpressure and ordered input processing;
 * connections share the dispatcher (devices, sessions, evidence).
 */
export async function listenTcp(opts: TcpOptions): Promise<TcpListener> {
  const { dispatcher, log } = opts;
  checkListenAddress(opts.host, opts.port);
  // events.stream.v1 belongs to stdio connections only (01 §2), whatever the daemon has running.
  const services: ServerServices = { ...opts.services, eventStreamListener: false };
  const peers = new Set<Peer>();
  let stopping = false;
  let nextSerial = 1;

  const listener: TCPSocketListener<Peer | undefined> = Bun.listen<Peer | undefined>({
    hostname: opts.host.startsWith("[") ? opts.host.slice(1, -1) : opts.host,
    port: opts.port,
    // A client may half-close (shutdown its write side) and still read the answers, like EOF on stdio.
    allowHalfOpen: true,
    data: undefined,
    socket: {
      open(socket) {
        if (stopping) {
          socket.terminate();
          return;
        }
        if (!isLoopbackAddress(socket.remoteAddress)) {
          log.warn({ remoteAddress: socket.remoteAddress }, "TCP connection from a non-loopback peer refused");
          socket.terminate();
          return;
        }
        if (peers.size >= MAX_TCP_CONNECTIONS) {
          log.warn({ limit: MAX_TCP_CONNECTIONS, remotePort: socket.remotePort }, "TCP connection limit reached; closing the new connection");
          socket.end();
          return;
        }
        const serial = nextSerial++;
        const peer = new Peer(socket, services, dispatcher, log.child({ tcpConnection: serial }));
        socket.data = peer;
        peers.add(peer);
        peer.finished.then(() => peers.delete(peer));
        log.debug({ remotePort: socket.remotePort, open: peers.size }, "TCP connection opened");
      },
      data(socket, chunk) {
        socket.data?.receive(chunk);
      },
      drain(socket) {
        socket.data?.sink.onDrain();
      },
      end(socket) {
        socket.data?.endOfInput();
      },
      error(socket, err) {
        socket.data?.gone(err);
      },
      close(socket, err) {
        socket.data?.gone(err ?? null);
      },
    },
  });
  const port = listener.port;
  log.info({ host: opts.host, port }, "TCP listener accepting");

  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      // Stop accepting; open connections are ended below, after their last answers.
      listener.stop(false);
      const open = [...peers];
      log.info({ connections: open.length }, "TCP listener stopping");
      await Promise.all(open.map((p) => p.shutdown()));
      listener.stop(true);
    })();
    return stopped;
  };
  return { port, stop };
}

/** One TCP connection: its Connection, framing, bounded input queue and writer. */
class Peer {
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
    private readonly socket: Socket<Peer | undefined>,
    services: ServerServices,
    private readonly dispatcher: Dispatcher,
    private readonly log: Logger,
  ) {
    this.sink = new SocketSink(socket, (backedUp) =>
      this.log.debug({}, backedUp ? "TCP output backed up; input waits until the client reads" : "TCP output drained"),
    );
    // The socket failed under a write: nobody can read answers any more, like a closed socket.
    this.writer = new FrameWriter(this.sink, (err) => this.gone(err));
    this.conn = new Connection({ kind: "tcp", framing: "ndjson" }, services, (frame) => this.writer.write(frame));
  }

  receive(chunk: Uint8Array): void {
    if (this.halted || this.eof) return;
    this.inbox.push(chunk);
    this.inboxBytes += chunk.length;
    if (this.inboxBytes > MAX_INPUT_QUEUE_BYTES) {
      this.log.warn({ queuedBytes: this.inboxBytes, limitBytes: MAX_INPUT_QUEUE_BYTES }, "TCP input queue overflow while output is backed up; closing the connection");
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
    this.log.debug(err ? { err: err.message } : {}, "TCP connection closed by the peer");
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
    // Bun 1.4's sockets have pause()/resume() at runtime but not in their types; without them the
    // input queue simply grows up to its cap.
    const s = this.socket as unknown as { pause?: () => void; resume?: () => void };
    const fn = paused ? s.pause : s.resume;
    if (typeof fn !== "function") return;
    fn.call(this.socket);
    this.paused = paused;
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
        this.log.error({ err }, "TCP connection input failed; closing the connection");
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
class SocketSink implements ByteSink {
  private queue: QueuedWrite[] = [];
  private drainListeners: (() => void)[] = [];
  private errorListeners: ((err: Error) => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  failed: Error | null = null;

  constructor(
    private readonly socket: Socket<Peer | undefined>,
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
