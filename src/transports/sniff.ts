import type { ConnectionGrant } from "../rpc/connection.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { BAD_REQUEST_LINE, HEAD_TOO_LARGE, HeadEnd, MAX_HTTP_HEAD_BYTES, REQUEST_LINE } from "./http-head.ts";
import { HttpPipe } from "./http-pipe.ts";
import { refusalLog } from "./log-limiter.ts";
import { type ByteChannel, NdjsonConnection, setReading } from "./ndjson-connection.ts";
import { socketSink } from "./outbox.ts";
import { RELAY, beginsWith, classify } from "./first-bytes.ts";
import { type AccessToken, type GrantIssuer, MAX_TOKEN_LINE_BYTES, TOKEN_LINE_PREFIX } from "./token.ts";

const TOKEN_PREFIX_BYTES = new TextEncoder().encode(TOKEN_LINE_PREFIX).length;

export { type Protocol, classify } from "./first-bytes.ts";

/** How long a connection may take to authenticate when a token is configured. */
export const AUTH_TIMEOUT_MS = 5_000;
/** How long an HTTP connection may take to pass its server's last bytes at shutdown. */
const HTTP_SHUTDOWN_GRACE_MS = 2_000;
/** How long closing an NDJSON connection waits for its client to take the last answers. */
const FLUSH_GRACE_MS = 2_000;

/** What a listener's connection needs of a Bun stream socket (TCP or Unix). */
export interface RawSocket {
  /** Hands bytes to the kernel; returns how many it took (possibly fewer), -1 once closed. */
  write(data: string | Uint8Array): number;
  end(): void;
  terminate(): void;
}

/** A Bun socket as the byte channel of an NDJSON connection. */
export const socketChannel = (socket: RawSocket): ByteChannel => ({
  output: socketSink(socket),
  setReading: (reading) => setReading(socket, reading),
  end: () => socket.end(),
  terminate: () => socket.terminate(),
});

export interface AcceptOptions {
  /** How log lines name the transport: "TCP", "Unix socket". */
  label: string;
  transport: TransportInfo;
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
  token: AccessToken | null;
  /** Credentials other than the token that open a connection limited to a grant (farm allocations). */
  grants?: GrantIssuer | null;
  /** The internal HTTP server's socket path that connections beginning like HTTP are spliced onto. */
  httpPath: string;
  /** After a client half-closes, how long a request without timeoutMs may still run (DEVICERAIL_END_OF_INPUT_MS). */
  endOfInputMs?: number;
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** What the listener asks of a connection's handshake (see AcceptTable). */
export interface Handshake {
  /** How long the connection may take to say hello (NDJSON) or send its first request head (HTTP). */
  handshakeMs: number;
  /** The handshake is done; false when the listener has no room for another working connection. */
  ready(): boolean;
  /** Told when the connection is closed for missing its handshake deadline. */
  timedOut(): void;
}

/**
 * One accepted stream connection until it is routed: buffers the first bytes, decides the
 * protocol (and checks the token line when a token is configured), then hands every later event
 * to the NDJSON connection or the HTTP pipe it became. Until its handshake is done it is pending: it
 * has `handshake.handshakeMs` to finish, and the listener may shed it for a newer one.
 */
export class Accepted {
  private head: Uint8Array = new Uint8Array(0);
  private route: NdjsonConnection | HttpPipe | null = null;
  /** Set once the token line was accepted: what it authenticated as (a grant, or the host's token). */
  private authed: { grant: ConnectionGrant | null } | null = null;
  private refused = false;
  private authTimer: ReturnType<typeof setTimeout> | null = null;
  private handshakeTimer: ReturnType<typeof setTimeout> | null = null;
  /** Set while an HTTP connection waits for the end of its first request head. */
  private httpHead: HeadEnd | null = null;
  private readonly done = Promise.withResolvers<void>();
  /** Resolves once the connection is closed, whatever it became. */
  readonly finished = this.done.promise;

  constructor(
    private readonly socket: RawSocket,
    private readonly opts: AcceptOptions,
    private readonly log: Logger,
    private readonly handshake: Handshake,
  ) {
    if (opts.token) this.authTimer = setTimeout(() => this.refuse("no authentication within 5 s"), AUTH_TIMEOUT_MS);
    this.handshakeTimer = setTimeout(() => {
      this.handshakeTimer = null;
      handshake.timedOut();
      this.quietly(
        this.route instanceof HttpPipe || this.httpHead ? "HTTP request head not complete in time" : "no hello in time",
      );
    }, handshake.handshakeMs);
  }

  receive(chunk: Uint8Array): void {
    if (this.refused) return;
    if (this.route) {
      if (this.httpHead) this.scanHead(chunk);
      if (this.refused) return;
      return this.route.receive(chunk);
    }
    this.head = concat(this.head, chunk);
    this.decide();
  }

  /** Routes the connection once its first bytes say what it speaks. */
  private decide(): void {
    // After the token line, only the relay line may come before NDJSON.
    if (this.authed) {
      const relay = beginsWith(this.head, RELAY);
      if (relay === "maybe") return;
      if (relay === "no") return this.becomeNdjson(this.head, this.authed.grant);
      this.head = this.head.subarray(RELAY.length);
      return this.becomeNdjson(this.head, this.authed.grant, true);
    }
    const kind = classify(this.head);
    switch (kind) {
      case "undecided":
        return;
      case "refuse":
        return this.refuse("the first byte is neither JSON nor an HTTP request line");
      case "http":
        return this.becomeHttp();
      case "relay":
      case "ndjson":
        if (this.opts.token) return this.refuse("authentication required: the first line must be the token line");
        return this.becomeNdjson(
          kind === "relay" ? this.head.subarray(RELAY.length) : this.head,
          null,
          kind === "relay",
        );
      case "token":
        return this.checkTokenLine();
    }
  }

