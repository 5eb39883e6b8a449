import type { RpcId } from "../../protocol/ids.ts";
import type { TestEventPayload } from "../../protocol/types/event.ts";

/** Evidence an event references: recorded with the event, in the same transaction. */
export interface EvidenceRow {
  sha256: string;
  mediaType: string;
  byteLength: number;
  /**
   * The bytes themselves, for a small object kept in the database: written with the event, so
   * object and reference become durable in one commit. Absent for an object stored as a file.
   */
  inline?: Uint8Array;
}

export interface AppendInput {
  requestId?: RpcId;
  deviceId?: string;
  payload: TestEventPayload;
  evidence?: readonly EvidenceRow[];
}
