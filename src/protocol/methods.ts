/**
 * The one method table (params, result, feature, session and routing rules for every wire method):
 * a table, kept whole.
 */
import * as v from "valibot";
import type { FeatureName } from "./features.ts";
import { DeviceExecuteParamsSchema, ActionResultSchema, DeviceCapabilitiesResultSchema } from "./types/action.ts";
import {
  DeviceDisconnectResultSchema,
  DeviceInfoSchema,
  DeviceSelectParamsSchema,
  DeviceSelectResultSchema,
  DevicesListResultSchema,
} from "./types/device.ts";
import { EventsListResultSchema, SessionExportResultSchema, VerdictRecordResultSchema } from "./types/event.ts";
import {
  OpenRpcDocumentSchema,
  SessionSummaryListParamsSchema,
  SessionSummaryListResultSchema,
} from "./types/extensions.ts";
import { HelloParamsSchema, HelloResultSchema, SystemDescribeResultSchema } from "./types/handshake.ts";
import {
  MediaStreamCaptureParamsSchema,
  MediaStreamCaptureResultSchema,
  MediaStreamEndParamsSchema,
  MediaStreamEndResultSchema,
  MediaStreamStartParamsSchema,
  MediaStreamStartResultSchema,
} from "./types/media.ts";
import { ObservationSchema } from "./types/observation.ts";
import { RequestCancelParamsSchema, RequestCancelResultSchema } from "./types/request-control.ts";
import {
  EventsClearResultSchema,
  EventsListParamsSchema,
  SessionCurrentResultSchema,
  SessionEndParamsSchema,
  SessionExportParamsSchema,
  SessionInfoSchema,
  SessionTargetParamsSchema,
  SessionsListResultSchema,
} from "./types/session.ts";
import {
  EventsStreamOpenParamsSchema,
  EventsStreamOpenResultSchema,
  EventsSubscribeParamsSchema,
  EventsSubscribeResultSchema,
} from "./types/stream.ts";
import { UiSnapshotGetParamsSchema, UiSnapshotSchema } from "./types/ui.ts";
import { VerdictRecordParamsSchema } from "./types/verdict.ts";
import { CONCURRENT_METHODS, PRIVILEGED_TRANSPORTS, type Privileged } from "./method-sets.ts";

export interface MethodSpec {
  /** Params schema; null = the method takes no params (accepts absent, `{}` or `[]`). */
  readonly params: v.GenericSchema | null;
  /** Whether params must be present (a missing `params` is decoded as `{}` otherwise). */
  readonly paramsRequired: boolean;
  readonly result: v.GenericSchema;
  /** Feature that must be enabled, else method_not_found with requiredFeature. */
  readonly feature?: FeatureName;
  /** Concurrent methods run beside others on a connection, reserve their id and accept `timeoutMs`. */
  readonly concurrent: boolean;
  /** needs: an active Session ("required"), none ("forbidden"), or does not care. */
  readonly session: "required" | "forbidden" | "any";
  /**
   * Where in the method's processing the dispatcher checks `session` (the reference's order,
   * docs/protocol/envelope-and-errors.md): before decoding params, right after (the default), or
   * at the step the handler reaches (`ctx.requireSession()`), after checks the protocol puts first.
   */
  readonly sessionCheck?: "beforeParams" | "afterParams" | "handler";
  /** The error an active Session answers when `session` is "forbidden" (default session_already_active). */
  readonly sessionConflict?: "device_lease_active" | "session_already_active";
  /** A result that arrives after its request was cancelled is still answered (its work was recorded as done). */
  readonly keepsResultWhenAborted?: boolean;
  /** Resolves a device route (selected device, or the sole registered one). */
  readonly device: boolean;
  readonly plane: "control" | "webSocket" | "both";
  /**
   * Privileged calls are refused on transports a web page can reach (docs/protocol/transport-and-framing.md#privileged-methods):
   * every call ("always"), a call naming a Session this connection did not start ("otherSession",
   * checked once params are decoded), or a call whose action the device classifies as protected
   * ("protectedAction", checked by the handler once it knows the classification).
   */
  readonly privileged?: Privileged;
  readonly summary: string;
}

