import * as v from "valibot";
import {
  EventStreamEpochSchema,
  EventSubscriptionIdSchema,
  SeqSchema,
  SessionIdSchema,
  U53Schema,
  cpString,
  omittable,
} from "../ids.ts";
import { ErrorInfoSchema } from "../errors.ts";
import { TestEventSchema } from "./event.ts";
import { SessionStateSchema } from "./session.ts";

export const EventStreamCursorSchema = v.strictObject({
  streamEpoch: EventStreamEpochSchema,
  sessionId: SessionIdSchema,
  sequence: SeqSchema,
});

export const EventStreamOriginPolicySchema = v.variant("kind", [
  v.strictObject({ kind: v.literal("absent") }),
  v.strictObject({ kind: v.literal("exact"), origin: v.string() }),
]);

export const EventsStreamOpenParamsSchema = v.strictObject({
  sessionId: SessionIdSchema,
  originPolicy: EventStreamOriginPolicySchema,
});
export const EventsStreamOpenResultSchema = v.strictObject({
  endpoint: cpString(1, 2048),
  streamEpoch: EventStreamEpochSchema,
  expiresAtMs: U53Schema,
});

export const EventsSubscribeParamsSchema = v.strictObject({
  sessionId: SessionIdSchema,
  afterCursor: omittable(EventStreamCursorSchema),
});
export const EventsSubscribeResultSchema = v.strictObject({
  subscriptionId: EventSubscriptionIdSchema,
  sessionId: SessionIdSchema,
  replayThrough: EventStreamCursorSchema,
  sessionState: SessionStateSchema,
});

export const EventsStreamEventParamsSchema = v.strictObject({
  subscriptionId: EventSubscriptionIdSchema,
  cursor: EventStreamCursorSchema,
  event: TestEventSchema,
});

const withError = <R extends string>(reason: R) =>
  v.strictObject({ reason: v.literal(reason), error: ErrorInfoSchema });

export const EventsStreamTerminationSchema = v.variant("reason", [
  v.strictObject({ reason: v.literal("sessionEnded") }),
  v.strictObject({ reason: v.literal("cancelled") }),
  withError("slowConsumer"),
  withError("sessionDeleted"),
  withError("serverShutdown"),
  withError("sequenceGap"),
  withError("eventTooLarge"),
  withError("internalError"),
]);

export const EventsStreamTerminalParamsSchema = v.strictObject({
  subscriptionId: EventSubscriptionIdSchema,
  sessionId: SessionIdSchema,
  lastEmittedCursor: omittable(EventStreamCursorSchema),
  termination: EventsStreamTerminationSchema,
});

export const EventsStreamEventNotificationSchema = v.strictObject({
  jsonrpc: v.literal("2.0"),
  method: v.literal("events.stream.event"),
  params: EventsStreamEventParamsSchema,
});
export const EventsStreamTerminalNotificationSchema = v.strictObject({
  jsonrpc: v.literal("2.0"),
  method: v.literal("events.stream.terminal"),
  params: EventsStreamTerminalParamsSchema,
});
