import { DriverError } from "../../driver/driver-error.ts";
import type { ActionDefinition } from "../../protocol/types/action.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { Handlers } from "../../rpc/dispatcher.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import { executeAction } from "../devices/execute.ts";
import { captureObservation } from "../devices/observe.ts";
import { isSemanticName as isSemantic } from "../devices/semantic/definitions.ts";
import { visibleTo } from "../devices/visible-actions.ts";
import { connectionIdOf, routedDeviceId, stateOf } from "../connection-state.ts";
import { leasedSession, recordError } from "../session-access.ts";

type DeviceMethods =
  | "devices.list"
  | "device.select"
  | "device.connect"
  | "device.disconnect"
  | "device.capabilities"
  | "device.observe"
  | "device.execute"
  | "session.start";

export function deviceHandlers(core: Core): Pick<Handlers, DeviceMethods> {
  const devices = core.devices;
  /** What this connection may see; `protection` is written only when "protected" (docs/protocol/devices-and-actions.md#capabilities). */
  const visible = (conn: Connection, defs: ActionDefinition[]) =>
    visibleTo(conn, defs).map(({ protection, ...rest }) =>
      protection === "protected" ? { ...rest, protection } : rest,
    );

  return {
    "devices.list": (_p, { conn }) => ({
      devices: conn.grant
        ? devices.registry.list().filter((d) => d.id === conn.grant?.deviceId)
        : devices.registry.list(),
      selectedDeviceId: stateOf(conn).selectedDeviceId,
    }),

    "device.select": ({ deviceId }, { conn }) => {
      const device = conn.grant && conn.grant.deviceId !== deviceId ? undefined : devices.registry.get(deviceId);
      if (!device) throw new RpcError("device_not_found", { arg: deviceId, details: { deviceId } });
      stateOf(conn).selectedDeviceId = deviceId;
      return { device };
    },

    "device.connect": async (_p, ctx) => {
      const deviceId = ctx.route();
      await devices.probe(deviceId, ctx);
      devices.checkAccess(deviceId, connectionIdOf(ctx.conn));
      return devices.connect(deviceId, ctx);
    },

    "device.disconnect": async (_p, ctx) => {
      const deviceId = ctx.route();
      devices.checkAccess(deviceId, connectionIdOf(ctx.conn));
      await devices.disconnect(deviceId, ctx);
      return { disconnected: true as const };
    },

    "device.capabilities": async (_p, ctx) => {
      const deviceId = ctx.route();
      const defs = await devices.actions(deviceId, ctx);
      for (const d of defs)
        if ((d.protection ?? "standard") !== devices.classify(deviceId, d.name))
          throw new DriverError("protocol_error", {
            detail: `protection of ${d.name} differs from the driver's classifier`,
          });
      return visible(ctx.conn, defs);
    },

    "device.observe": async (_p, ctx) => {
      const deviceId = ctx.route();
      const sessionId = leasedSession(core, ctx, deviceId);
      // Counted before the first await: from admission on, session.end must see it (session_busy).
      const release = devices.begin(sessionId, "observations");
      try {
        await devices.probe(deviceId, ctx).catch((cause: unknown) => {
          throw new ProbeFailed(cause);
        });
        const { observation, stored } = await captureObservation(core, deviceId, ctx.conn, ctx);
        await core.log.append(sessionId, {
          requestId: ctx.requestId,
          deviceId,
          payload: { type: "observationCaptured", observation },
          evidence: stored.map((s) => s.row),
        });
        return observation;
      } catch (err) {
        if (err instanceof ProbeFailed) throw err.cause;
        const failure = ctx.abortError() ?? (err instanceof RpcError ? err : new RpcError("driver_internal_error"));
        if (!(err instanceof RpcError) && !ctx.abortError()) ctx.log.error({ err }, "observation failed unexpectedly");
        await recordError(core, sessionId, deviceId, ctx, failure);
        throw failure;
      } finally {
        release();
      }
    },

    "device.execute": async (params, ctx) => {
      const { conn } = ctx;
      if (params.actionTimeoutMs !== undefined && !conn.has("request.control.v1"))
        throw new RpcError("feature_not_negotiated", {
          arg: "actionTimeoutMs",
          details: { field: "actionTimeoutMs", requiredFeature: "request.control.v1" },
        });
      if (isSemantic(params.name) && !conn.has("device.semanticActions.v1"))
        throw new RpcError("semantic_action_not_negotiated", {
          details: { action: params.name, requiredFeature: "device.semanticActions.v1" },
        });
      const deviceId = ctx.route();
      const protection = devices.classify(deviceId, params.name);
      if (protection === "protected" && !conn.has("action.protected.v1"))
        throw new RpcError("protected_action_not_negotiated", {
          details: { action: params.name, requiredFeature: "action.protected.v1" },
        });
      // Before the Session is touched: a refused protected action writes no event.
      if (protection === "protected") ctx.requirePrivileged();
      // Protected and unknown actions never overlap media capture on one connection (docs/protocol/media-streams.md#protected-actions-and-capture).
      const releaseSensitive = protection === "standard" ? () => {} : stateOf(conn).media.beginSensitiveAction();
      try {
        const sessionId = leasedSession(core, ctx, deviceId);
        const release = devices.begin(sessionId, "actions");
        try {
          await devices.probe(deviceId, ctx);
          const aborted = ctx.abortError();
          if (aborted) throw aborted;
          if (
            isSemantic(params.name) &&
            !(conn.has("observation.uiSnapshot.v1") && conn.has("device.semanticActions.v1"))
          )
            throw new DriverError("semantic_channel_unavailable");
          return await executeAction(core, conn, sessionId, deviceId, params, ctx);
        } finally {
          release();
        }
      } finally {
        releaseSensitive();
      }
    },

    "session.start": async (_p, ctx) => {
      const { conn } = ctx;
      const deviceId = ctx.route();
      await devices.probe(deviceId, ctx);
      // Taken before the first await that follows, so two connections cannot both pass the check.
      devices.acquireLease(deviceId, connectionIdOf(conn), "");
      let session;
      try {
        session = (await core.log.startSession({ requestId: ctx.requestId, ...routedDeviceId(conn, deviceId) }))
          .session;
      } catch (err) {
        devices.releaseLease(deviceId, connectionIdOf(conn));
        throw err;
      }
      devices.acquireLease(deviceId, connectionIdOf(conn), session.id);
      const state = stateOf(conn);
      state.selectedDeviceId = deviceId;
      state.activeSessionId = session.id;
      state.startedSessions.add(session.id);
      return session;
    },
  };
}

/** A failed health probe: like routing and lease failures it writes no event (docs/protocol/devices-and-actions.md#observing). */
class ProbeFailed {
  constructor(readonly cause: unknown) {}
}
