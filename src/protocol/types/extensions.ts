import * as v from "valibot";
import { DeviceIdSchema, U53Schema, int, nullable, omittable } from "../ids.ts";
import { PAGE_LIMIT_MAX, SessionInfoSchema, SessionOutcomeSchema, SessionStateSchema } from "./session.ts";
import { VerdictStatusSchema } from "./verdict.ts";

/**
 * Methods devicerail adds beside the reference's (the `devicerail.` namespace and `rpc.discover`):
 * reference clients never call them, so their shapes are ours to choose, while the reference
 * methods they overlap (`sessions.list`) keep the reference's shapes exactly.
 */

/** The last verdict of a Session without its evidence: what a person scanning a list needs. */
export const SessionSummaryVerdictSchema = v.strictObject({
  status: VerdictStatusSchema,
  summary: v.string(),
});

/** SessionInfo plus what a person asks first about a Session: which device, how long, how it went. */
export const SessionSummarySchema = v.strictObject({
  ...SessionInfoSchema.entries,
  deviceId: nullable(DeviceIdSchema),
  durationMs: U53Schema,
  actions: U53Schema,
  errors: U53Schema,
  outcome: nullable(SessionOutcomeSchema),
  reason: nullable(v.string()),
  verdict: nullable(SessionSummaryVerdictSchema),
});
export type SessionSummary = v.InferOutput<typeof SessionSummarySchema>;

export const SessionSummaryListParamsSchema = v.strictObject({
  limit: omittable(int(1, PAGE_LIMIT_MAX)),
  state: omittable(SessionStateSchema),
});
export const SessionSummaryListResultSchema = v.strictObject({ sessions: v.array(SessionSummarySchema) });

/**
 * `rpc.discover`'s answer, the generated OpenRPC document. Checked only as an object: the document
 * is produced from this contract by scripts/gen-protocol.ts, and describing it again here would be
 * a second copy of the OpenRPC meta-schema to keep in step.
 */
export const OpenRpcDocumentSchema = v.record(v.string(), v.unknown());
