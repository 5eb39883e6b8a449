import type { DeviceService } from "./devices/device-service.ts";
import type { EvidenceStore } from "./evidence/evidence-store.ts";
import type { EventLog } from "./sessions/event-log.ts";

/** The services every handler group works on; built once by the daemon's composition root. */
export interface Core {
  readonly devices: DeviceService;
  readonly evidence: EvidenceStore;
  readonly log: EventLog;
  readonly screenshotPolicy: "capture" | "omit";
}
