/**
 * The composition root's in-process wiring of the client (src/client/in-process.ts): each
 * connection a surface opens is a control connection on the dispatcher, so the surfaces (the HTTP
 * API, MCP, the live report) never see the dispatcher or the server's services.
 */
import type { Connect } from "../client/in-process.ts";
import { localClient } from "../client/in-process.ts";
import { Connection } from "../rpc/connection.ts";
import type { CloseReason, Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../protocol/rpc-error.ts";

export function localConnect(dispatcher: Dispatcher, services: ServerServices, log: Logger): Connect {
  return ({ transport, privileged }) => {
    // Every answer comes back as a value; a frame here would be a bug in the dispatcher.
    const conn = new Connection({ kind: transport, framing: "jsonMessage" }, services, (frame) =>
      log.error({ frame: frame.slice(0, 200) }, "in-process connection got a frame"),
    );
    if (privileged !== undefined) conn.privileged = privileged;
    return localClient({
      call: (id, method, params, timeoutMs) => dispatcher.call(conn, id, method, params, timeoutMs),
      close: (reason) => dispatcher.close(conn, (reason as CloseReason | undefined) ?? "RPC connection closed"),
    });
  };
}
