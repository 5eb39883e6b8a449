import type { DeviceService } from "./devices/device-service.ts";
import type { EvidenceStore } from "./evidence/evidence-store.ts";
import type { EventLog } from "./sessions/event-log.ts";
import type { EventStreams } from "./streams/event-stream.ts";

/** The services every handler group works on; built once by the daemon's composition root. */
export interface Core {
  readonly devices: DeviceService;
  readonly evidence: EvidenceStore;
  readonly log: EventLog;
  readonly screenshotPolicy: "capture" | "omit";
  /** The WebSocket event plane, when its listener is bound (events.stream.v1). */
  eventPlane?: { streams: EventStreams; endpoint(token: string): string };
}
