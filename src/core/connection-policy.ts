import type { Connection } from "../rpc/connection.ts";
import type { ConnectionPolicy, Route } from "../rpc/dispatcher.ts";
import { type Logger, RpcError } from "../protocol/rpc-error.ts";
import { stateOf } from "./connection-state.ts";
import type { Core } from "./core.ts";
import { closeConnectionSession } from "./session-access.ts";

/** The devices a connection may see: all of them, or the one its grant names (while it is registered). */
export function visibleDeviceIds(core: Core, conn: Connection): readonly string[] {
  const all = core.devices.registry.deviceIds();
  const grant = conn.grant;
  return grant ? all.filter((id) => id === grant.deviceId) : all;
}

/**
 * Core's answers to the dispatcher about a connection: routing to the selected or the sole
 * device (docs/protocol/devices-and-actions.md), its active Session, and its cleanup at close.
 */
export function connectionPolicy(core: Core, log: Logger): ConnectionPolicy {
  return {
    lazySelect(conn: Connection): void {
      const state = stateOf(conn);
      if (state.selectedDeviceId !== null) return;
      const registered = visibleDeviceIds(core, conn);
      if (registered.length === 1) state.selectedDeviceId = registered[0] ?? null;
    },
    route(conn: Connection): Route {
      const registered = visibleDeviceIds(core, conn);
      const selected = stateOf(conn).selectedDeviceId;
      if (selected !== null) {
        if (registered.includes(selected)) return { deviceId: selected };
        return { error: new RpcError("device_not_found", { arg: selected, details: { deviceId: selected } }) };
      }
      if (registered.length === 0)
        return { error: new RpcError("no_registered_devices", { details: { reason: "noRegisteredDevices" } }) };
      if (registered.length === 1) return { deviceId: registered[0] as string };
      return {
        error: new RpcError("device_selection_required", {
          details: {
            availableDeviceIds: [...registered],
            deviceCount: registered.length,
            requiredFeature: "device.routing.v1",
            requiredMethod: "device.select",
          },
        }),
      };
    },
    activeSession: (conn) => stateOf(conn).activeSessionId,
    startedSession: (conn, sessionId) => stateOf(conn).startedSessions.has(sessionId),
    close: (conn, reason) => closeConnectionSession(core, conn, reason, log),
  };
}
