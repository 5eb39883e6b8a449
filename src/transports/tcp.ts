import type { TCPSocketListener } from "bun";
import { loopbackHosts } from "./http-guard.ts";
import { type PublicListenerOptions, startHttpFrontend } from "./http.ts";
import { AcceptTable, DEFAULT_LIMITS, TCP_KEEPALIVE_MS } from "./accept-table.ts";
import { isIpLiteral, isLoopbackAddress } from "./ip-address.ts";
import type { AcceptOptions, Accepted } from "./sniff.ts";

export { isLoopbackAddress } from "./ip-address.ts";

export interface TcpOptions extends PublicListenerOptions {
  host: string;
  port: number;
}

export interface TcpListener {
  /** The bound port (the OS's choice when 0 was asked for). */
  port: number;
  /** Daemon shutdown: stop accepting, close every connection, flush (bounded), close sockets. */
  stop(): Promise<void>;
}

/** The listen address is not one this transport may bind (a configuration error, exit 2). */
export class ListenAddressError extends Error {}

/**
 * Throws ListenAddressError unless `host:port` may be bound: a valid port and a loopback literal,
 * or, with a token configured, any IP literal. Host names are never bound: what they resolve to
 * can change under the daemon.
 */
export function checkListenAddress(host: string, port: number, opts: { token?: boolean } = {}): void {
  if (!isLoopbackAddress(host) && !(opts.token && isIpLiteral(host))) {
    throw new ListenAddressError(
      opts.token
        ? `refusing to listen on ${JSON.stringify(host)}: expected an IP address literal`
        : `refusing to listen on ${JSON.stringify(host)}: only loopback addresses (127.0.0.0/8, ::1) are allowed without authentication; set DEVICERAIL_TOKEN to listen on another address`,
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ListenAddressError(`invalid TCP port ${port}: expected 0…65535`);
}

/**
 * Serves one TCP port (docs/protocol/transport-and-framing.md#ndjson-framing): NDJSON JSON-RPC connections, and connections that begin like HTTP
 * spliced onto the HTTP API and JSON-RPC-over-WebSocket server. Every NDJSON connection has its
 * own handshake state, framing, output queue with backpressure and ordered input processing;
 * connections share the dispatcher (devices, sessions, evidence).
 */
export async function listenTcp(opts: TcpOptions): Promise<TcpListener> {
  const { log } = opts;
  const token = opts.token ?? null;
  checkListenAddress(opts.host, opts.port, { token: token !== null });
  const loopback = isLoopbackAddress(opts.host);
  const { services } = opts;
  // A grant narrows what the token allows, so grants are honoured only where a token is required.
  const grants = token ? (opts.grants ?? null) : null;
  const policy = {
    hosts: null as ReadonlySet<string> | null,
    origins: new Set(opts.allowedOrigins ?? []),
    token,
    grants,
    viewer: opts.viewer ?? null,
  };
  const http = startHttpFrontend({ ...opts, services, policy });
  const accept: AcceptOptions = {
    label: "TCP",
    transport: { kind: "tcp", framing: "ndjson" },
    dispatcher: opts.dispatcher,
    services,
    log,
    token,
    grants,
    httpPath: http.path,
    endOfInputMs: opts.endOfInputMs,
  };
  const table = new AcceptTable(accept, {
    limits: { ...DEFAULT_LIMITS, keepAliveMs: TCP_KEEPALIVE_MS, ...opts.limits },
    log,
    logKey: "tcpConnection",
    // Without a token only loopback is bound, so this is a second line of defence.
    admit: (socket) => {
      if (token || isLoopbackAddress(socket.remoteAddress)) return true;
      log.warn({ remoteAddress: socket.remoteAddress }, "TCP connection from a non-loopback peer refused");
      socket.terminate();
      return false;
    },
  });

  let listener: TCPSocketListener<Accepted | undefined>;
  try {
    listener = Bun.listen<Accepted | undefined>({
      hostname: opts.host.startsWith("[") ? opts.host.slice(1, -1) : opts.host,
      port: opts.port,
      // A client may half-close (shutdown its write side) and still read the answers, like EOF on stdio.
      allowHalfOpen: true,
      data: undefined,
      socket: table.handlers,
    });
  } catch (err) {
    await http.stop();
    throw err;
  }
  const port = listener.port;
  // Synchronously after the bind, so no connection is served before the Host policy is known.
  if (loopback) policy.hosts = loopbackHosts(port);
  log.info(
    { host: opts.host, port, authentication: token ? "token" : "none" },
    "TCP listener accepting (NDJSON, HTTP, WebSocket)",
  );

  return { port, stop: () => table.close(listener, http) };
}
