import type { DeviceRegistry } from "./devices/registry.ts";
import type { EvidenceStore } from "./evidence/evidence-store.ts";

/** The services every handler group works on; built once by the daemon's composition root. */
export interface Core {
  readonly devices: DeviceRegistry;
  readonly evidence: EvidenceStore;
  readonly screenshotPolicy: "capture" | "omit";
}
