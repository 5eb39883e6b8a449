import * as v from "valibot";
import { JsonSchema, RequestTimeoutMsSchema, U53Schema, UuidSchema, nullable, omittable } from "../ids.ts";
import { ErrorInfoSchema } from "../errors.ts";
import { AssetRefSchema } from "./evidence.ts";
import { ObservationSchema } from "./observation.ts";
import { ActionExecutionSchema } from "./ui.ts";

export const ActionProtectionSchema = v.picklist(["standard", "protected"]);

export const ActionDefinitionSchema = v.object({
  name: v.string(),
  description: v.string(),
  inputSchema: JsonSchema,
  protection: v.optional(ActionProtectionSchema, "standard"),
});
/** Input type: drivers build definitions, and `protection` may be left out (standard). */
export type ActionDefinition = v.InferInput<typeof ActionDefinitionSchema>;

export const ActionCallSchema = v.object({
  id: UuidSchema,
  name: v.string(),
  arguments: v.optional(JsonSchema, null),
});

export const RecordedActionCallSchema = v.object({
  id: UuidSchema,
  name: v.string(),
  arguments: v.optional(JsonSchema, null),
  argumentsRedacted: v.optional(v.boolean(), false),
});
export type RecordedActionCall = v.InferOutput<typeof RecordedActionCallSchema>;

export const ActionResultSchema = v.object({
  callId: UuidSchema,
  startedAtMs: U53Schema,
  finishedAtMs: U53Schema,
  output: JsonSchema,
  before: nullable(ObservationSchema),
  after: nullable(ObservationSchema),
  evidence: v.optional(v.array(AssetRefSchema), []),
  execution: omittable(ActionExecutionSchema),
});
export type ActionResult = v.InferOutput<typeof ActionResultSchema>;

export const ActionOutcomeSchema = v.variant("outcome", [
  v.strictObject({ outcome: v.literal("succeeded"), result: ActionResultSchema }),
  v.strictObject({ outcome: v.literal("failed"), error: ErrorInfoSchema }),
  v.strictObject({ outcome: v.literal("cancelled"), error: ErrorInfoSchema }),
  v.strictObject({ outcome: v.literal("timedOut"), error: ErrorInfoSchema, timeoutMs: U53Schema }),
]);
export type ActionOutcome = v.InferOutput<typeof ActionOutcomeSchema>;

/** The flat action call plus an optional action budget (docs/protocol/devices-and-actions.md#executing-an-action). */
export const DeviceExecuteParamsSchema = v.strictObject({
  id: UuidSchema,
  name: v.string(),
  arguments: v.optional(JsonSchema, null),
  actionTimeoutMs: omittable(RequestTimeoutMsSchema),
});
export type DeviceExecuteParams = v.InferOutput<typeof DeviceExecuteParamsSchema>;

export const DeviceCapabilitiesResultSchema = v.array(ActionDefinitionSchema);