  endOfInput(): void {
    // Authenticated but nothing more: an NDJSON connection whose input ended.
    if (!this.route && this.authed && !this.refused) this.becomeNdjson(this.head, this.authed.grant);
    if (this.route) this.route.endOfInput();
    else this.refuse(null);
  }

  drain(): void {
    if (this.route instanceof NdjsonConnection) this.route.writable();
    else this.route?.frontDrained();
  }

  gone(err: Error | null): void {
    this.clearTimers();
    if (this.route) this.route.gone(err);
    else {
      this.refused = true;
      this.done.resolve();
    }
  }

  /** Daemon shutdown: NDJSON connections end gracefully; HTTP ones end when their server has stopped (bounded). */
  async shutdown(): Promise<void> {
    this.clearTimers();
    if (this.route instanceof NdjsonConnection) await this.route.shutdown();
    else if (this.route) await this.route.shutdown(HTTP_SHUTDOWN_GRACE_MS);
    else this.refuse(null);
  }

  private checkTokenLine(): void {
    const nl = this.head.indexOf(0x0a);
    if (nl < 0) {
      if (this.head.length > MAX_TOKEN_LINE_BYTES) this.refuse("the token line is too long");
      return;
    }
    if (nl > MAX_TOKEN_LINE_BYTES) return this.refuse("the token line is too long");
    let line = new TextDecoder().decode(this.head.subarray(TOKEN_PREFIX_BYTES, nl));
    if (line.endsWith("\r")) line = line.slice(0, -1);
    // The value is never logged, matched or not.
    if (!this.opts.token) return this.refuse("a token line was sent but no token is configured");
    const host = this.opts.token.matches(line);
    const grant = host ? null : (this.opts.grants?.(line) ?? null);
    if (!host && !grant) return this.refuse("authentication failed: wrong token");
    this.clearAuthTimer();
    this.authed = { grant };
    this.head = this.head.subarray(nl + 1);
    this.decide();
  }

  /** The listener needs the room for a newer connection (this one is the oldest pending). */
  shed(): void {
    this.quietly("shed for a newer connection");
  }

  /** `relayed`: the stdio relay line came first; the client behind `devicerail serve` speaks stdio. */
  private becomeNdjson(rest: Uint8Array, grant: ConnectionGrant | null = null, relayed = false): void {
    this.clearAuthTimer();
    const peer = new NdjsonConnection(socketChannel(this.socket), {
      transport: relayed ? { kind: "stdio", framing: "ndjson" } : this.opts.transport,
      services: this.opts.services,
      dispatcher: this.opts.dispatcher,
      log: this.log,
      label: this.opts.label,
      closeReason: "RPC connection closed",
      flushGraceMs: FLUSH_GRACE_MS,
      onHandshake: () => this.handshakeDone(),
      grant,
      endOfInputMs: this.opts.endOfInputMs,
    });
    this.route = peer;
    this.head = new Uint8Array(0);
    peer.finished.then(() => this.done.resolve());
    if (rest.length > 0) peer.receive(rest);
  }

  private becomeHttp(): void {
    this.clearAuthTimer();
    const first = this.head;
    this.head = new Uint8Array(0);
    const pipe = new HttpPipe(this.socket, this.opts.httpPath, first, this.log);
    this.route = pipe;
    pipe.finished.then(() => this.done.resolve());
    this.httpHead = new HeadEnd();
    this.scanHead(first);
  }

  private scanHead(chunk: Uint8Array): void {
    const head = this.httpHead as HeadEnd;
    const complete = head.push(chunk);
    if (head.requestLine !== null && !REQUEST_LINE.test(head.requestLine))
      return this.answerHead(BAD_REQUEST_LINE, "the HTTP request line is malformed");
    if (complete) {
      this.httpHead = null;
      this.handshakeDone();
    } else if (head.bytes > MAX_HTTP_HEAD_BYTES) this.answerHead(HEAD_TOO_LARGE, "the HTTP request head is too large");
  }

  /** Answered from here: the internal server has not seen a whole head, so it has not answered. */
  private answerHead(response: Uint8Array, why: string): void {
    const pipe = this.route as HttpPipe;
    this.refused = true;
    this.httpHead = null;
    this.clearTimers();
    refusalLog(this.opts.log).warn({ reason: why }, `${this.opts.label} connection refused`, this.log);
    pipe.answerInstead(response);
    this.done.resolve();
  }

  private handshakeDone(): void {
    if (this.handshakeTimer === null) return;
    clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
    if (!this.handshake.ready()) this.quietly("working connection limit reached");
  }

  /** Closes without a log line of its own: the listener sums these up (a flood must not flood the log). */
  private quietly(why: string): void {
    if (this.refused) return;
    this.log.debug({ reason: why }, `${this.opts.label} connection closed`);
    // Before a route exists, nothing else will resolve `done`: that is a refusal without its log line.
    if (!this.route) return this.refuse(null);
    this.clearTimers();
    this.socket.terminate();
  }

  private refuse(why: string | null): void {
    if (this.refused) return;
    this.refused = true;
    this.clearTimers();
    if (why) refusalLog(this.opts.log).warn({ reason: why }, `${this.opts.label} connection refused`, this.log);
    this.socket.terminate();
    this.done.resolve();
  }

  private clearAuthTimer(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = null;
  }

  private clearTimers(): void {
    this.clearAuthTimer();
    if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
  }
}
