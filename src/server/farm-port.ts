/**
 * The farm's view of this daemon (farm/host.ts's FarmHostPort), built from core: the farm code
 * sees devices, batteries, the event log's commits and a connection's Session only through it.
 */
import { stateOf } from "../core/connection-state.ts";
import { closeConnectionSession } from "../core/session-access.ts";
import type { FarmHostPort } from "../farm/host.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { farmHostId } from "./farm-host-id.ts";
import type { Daemon } from "./server.ts";
import { VERSION } from "./version.ts";

export function farmPort(daemon: Daemon, log: Logger): FarmHostPort {
  const { core } = daemon;
  const call = (timeoutMs: number) => ({
    signal: AbortSignal.timeout(timeoutMs),
    deadline: Date.now() + timeoutMs,
    log,
  });
  return {
    hostId: farmHostId(daemon.paths.dataDir),
    version: VERSION,
    watchCommitted: (committed) => core.log.watch({ committed, deleted: () => {} }),
    devices: () =>
      core.devices.registry.list().map((d) => ({
        id: d.id,
        name: d.name,
        platform: d.platform.kind === "other" ? d.platform.value : d.platform.kind,
        osVersion: d.osVersion,
        connected: d.connected,
        leased: core.devices.leaseOf(d.id) !== undefined,
      })),
    actionNames: async (deviceId, timeoutMs) =>
      (await core.devices.actions(deviceId, call(timeoutMs))).map((a) => a.name),
    battery: (deviceId, timeoutMs) => core.devices.battery(deviceId, call(timeoutMs)),
    deviceOfSession: (sessionId) => {
      for (const id of core.devices.registry.deviceIds())
        if (core.devices.leaseOf(id)?.sessionId === sessionId) return id;
      return null;
    },
    revoke: (conn, reason) => closeConnectionSession(core, conn, reason, log),
    activeSession: (conn) => stateOf(conn).activeSessionId,
  };
}
