import * as v from "valibot";
import { SeqSchema, SessionIdSchema, U53Schema, int, nullable, omittable } from "../ids.ts";

export const SessionStateSchema = v.picklist(["active", "ended"]);
export const SessionOutcomeSchema = v.picklist(["completed", "failed", "cancelled", "shutdown"]);
export type SessionOutcome = v.InferOutput<typeof SessionOutcomeSchema>;

export const SessionInfoSchema = v.strictObject({
  id: SessionIdSchema,
  state: SessionStateSchema,
  startedAtMs: U53Schema,
  endedAtMs: nullable(U53Schema),
  eventCount: SeqSchema,
  lastSequence: SeqSchema,
});
export type SessionInfo = v.InferOutput<typeof SessionInfoSchema>;

export const SessionCurrentResultSchema = v.strictObject({ sessionId: SessionIdSchema });
export const SessionEndParamsSchema = v.strictObject({
  outcome: omittable(SessionOutcomeSchema),
  reason: omittable(v.string()),
});
export const SessionTargetParamsSchema = v.strictObject({ sessionId: omittable(SessionIdSchema) });
export const PAGE_LIMIT_MAX = 1000;
const pageParams = {
  sessionId: omittable(SessionIdSchema),
  afterSequence: omittable(SeqSchema),
  limit: omittable(int(1, PAGE_LIMIT_MAX)),
};
export const SessionExportParamsSchema = v.strictObject(pageParams);
export const EventsListParamsSchema = v.strictObject(pageParams);
export const EventsClearResultSchema = v.strictObject({ deleted: v.boolean(), sessionId: SessionIdSchema });
export const SessionsListResultSchema = v.array(SessionInfoSchema);

/** The SessionInfo part of a richer record (a summary): exactly the wire fields, nothing else. */
export const infoOf = (s: SessionInfo): SessionInfo => ({
  id: s.id,
  state: s.state,
  startedAtMs: s.startedAtMs,
  endedAtMs: s.endedAtMs,
  eventCount: s.eventCount,
  lastSequence: s.lastSequence,
});
