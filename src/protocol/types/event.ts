import * as v from "valibot";
import {
  DeviceIdSchema,
  EventIdSchema,
  RpcIdSchema,
  SeqSchema,
  SessionIdSchema,
  U53Schema,
  UuidSchema,
  nullable,
  omittable,
} from "../ids.ts";
import { ErrorInfoSchema } from "../errors.ts";
import { ActionOutcomeSchema, RecordedActionCallSchema } from "./action.ts";
import { MediaFrameSchema, MediaStreamInfoSchema } from "./media.ts";
import { ObservationSchema } from "./observation.ts";
import { SessionInfoSchema, SessionOutcomeSchema } from "./session.ts";
import { VerdictSchema } from "./verdict.ts";

export const TestEventPayloadSchema = v.variant("type", [
  v.strictObject({ type: v.literal("sessionStarted") }),
  v.strictObject({ type: v.literal("sessionEnded"), outcome: SessionOutcomeSchema, reason: nullable(v.string()) }),
  v.strictObject({ type: v.literal("observationCaptured"), observation: ObservationSchema }),
  v.strictObject({ type: v.literal("actionStarted"), call: RecordedActionCallSchema }),
  v.strictObject({ type: v.literal("actionCompleted"), callId: UuidSchema, outcome: ActionOutcomeSchema }),
  v.strictObject({ type: v.literal("mediaStreamStarted"), stream: MediaStreamInfoSchema }),
  v.strictObject({ type: v.literal("mediaFrameCaptured"), frame: MediaFrameSchema }),
  v.strictObject({ type: v.literal("mediaStreamEnded"), streamId: UuidSchema, frameCount: U53Schema }),
  v.strictObject({ type: v.literal("verdictRecorded"), verdict: VerdictSchema }),
  v.strictObject({ type: v.literal("error"), error: ErrorInfoSchema }),
]);
/** Input type: events are built by core, so fields with defaults (argumentsRedacted …) stay optional. */
export type TestEventPayload = v.InferInput<typeof TestEventPayloadSchema>;

export const TestEventSchema = v.strictObject({
  eventId: EventIdSchema,
  sessionId: SessionIdSchema,
  sequence: SeqSchema,
  requestId: omittable(RpcIdSchema),
  deviceId: omittable(DeviceIdSchema),
  atMs: U53Schema,
  payload: TestEventPayloadSchema,
});
export type TestEvent = v.InferInput<typeof TestEventSchema>;

export const EventsListResultSchema = v.array(TestEventSchema);
export const SessionExportSchema = v.strictObject({ session: SessionInfoSchema, events: v.array(TestEventSchema) });
export const SessionExportResultSchema = v.strictObject({
  session: SessionInfoSchema,
  events: v.array(TestEventSchema),
  nextAfterSequence: omittable(SeqSchema),
});
export const VerdictRecordResultSchema = v.strictObject({ event: TestEventSchema });
