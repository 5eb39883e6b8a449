import * as v from "valibot";
import { JsonSchema, SeqSchema, U16Schema, U53Schema, UuidSchema, nonBlank } from "../ids.ts";

/** Standalone replay document (docs/protocol/devices-and-actions.md#manual-recordings); not exchanged by any method. */
export const ManualActionArgumentsSchema = v.variant("kind", [
  v.strictObject({ kind: v.literal("captured"), value: JsonSchema }),
  v.strictObject({ kind: v.literal("protected"), secretRef: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,128}$/)) }),
]);

export const ManualActionStepSchema = v.strictObject({
  sequence: SeqSchema,
  capturedAtMs: U53Schema,
  callId: UuidSchema,
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  arguments: ManualActionArgumentsSchema,
});

export const ManualRecordingSchema = v.strictObject({
  formatVersion: U16Schema,
  recordingId: UuidSchema,
  sourceDeviceId: nonBlank(65_536),
  actionSpaceSha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  startedAtMs: U53Schema,
  endedAtMs: U53Schema,
  steps: v.pipe(v.array(ManualActionStepSchema), v.maxLength(10_000)),
});