const m = <const S extends Omit<MethodSpec, "paramsRequired" | "plane" | "concurrent"> & Partial<MethodSpec>>(
  spec: S,
) => ({
  paramsRequired: false,
  plane: "control" as MethodSpec["plane"],
  concurrent: false,
  ...spec,
});

/**
 * The one method table (docs/protocol/methods.md#summary): validation both ways, gating, timeouts,
 * schemas, OpenRPC, handler typing.
 */
export const METHODS = {
  "system.hello": m({
    params: HelloParamsSchema,
    paramsRequired: true,
    result: HelloResultSchema,
    session: "any",
    device: false,
    plane: "both",
    summary: "Negotiate protocol version and features",
  }),
  "system.describe": m({
    params: null,
    result: SystemDescribeResultSchema,
    session: "any",
    device: false,
    summary: "Describe this connection",
  }),
  "devices.list": m({
    params: null,
    result: DevicesListResultSchema,
    feature: "device.routing.v1",
    session: "any",
    device: false,
    summary: "List registered devices and this connection's selection",
  }),
  "device.select": m({
    params: DeviceSelectParamsSchema,
    paramsRequired: true,
    result: DeviceSelectResultSchema,
    feature: "device.routing.v1",
    session: "forbidden",
    sessionCheck: "beforeParams",
    sessionConflict: "device_lease_active",
    device: false,
    summary: "Select the device for this connection",
  }),
  "device.connect": m({
    params: null,
    result: DeviceInfoSchema,
    concurrent: true,
    session: "any",
    device: true,
    summary: "Connect the routed device",
  }),
  "device.disconnect": m({
    params: null,
    result: DeviceDisconnectResultSchema,
    concurrent: true,
    session: "any",
    device: true,
    summary: "Disconnect the routed device",
  }),
  "device.capabilities": m({
    params: null,
    result: DeviceCapabilitiesResultSchema,
    concurrent: true,
    session: "any",
    device: true,
    summary: "List the routed device's actions",
  }),
  "device.observe": m({
    params: null,
    result: ObservationSchema,
    concurrent: true,
    session: "required",
    sessionCheck: "handler",
    device: true,
    summary: "Capture an Observation of the leased device",
  }),
  "device.execute": m({
    params: DeviceExecuteParamsSchema,
    paramsRequired: true,
    result: ActionResultSchema,
    concurrent: true,
    session: "required",
    sessionCheck: "handler",
    keepsResultWhenAborted: true,
    device: true,
    privileged: "protectedAction",
    summary: "Execute one action on the leased device",
  }),
  "media.stream.start": m({
    params: MediaStreamStartParamsSchema,
    paramsRequired: true,
    result: MediaStreamStartResultSchema,
    feature: "media.stream.v1",
    session: "required",
    sessionCheck: "handler",
    device: true,
    summary: "Start a media stream",
  }),
  "media.stream.capture": m({
    params: MediaStreamCaptureParamsSchema,
    paramsRequired: true,
    result: MediaStreamCaptureResultSchema,
    feature: "media.stream.v1",
    concurrent: true,
    session: "required",
    device: true,
    summary: "Capture the next frame of a media stream",
  }),
  "media.stream.end": m({
    params: MediaStreamEndParamsSchema,
    paramsRequired: true,
    result: MediaStreamEndResultSchema,
    feature: "media.stream.v1",
    session: "required",
    device: false,
    summary: "End a media stream",
  }),
  "request.cancel": m({
    params: RequestCancelParamsSchema,
    paramsRequired: true,
    result: RequestCancelResultSchema,
    feature: "request.control.v1",
    session: "any",
    device: false,
    summary: "Cancel a running concurrent request",
  }),
  "session.start": m({
    params: null,
    result: SessionInfoSchema,
    session: "forbidden",
    sessionConflict: "session_already_active",
    device: true,
    summary: "Start a Session and lease the routed device",
  }),
  "session.current": m({
    params: null,
    result: SessionCurrentResultSchema,
    session: "required",
    device: false,
    summary: "The active Session id",
  }),
  "session.end": m({
    params: SessionEndParamsSchema,
    result: SessionInfoSchema,
    session: "required",
    sessionCheck: "beforeParams",
    device: false,
    summary: "End the active Session",
  }),
  "sessions.list": m({
    params: null,
    result: SessionsListResultSchema,
    feature: "events.snapshot.v1",
    session: "any",
    device: false,
    privileged: "always",
    summary: "List every Session",
  }),
  "session.export": m({
    params: SessionExportParamsSchema,
    result: SessionExportResultSchema,
    feature: "events.snapshot.v1",
    session: "any",
    device: false,
    privileged: "otherSession",
    summary: "Export a Session log, whole or paged",
  }),
  "events.list": m({
    params: EventsListParamsSchema,
    result: EventsListResultSchema,
    feature: "events.snapshot.v1",
    session: "any",
    device: false,
    privileged: "otherSession",
    summary: "List a Session's events",
  }),
  "events.clear": m({
    params: SessionTargetParamsSchema,
    result: EventsClearResultSchema,
    feature: "events.snapshot.v1",
    session: "any",
    device: false,
    privileged: "always",
    summary: "Delete one ended Session",
  }),
  "events.stream.open": m({
    params: EventsStreamOpenParamsSchema,
    paramsRequired: true,
    result: EventsStreamOpenResultSchema,
    feature: "events.stream.v1",
    session: "any",
    device: false,
    privileged: "otherSession",
    summary: "Issue a WebSocket capability for a Session's event stream",
  }),
  "events.subscribe": m({
    params: EventsSubscribeParamsSchema,
    paramsRequired: true,
    result: EventsSubscribeResultSchema,
    session: "any",
    device: false,
    plane: "webSocket",
    summary: "Subscribe the event WebSocket to a Session",
  }),
  "ui.snapshot.get": m({
    params: UiSnapshotGetParamsSchema,
    paramsRequired: true,
    result: UiSnapshotSchema,
    feature: "observation.uiSnapshot.v1",
    session: "required",
    device: false,
    summary: "Read the UI tree of an Observation",
  }),
  "verdict.record": m({
    params: VerdictRecordParamsSchema,
    paramsRequired: true,
    result: VerdictRecordResultSchema,
    feature: "verdict.record.v1",
    session: "required",
    device: false,
    summary: "Record a Verdict in the active Session",
  }),
  // Beyond the reference (docs/protocol/sessions-and-events.md#session-summaries): gated like the reads they extend.
  "devicerail.sessions.list": m({
    params: SessionSummaryListParamsSchema,
    result: SessionSummaryListResultSchema,
    feature: "events.snapshot.v1",
    session: "any",
    device: false,
    privileged: "always",
    summary:
      "List Sessions newest first with their device, duration, counts, outcome and last verdict (devicerail extension)",
  }),
  "rpc.discover": m({
    params: null,
    result: OpenRpcDocumentSchema,
    session: "any",
    device: false,
    summary: "The OpenRPC document of every method (OpenRPC service discovery)",
  }),
} as const satisfies Record<string, MethodSpec>;

export type MethodName = keyof typeof METHODS;
export const METHOD_NAMES = Object.keys(METHODS).sort() as MethodName[];

type Spec<M extends MethodName> = (typeof METHODS)[M];
export type ParamsOf<M extends MethodName> = Spec<M>["params"] extends v.GenericSchema
  ? v.InferOutput<Spec<M>["params"]>
  : Record<string, never>;
/** What a handler returns: the schema's input type, since the dispatcher validates it before sending. */
export type ResultOf<M extends MethodName> = v.InferInput<Spec<M>["result"]>;
/** What a client sends: the params schema's input type (a method without params takes none). */
export type InputOf<M extends MethodName> = Spec<M>["params"] extends v.GenericSchema
  ? v.InferInput<Spec<M>["params"]>
  : Record<string, never>;
/** What a client reads: the result schema's output type, as the dispatcher validated and sent it. */
export type OutputOf<M extends MethodName> = v.InferOutput<Spec<M>["result"]>;

export { CONCURRENT_METHODS, PRIVILEGED_TRANSPORTS, type Privileged };

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(METHODS, name);
}
