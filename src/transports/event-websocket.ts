import type { Server, ServerWebSocket } from "bun";
import { withinGrace } from "../rpc/grace.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { type EventPlane, EventSubscriber, MAX_MESSAGE_BYTES } from "./event-subscriber.ts";
import { refusalLog } from "./log-limiter.ts";
import { WEBSOCKET_LIVENESS } from "./websocket-liveness.ts";

export type { EventPlane } from "./event-subscriber.ts";

export const SUBPROTOCOL = "devicerail.events.v1";
const MAX_SOCKETS = 32;
/** How long shutdown waits for sockets to take their terminal and Close frames (docs/protocol/limits.md). */
const SHUTDOWN_GRACE_MS = 3_000;

const forbidden = () => new Response("forbidden", { status: 403, headers: { "Cache-Control": "no-store" } });
const TOKEN_PATH = /^\/v\/([0-9a-f]{64})$/;

/**
 * The loopback WebSocket event plane (docs/protocol/event-stream.md): a socket is admitted only
 * on an unused capability URL with the exact Host, subprotocol and allowed Origin; each admitted
 * socket is an EventSubscriber.
 */
export function listenEventPlane(plane: EventPlane, opts: { log: Logger; serverVersion: string }) {
  const open = new Set<ServerWebSocket<EventSubscriber>>();
  let stopping = false;

  const server: Server<EventSubscriber> = Bun.serve<EventSubscriber>({
    hostname: "127.0.0.1",
    port: 0,
    // Bun's development mode answers a throw with a page naming the working directory and source lines.
    development: false,
    fetch(req, srv) {
      // The exact Host first: any other makes req.url unparsable or names another server.
      if (req.headers.get("host") !== `127.0.0.1:${srv.port}`) return forbidden();
      const url = URL.parse(req.url);
      const token = url ? TOKEN_PATH.exec(url.pathname)?.[1] : undefined;
      const proto = req.headers.get("sec-websocket-protocol");
      if (stopping || open.size >= MAX_SOCKETS || !url || !token || url.search !== "" || proto !== SUBPROTOCOL)
        return forbidden();
      if (req.headers.get("upgrade")?.toLowerCase() !== "websocket" || !req.headers.get("sec-websocket-key"))
        return forbidden();
      const cap = plane.consume(token, req.headers.get("origin"));
      if (!cap) return forbidden();
      const data = new EventSubscriber(cap, plane, opts.serverVersion);
      if (srv.upgrade(req, { data, headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } })) return undefined;
      return forbidden();
    },
    error(err) {
      refusalLog(opts.log).error({ err }, "event plane request failed unexpectedly");
      return forbidden();
    },
    websocket: {
      maxPayloadLength: MAX_MESSAGE_BYTES,
      ...WEBSOCKET_LIVENESS,
      open(ws) {
        open.add(ws);
        ws.data.opened(ws);
      },
      message(ws, message) {
        ws.data.message(message);
      },
      drain(ws) {
        ws.data.writable();
      },
      close(ws) {
        open.delete(ws);
        ws.data.closed();
      },
    },
  });
  opts.log.info({ port: server.port }, "event stream plane listening");
  return {
    port: server.port as number,
    endpoint: (token: string) => `ws://127.0.0.1:${server.port}/v/${token}`,
    /** After the streams have ended (their subscribers got a terminal): sockets still in their handshake are closed too. */
    async stop(): Promise<void> {
      stopping = true;
      for (const ws of open) ws.data.shutdown();
      await withinGrace(server.stop(false), SHUTDOWN_GRACE_MS);
      await server.stop(true);
    },
  };
}
