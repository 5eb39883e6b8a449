import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import { errorObject } from "../protocol/errors.ts";
import { type ControlSocket, controlWebSocket, newControlSocket } from "./control-websocket.ts";
import type { ConnectionLimits } from "./accept-table.ts";
import { type HttpPolicy, admit, grantOf } from "./http-guard.ts";
import { MAX_BODY_BYTES, checkJsonContentType, errorResponse, readBody, refusal } from "../protocol/http.ts";
import { HTTP_FOLDER_PREFIX, reclaimDeadFolders } from "./http-folders.ts";
import { refusalLog } from "./log-limiter.ts";
import type { AccessToken, GrantIssuer } from "./token.ts";
import type { ViewerPasses } from "./viewer-passes.ts";
import type { Logger } from "../protocol/rpc-error.ts";

/**
 * What answers the HTTP requests that pass the guard, other than the JSON-RPC WebSocket: the
 * server's route table (server/serve.ts). Each listener gets its own (`routes()`), stopped with it.
 */
export interface HttpRoutes {
  /** The answer, or null when no route takes the request (a 404 then). */
  route(req: Request, url: URL, body: string): Promise<Response> | null;
  /** Ends what the routes hold open (in-process connections, streamed bodies). */
  stop(): Promise<void>;
}

/** RFC 3986 authority without userinfo: a bracketed IP literal or a reg-name, then an optional port. */
const AUTHORITY =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2}){0,255})(?::[0-9]{0,5})?$/;

/** What a public listener (TCP, Unix socket) is given beyond its address: the HTTP side's needs, the token and the allowed Origins. */
export interface PublicListenerOptions {
  log: Logger;
  /** Builds the listener's HTTP routes. */
  routes: () => HttpRoutes;
  /** The JSON-RPC connections' dispatcher and services (the HTTP API reaches them only through `connect`). */
  dispatcher: Dispatcher;
  services: ServerServices;
  /** When set, every connection authenticates first (and on TCP, non-loopback addresses may be bound). */
  token?: AccessToken | null;
  /** Credentials besides the token that open a connection limited to one device (farm allocations). */
  grants?: GrantIssuer | null;
  /** The live report's browser passes, shared by every listener of the daemon. */
  viewer?: ViewerPasses | null;
  /** Exact Origins the HTTP side accepts (DEVICERAIL_ALLOWED_ORIGINS). */
  allowedOrigins?: readonly string[];
  /** After a client half-closes, how long a request without timeoutMs may still run. */
  endOfInputMs?: number;
  /** Overrides of the listener's connection limits (handshake deadline, TCP keepalive). */
  limits?: Partial<Pick<ConnectionLimits, "handshakeMs" | "keepAliveMs">>;
}

export interface HttpFrontend {
  /** The private Unix socket public connections that begin like HTTP are spliced onto. */
  readonly path: string;
  /** Mutable until the first connection: the public listener sets its Host policy once it knows its port. */
  readonly policy: HttpPolicy;
  stop(): Promise<void>;
}

/**
 * The HTTP side of a public listener: Bun.serve on a Unix socket in a fresh 0700 temporary
 * directory, so only this process (and root) can reach it except through the public port's
 * checks. Every request passes the browser protection of http-guard before any route runs.
 */
export function startHttpFrontend(opts: {
  log: Logger;
  routes: () => HttpRoutes;
  dispatcher: Dispatcher;
  services: ServerServices;
  policy: HttpPolicy;
}): HttpFrontend {
  const { log, policy } = opts;
  void reclaimDeadFolders(tmpdir(), log);
  const dir = mkdtempSync(join(tmpdir(), `${HTTP_FOLDER_PREFIX}${process.pid}-`));
  const path = join(dir, "http.sock");
  const routes = opts.routes();
  const sockets = controlWebSocket(opts);
  let stopping = false;

  const fetch = async (req: Request, server: Server<ControlSocket>): Promise<Response | undefined> => {
    if (stopping)
      return errorResponse(503, JSON.stringify(errorObject("event_store_shutting_down")), { Connection: "close" });
    // Nothing here may throw on a malformed head: a Host that is no authority makes Bun's URL unparsable.
    // HTTP/1.0 without Host gives a relative URL (only reachable when the Host policy is off).
    const url = URL.parse(req.url, "http://localhost");
    const grant = url?.pathname === "/rpc" ? grantOf(req, policy) : null;
    const viewing = policy.token !== null && url !== null && (policy.viewer?.admits(req.method, url) ?? false);
    // With a grant or a viewer's pass, only the token check is replaced: the Host, Origin and Sec-Fetch-Site checks still run.
    const refused = admit(req, grant || viewing ? { ...policy, token: null } : policy);
    if (refused) return refused;
    const host = req.headers.get("host");
    if (host !== null && !AUTHORITY.test(host))
      return refusal(
        400,
        "invalid_request",
        "request refused: the Host header is not a valid authority",
        { reason: "badHost" },
        { Connection: "close" },
      );
    if (!url)
      return refusal(
        400,
        "invalid_request",
        "request refused: the request target is not a valid URL",
        { reason: "badRequestTarget" },
        { Connection: "close" },
      );
    if (url.pathname === "/rpc") {
      const upgrade = req.headers.get("upgrade")?.toLowerCase() === "websocket";
      if (req.method !== "GET" || !upgrade)
        return errorResponse(
          426,
          JSON.stringify(
            errorObject("invalid_request", {
              message: "GET /rpc is JSON-RPC over WebSocket: send Upgrade: websocket",
              details: { reason: "upgradeRequired" },
            }),
          ),
          { Upgrade: "websocket" },
        );
      if (server.upgrade(req, { data: newControlSocket(grant) })) return undefined;
      return errorResponse(
        400,
        JSON.stringify(
          errorObject("invalid_request", { message: "WebSocket upgrade failed", details: { reason: "badUpgrade" } }),
        ),
      );
    }
    let body = "";
    if (req.method === "POST") {
      const wrongType = checkJsonContentType(req);
      if (wrongType) return wrongType;
      const read = await readBody(req);
      if (read instanceof Response) return read;
      body = read;
    }
    // Device requests last as long as the device takes; Bun's idle timeout (10 s) is for idle and trickling connections only.
    server.timeout(req, 0);
    const routed = routes.route(req, url, body);
    if (routed) return routed;
    return errorResponse(
      404,
      JSON.stringify(
        errorObject("method_not_found", { arg: `${req.method} ${url.pathname}`, details: { path: url.pathname } }),
      ),
    );
  };

  // Created 0600 even before its directory's mode would matter.
  const umask = process.umask(0o177);
  let server: Server<ControlSocket>;
  try {
    server = Bun.serve<ControlSocket>({
      unix: path,
      development: false,
      // readBody answers 413 with a JSON error past MAX_BODY_BYTES; Bun itself answers (bodyless) only far beyond.
      maxRequestBodySize: 4 * MAX_BODY_BYTES,
      fetch,
      websocket: sockets.handler,
      error(err) {
        refusalLog(log).error({ err }, "HTTP handler failed unexpectedly");
        return errorResponse(500, JSON.stringify(errorObject("internal_error")));
      },
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    process.umask(umask);
  }
  return {
    path,
    policy,
    async stop() {
      stopping = true;
      await Promise.all([routes.stop(), sockets.stop()]);
      await server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
