import { createHandlers } from "../core/handlers/index.ts";
import type { Core } from "../core/core.ts";
import { DeviceRegistry } from "../core/devices/registry.ts";
import { MemoryEvidenceStore } from "../core/evidence/evidence-store.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../rpc/rpc-error.ts";
import type { Config } from "./config.ts";
import { SERVER_NAME, VERSION } from "./version.ts";

export interface Daemon {
  core: Core;
  dispatcher: Dispatcher;
  services: ServerServices;
}

/** The composition root: every service built once and wired together. */
export function createDaemon(config: Config, log: Logger): Daemon {
  const core: Core = {
    devices: new DeviceRegistry(),
    evidence: new MemoryEvidenceStore(),
    screenshotPolicy: config.screenshotPolicy,
  };
  const dispatcher = new Dispatcher({
    handlers: createHandlers(core),
    devices: core.devices,
    server: { name: SERVER_NAME, version: VERSION },
    log,
  });
  const services: ServerServices = {
    eventStreamListener: false,
    screenshotPolicy: config.screenshotPolicy,
    evidenceStore: true,
  };
  return { core, dispatcher, services };
}
