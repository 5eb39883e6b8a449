import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import type { Logger } from "../rpc/rpc-error.ts";
import { HttpPipe } from "./http-pipe.ts";
import { Peer, type RawSocket } from "./socket-peer.ts";
import { type AccessToken, MAX_TOKEN_LINE_BYTES, TOKEN_LINE_PREFIX } from "./token.ts";

/** How long a connection may take to authenticate when a token is configured. */
export const AUTH_TIMEOUT_MS = 5_000;
/** How long an HTTP connection may take to pass its server's last bytes at shutdown. */
const HTTP_SHUTDOWN_GRACE_MS = 2_000;

export interface AcceptOptions {
  /** How log lines name the transport: "TCP", "Unix socket". */
  label: string;
  transport: TransportInfo;
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
  token: AccessToken | null;
  /** The internal HTTP server's socket path that connections beginning like HTTP are spliced onto. */
  httpPath: string;
}

export type Protocol = "ndjson" | "http" | "token" | "refuse" | "undecided";

const PREFIX = new TextEncoder().encode(TOKEN_LINE_PREFIX);
const isLetter = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
const isJsonStart = (b: number) => b === 0x7b || b === 0x5b || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/**
 * What the first bytes of a connection say it speaks: `{`, `[` or whitespace is NDJSON; the token
 * line's prefix is NDJSON after authentication; any other ASCII letter is an HTTP request line (so
 * a browser's request, whatever its body, is only ever parsed as HTTP); anything else is refused.
 */
export function classify(head: Uint8Array): Protocol {
  if (head.length === 0) return "undecided";
  const first = head[0] as number;
  if (isJsonStart(first)) return "ndjson";
  if (!isLetter(first)) return "refuse";
  const n = Math.min(head.length, PREFIX.length);
  for (let i = 0; i < n; i++) if (head[i] !== PREFIX[i]) return "http";
  return head.length >= PREFIX.length ? "token" : "undecided";
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/**
 * One accepted stream connection until it is routed: buffers the first bytes, decides the
 * protocol (and checks the token line when a token is configured), then hands every later event
 * to the NDJSON Peer or the HTTP pipe it became.
 */
export class Accepted {
  private head: Uint8Array = new Uint8Array(0);
  private route: Peer | HttpPipe | null = null;
  private refused = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly done = Promise.withResolvers<void>();
  /** Resolves once the connection is closed, whatever it became. */
  readonly finished = this.done.promise;

  constructor(
    private readonly socket: RawSocket,
    private readonly opts: AcceptOptions,
    private readonly log: Logger,
  ) {
    // Only with a token: without one, an NDJSON client may stay idle before its hello as before.
    if (opts.token) this.timer = setTimeout(() => this.refuse("no authentication within 5 s"), AUTH_TIMEOUT_MS);
  }

  receive(chunk: Uint8Array): void {
    if (this.refused) return;
    if (this.route) return this.route.receive(chunk);
    this.head = concat(this.head, chunk);
    switch (classify(this.head)) {
      case "undecided":
        return;
      case "refuse":
        return this.refuse("the first byte is neither JSON nor an HTTP request line");
      case "http":
        return this.becomeHttp();
      case "ndjson":
        if (this.opts.token) return this.refuse("authentication required: the first line must be the token line");
        return this.becomeNdjson(this.head);
      case "token":
        return this.checkTokenLine();
    }
  }

  endOfInput(): void {
    if (this.route) this.route.endOfInput();
    else this.refuse(null);
  }

  drain(): void {
    if (this.route instanceof Peer) this.route.sink.onDrain();
    else this.route?.frontDrained();
  }

  gone(err: Error | null): void {
    this.clearTimer();
    if (this.route) this.route.gone(err);
    else {
      this.refused = true;
      this.done.resolve();
    }
  }

  /** Daemon shutdown: NDJSON connections end gracefully; HTTP ones end when their server has stopped (bounded). */
  async shutdown(): Promise<void> {
    this.clearTimer();
    if (this.route instanceof Peer) await this.route.shutdown();
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
    let line = new TextDecoder().decode(this.head.subarray(PREFIX.length, nl));
    if (line.endsWith("\r")) line = line.slice(0, -1);
    // The value is never logged, matched or not.
    if (!this.opts.token) return this.refuse("a token line was sent but no token is configured");
    if (!this.opts.token.matches(line)) return this.refuse("authentication failed: wrong token");
    this.becomeNdjson(this.head.subarray(nl + 1));
  }

  private becomeNdjson(rest: Uint8Array): void {
    this.clearTimer();
    const peer = new Peer(this.socket, this.opts.transport, this.opts.services, this.opts.dispatcher, this.log, this.opts.label);
    this.route = peer;
    this.head = new Uint8Array(0);
    peer.finished.then(() => this.done.resolve());
    if (rest.length > 0) peer.receive(rest);
  }

  private becomeHttp(): void {
    this.clearTimer();
    const pipe = new HttpPipe(this.socket, this.opts.httpPath, this.head, this.log);
    this.route = pipe;
    this.head = new Uint8Array(0);
    pipe.finished.then(() => this.done.resolve());
  }

  private refuse(why: string | null): void {
    if (this.refused) return;
    this.refused = true;
    this.clearTimer();
    if (why) this.log.warn({ reason: why }, `${this.opts.label} connection refused`);
    this.socket.terminate();
    this.done.resolve();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
