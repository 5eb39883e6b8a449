import { SEMANTIC_ACTION_NAMES } from "../../protocol/types/ui.ts";
import { RpcError, sessionRequired } from "../../rpc/rpc-error.ts";
import type { Handlers } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";

type DeviceMethods =
  | "devices.list"
  | "device.select"
  | "device.connect"
  | "device.disconnect"
  | "device.capabilities"
  | "device.observe"
  | "device.execute"
  | "session.start";

/**
 * Routing is real; everything past the route needs a driver, and none is registered yet, so a
 * routed call can only fail with the routing error (device_not_found / device_selection_required).
 * A registered device without a driver answers a typed error that says so.
 */
export function deviceHandlers(core: Core): Pick<Handlers, DeviceMethods> {
  const needsDriver = (ctx: { route(): string }): never => {
    const deviceId = ctx.route();
    throw new RpcError("device_not_connected", { arg: deviceId, details: { deviceId } });
  };
  return {
    "devices.list": (_p, { conn }) => ({ devices: core.devices.list(), selectedDeviceId: conn.selectedDeviceId }),
    "device.select": ({ deviceId }, { conn }) => {
      const device = core.devices.get(deviceId);
      if (!device) throw new RpcError("device_not_found", { arg: deviceId, details: { deviceId } });
      conn.selectedDeviceId = deviceId;
      return { device };
    },
    "device.connect": (_p, ctx) => needsDriver(ctx),
    "device.disconnect": (_p, ctx) => needsDriver(ctx),
    "device.capabilities": (_p, ctx) => needsDriver(ctx),
    "device.observe": (_p, ctx) => {
      if (!ctx.conn.activeSessionId) {
        ctx.route();
        throw sessionRequired();
      }
      return needsDriver(ctx);
    },
    "device.execute": (params, ctx) => {
      if (params.actionTimeoutMs !== undefined && !ctx.conn.has("request.control.v1"))
        throw new RpcError("feature_not_negotiated", {
          arg: "actionTimeoutMs",
          details: { field: "actionTimeoutMs", requiredFeature: "request.control.v1" },
        });
      if ((SEMANTIC_ACTION_NAMES as readonly string[]).includes(params.name) && !ctx.conn.has("device.semanticActions.v1"))
        throw new RpcError("semantic_action_not_negotiated", {
          details: { action: params.name, requiredFeature: "device.semanticActions.v1" },
        });
      ctx.route();
      throw sessionRequired();
    },
    "session.start": (_p, ctx) => {
      if (ctx.conn.activeSessionId)
        throw new RpcError("session_already_active", { details: { sessionId: ctx.conn.activeSessionId } });
      return needsDriver(ctx);
    },
  };
}
