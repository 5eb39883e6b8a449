import type * as v from "valibot";
import { ErrorInfoSchema, RpcErrorObjectSchema } from "./errors.ts";
import * as ids from "./ids.ts";
import { RpcFailureSchema, RpcParamsSchema, RpcRequestSchema, RpcResponseSchema, RpcSuccessSchema } from "./jsonrpc.ts";
import * as action from "./types/action.ts";
import * as device from "./types/device.ts";
import * as event from "./types/event.ts";
import { AssetRefSchema } from "./types/evidence.ts";
import * as ext from "./types/extensions.ts";
import * as hs from "./types/handshake.ts";
import * as manual from "./types/manual.ts";
import * as media from "./types/media.ts";
import * as obs from "./types/observation.ts";
import * as rc from "./types/request-control.ts";
import * as session from "./types/session.ts";
import * as stream from "./types/stream.ts";
import * as ui from "./types/ui.ts";
import * as verdict from "./types/verdict.ts";

/**
 * Every named DTO of docs/protocol/types.md, by its type name. Structured DTOs are referenced by `$ref` wherever they are
 * nested; scalar aliases (ids, counters) are inlined and also published on their own.
 */
export const DTOS = {
  // envelope
  RpcRequest: RpcRequestSchema,
  RpcSuccess: RpcSuccessSchema,
  RpcFailure: RpcFailureSchema,
  RpcResponse: RpcResponseSchema,
  RpcParams: RpcParamsSchema,
  RpcError: RpcErrorObjectSchema,
  ErrorInfo: ErrorInfoSchema,
  // handshake
  PeerInfo: hs.PeerInfoSchema,
  ProtocolRange: hs.ProtocolRangeSchema,
  ProtocolOffer: hs.ProtocolOfferSchema,
  FeatureOffer: hs.FeatureOfferSchema,
  HelloParams: hs.HelloParamsSchema,
  ProtocolVersion: hs.ProtocolVersionSchema,
  ProtocolSelection: hs.ProtocolSelectionSchema,
  TransportInfo: hs.TransportInfoSchema,
  FeatureSelection: hs.FeatureSelectionSchema,
  HelloResult: hs.HelloResultSchema,
  ProtocolIncompatibilityReason: hs.ProtocolIncompatibilityReasonSchema,
  SystemDescribeResult: hs.SystemDescribeResultSchema,
  // devices
  Platform: device.PlatformSchema,
  DeviceInfo: device.DeviceInfoSchema,
  Viewport: device.ViewportSchema,
  DevicesListResult: device.DevicesListResultSchema,
  DeviceSelectParams: device.DeviceSelectParamsSchema,
  DeviceSelectResult: device.DeviceSelectResultSchema,
  DeviceDisconnectResult: device.DeviceDisconnectResultSchema,
  AssetRef: AssetRefSchema,
  // observations and actions
  ScreenshotOmissionReason: obs.ScreenshotOmissionReasonSchema,
  UiSnapshotOmissionReason: obs.UiSnapshotOmissionReasonSchema,
  Observation: obs.ObservationSchema,
  ActionProtection: action.ActionProtectionSchema,
  ActionDefinition: action.ActionDefinitionSchema,
  ActionCall: action.ActionCallSchema,
  RecordedActionCall: action.RecordedActionCallSchema,
  ActionResult: action.ActionResultSchema,
  ActionOutcome: action.ActionOutcomeSchema,
  DeviceExecuteParams: action.DeviceExecuteParamsSchema,
  DeviceCapabilitiesResult: action.DeviceCapabilitiesResultSchema,
  // sessions and events
  SessionState: session.SessionStateSchema,
  SessionOutcome: session.SessionOutcomeSchema,
  SessionInfo: session.SessionInfoSchema,
  SessionCurrentResult: session.SessionCurrentResultSchema,
  SessionEndParams: session.SessionEndParamsSchema,
  SessionTargetParams: session.SessionTargetParamsSchema,
  SessionExportParams: session.SessionExportParamsSchema,
  EventsListParams: session.EventsListParamsSchema,
  EventsClearResult: session.EventsClearResultSchema,
  SessionsListResult: session.SessionsListResultSchema,
  TestEventPayload: event.TestEventPayloadSchema,
  TestEvent: event.TestEventSchema,
  EventsListResult: event.EventsListResultSchema,
  SessionExport: event.SessionExportSchema,
  SessionExportResult: event.SessionExportResultSchema,
  // devicerail extensions
  SessionSummaryVerdict: ext.SessionSummaryVerdictSchema,
  SessionSummary: ext.SessionSummarySchema,
  SessionSummaryListParams: ext.SessionSummaryListParamsSchema,
  SessionSummaryListResult: ext.SessionSummaryListResultSchema,
  OpenRpcDocument: ext.OpenRpcDocumentSchema,
  // media
  MediaStreamKind: media.MediaStreamKindSchema,
  MediaStreamInfo: media.MediaStreamInfoSchema,
  MediaFrame: media.MediaFrameSchema,
  MediaStreamStartParams: media.MediaStreamStartParamsSchema,
  MediaStreamStartResult: media.MediaStreamStartResultSchema,
  MediaStreamCaptureParams: media.MediaStreamCaptureParamsSchema,
  MediaStreamCaptureResult: media.MediaStreamCaptureResultSchema,
  MediaStreamEndParams: media.MediaStreamEndParamsSchema,
  MediaStreamEndResult: media.MediaStreamEndResultSchema,
  // UI trees and semantic actions
  UiContextKind: ui.UiContextKindSchema,
  UiContextRef: ui.UiContextRefSchema,
  UiContextSelector: ui.UiContextSelectorSchema,
  UiRect: ui.UiRectSchema,
  UiNode: ui.UiNodeSchema,
  UiSnapshot: ui.UiSnapshotSchema,
  UiSnapshotRef: ui.UiSnapshotRefSchema,
  UiSnapshotGetParams: ui.UiSnapshotGetParamsSchema,
  UiNodeRef: ui.UiNodeRefSchema,
  TextMatchMode: ui.TextMatchModeSchema,
  TextMatch: ui.TextMatchSchema,
  ElementSelector: ui.ElementSelectorSchema,
  ElementTarget: ui.ElementTargetSchema,
  CoordinateFallbackReason: ui.CoordinateFallbackReasonSchema,
  ActionExecution: ui.ActionExecutionSchema,
  FindElementArguments: ui.FindElementArgumentsSchema,
  FindElementResult: ui.FindElementResultSchema,
  TapElementArguments: ui.TapElementArgumentsSchema,
  ClearElementArguments: ui.ClearElementArgumentsSchema,
  SetElementValueArguments: ui.SetElementValueArgumentsSchema,
  WaitForElementCondition: ui.WaitForElementConditionSchema,
  WaitForElementArguments: ui.WaitForElementArgumentsSchema,
  WaitForElementResult: ui.WaitForElementResultSchema,
  // verdicts
  VerdictStatus: verdict.VerdictStatusSchema,
  Verdict: verdict.VerdictSchema,
  VerdictRecordParams: verdict.VerdictRecordParamsSchema,
  VerdictRecordResult: event.VerdictRecordResultSchema,
  // event stream
  EventStreamCursor: stream.EventStreamCursorSchema,
  EventStreamOriginPolicy: stream.EventStreamOriginPolicySchema,
  EventsStreamOpenParams: stream.EventsStreamOpenParamsSchema,
  EventsStreamOpenResult: stream.EventsStreamOpenResultSchema,
  EventsSubscribeParams: stream.EventsSubscribeParamsSchema,
  EventsSubscribeResult: stream.EventsSubscribeResultSchema,
  EventsStreamEventParams: stream.EventsStreamEventParamsSchema,
  EventsStreamTerminalParams: stream.EventsStreamTerminalParamsSchema,
  EventsStreamTermination: stream.EventsStreamTerminationSchema,
  EventsStreamEventNotification: stream.EventsStreamEventNotificationSchema,
  EventsStreamTerminalNotification: stream.EventsStreamTerminalNotificationSchema,
  // request control
  RequestCancelParams: rc.RequestCancelParamsSchema,
  RequestCancelStatus: rc.RequestCancelStatusSchema,
  RequestCancelResult: rc.RequestCancelResultSchema,
  // manual recording
  ManualRecording: manual.ManualRecordingSchema,
  ManualActionStep: manual.ManualActionStepSchema,
  ManualActionArguments: manual.ManualActionArgumentsSchema,
} as const satisfies Record<string, v.GenericSchema>;

/** Scalar aliases: published as their own schema files, inlined where used. */
export const SCALARS = {
  RpcId: ids.RpcIdSchema,
  DeviceId: ids.DeviceIdSchema,
  SessionId: ids.SessionIdSchema,
  EventId: ids.EventIdSchema,
  MediaStreamId: ids.MediaStreamIdSchema,
  EventStreamEpoch: ids.EventStreamEpochSchema,
  EventSubscriptionId: ids.EventSubscriptionIdSchema,
  EventSequence: ids.EventSequenceSchema,
  RequestTimeoutMs: ids.RequestTimeoutMsSchema,
} as const satisfies Record<string, v.GenericSchema>;

export type DtoName = keyof typeof DTOS;
