import type { SessionInfo } from "../protocol/types/session.ts";
import type { Connection } from "../rpc/connection.ts";
import type { HandlerContext } from "../rpc/dispatcher.ts";
import { type Logger, RpcError, sessionRequired } from "../protocol/rpc-error.ts";
import { connectionIdOf, routedDeviceId, stateOf } from "./connection-state.ts";
import type { Core } from "./core.ts";
import { clearSessionStreams, closeSessionStreams } from "./media/session-streams.ts";

/**
 * The active Session whose lease covers `deviceId` (docs/protocol/devices-and-actions.md):
 * the table's Session requirement, then the lease; both fail as session_required.
 */
export function leasedSession(core: Core, ctx: HandlerContext, deviceId: string): string {
  const sessionId = ctx.requireSession();
  const lease = core.devices.leaseOf(deviceId);
  if (!lease || lease.connectionId !== connectionIdOf(ctx.conn) || lease.sessionId !== sessionId)
    throw sessionRequired();
  return sessionId;
}

/** A failed observation leaves an `error` event with the same ErrorInfo the client gets. */
export async function recordError(
  core: Core,
  sessionId: string,
  deviceId: string,
  ctx: HandlerContext,
  failure: RpcError,
): Promise<void> {
  try {
    await core.log.append(sessionId, {
      requestId: ctx.requestId,
      deviceId,
      payload: { type: "error", error: failure.error.data },
    });
  } catch (err) {
    ctx.log.warn({ err: String(err) }, "could not record the observation failure");
  }
}

/** Ends the connection's Session (session.end, connection close, shutdown) and gives back its lease. */
export async function endSession(
  core: Core,
  conn: Connection,
  opts: {
    outcome: "completed" | "failed" | "cancelled" | "shutdown";
    reason: string | null;
    requestId?: HandlerContext["requestId"];
  },
): Promise<SessionInfo> {
  const state = stateOf(conn);
  const sessionId = state.activeSessionId as string;
  await closeSessionStreams(core, conn, opts.requestId);
  core.devices.assertIdle(sessionId);
  const deviceId = state.selectedDeviceId;
  const { session } = await core.log.endSession(sessionId, { ...opts, ...routedDeviceId(conn, deviceId) });
  if (deviceId && conn.connectionId) core.devices.releaseLease(deviceId, conn.connectionId);
  state.activeSessionId = null;
  clearSessionStreams(conn);
  return session;
}

/**
 * When a connection ends (client gone, daemon shutdown) or loses its right to the device (a farm
 * allocation that lapsed), its Session ends with outcome shutdown and the lease is released even if
 * ending failed, so the device never stays stuck.
 */
export async function closeConnectionSession(core: Core, conn: Connection, reason: string, log: Logger): Promise<void> {
  const state = stateOf(conn);
  if (!state.activeSessionId) return;
  try {
    await endSession(core, conn, { outcome: "shutdown", reason });
  } catch (err) {
    log.warn(
      { err: String(err), sessionId: state.activeSessionId },
      "could not end the Session of a closing connection",
    );
    const deviceId = state.selectedDeviceId;
    if (deviceId && conn.connectionId) core.devices.releaseLease(deviceId, conn.connectionId);
    state.activeSessionId = null;
    clearSessionStreams(conn);
  }
}
