import { RpcError, methodUnavailable, sessionRequired } from "../../rpc/rpc-error.ts";
import type { Handlers, HandlerContext } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";

type SessionMethods =
  | "session.current"
  | "session.end"
  | "sessions.list"
  | "session.export"
  | "events.list"
  | "events.clear"
  | "verdict.record"
  | "ui.snapshot.get";

/**
 * The event store is not part of this daemon yet, and no Session can be started without a device
 * driver, so no Session exists: every lookup answers the error a store without that Session gives.
 */
export function sessionHandlers(_core: Core): Pick<Handlers, SessionMethods> {
  const target = (sessionId: string | undefined, ctx: HandlerContext): never => {
    const id = sessionId ?? ctx.conn.activeSessionId;
    if (!id) throw sessionRequired();
    throw new RpcError("session_not_found", { arg: id, details: { sessionId: id } });
  };
  return {
    "session.current": () => {
      throw sessionRequired();
    },
    "session.end": () => {
      throw sessionRequired();
    },
    "sessions.list": () => [],
    "session.export": (p, ctx) => {
      if (p.afterSequence !== undefined && p.limit === undefined)
        throw new RpcError("export_after_sequence_requires_limit", { details: { method: "session.export" } });
      if (p.limit !== undefined && !ctx.conn.has("session.export.page.v1")) throw methodUnavailable("session.export", "session.export.page.v1");
      return target(p.sessionId, ctx);
    },
    "events.list": (p, ctx) => target(p.sessionId, ctx),
    "events.clear": (p, ctx) => target(p.sessionId, ctx),
    "verdict.record": () => {
      throw sessionRequired();
    },
    "ui.snapshot.get": () => {
      throw sessionRequired();
    },
  };
}
