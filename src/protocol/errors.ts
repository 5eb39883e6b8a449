/**
 * The one error table, protocol and extension codes with their messages and details: a table, kept
 * whole so each code is read in one place.
 */
import * as v from "valibot";
import { I32Schema } from "./ids.ts";

/** The error body clients branch on (`data.code`); `message` equals the envelope's `error.message`. */
export const ErrorInfoSchema = v.strictObject({
  code: v.string(),
  message: v.string(),
  retryable: v.boolean(),
  details: v.optional(v.nullable(v.unknown()), null),
});
export type ErrorInfo = v.InferOutput<typeof ErrorInfoSchema>;

export const RpcErrorObjectSchema = v.strictObject({
  code: I32Schema,
  message: v.string(),
  data: ErrorInfoSchema,
});
export type RpcErrorObject = v.InferOutput<typeof RpcErrorObjectSchema>;

type Msg = string | ((arg: string) => string);
interface ErrorEntry {
  readonly numeric: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly message: Msg;
}
const e = (numeric: number, code: string, retryable: boolean, message: Msg): ErrorEntry => ({
  numeric,
  code,
  retryable,
  message,
});

/**
 * The protocol's part of the one error table (docs/protocol/errors.md). Keys are unique names;
 * several keys may share a `data.code` with another numeric code, retryable default or message
 * (e.g. `device_not_found`). Messages are the reference's observable wire texts.
 */
const PROTOCOL_ERRORS = {
  // JSON-RPC reserved codes
  parse_error: e(-32700, "parse_error", false, "request is not valid JSON"),
  invalid_request: e(-32600, "invalid_request", false, "request does not match the DeviceRail JSON-RPC subset"),
  request_line_too_large: e(-32600, "invalid_request", false, "request line exceeds the 1048576-byte limit"),
  request_not_utf8: e(-32700, "parse_error", false, "request line is not valid UTF-8"),
  ws_invalid_request: e(-32600, "invalid_request", false, "WebSocket message is not a DeviceRail request"),
  ws_binary_message: e(-32600, "invalid_request", false, "WebSocket application messages must be text JSON"),
  method_not_found: e(-32601, "method_not_found", false, (m) => `method is not available: ${m}`),
  protected_action_not_negotiated: e(
    -32601,
    "protected_action_not_negotiated",
    false,
    "protected action requires an explicitly negotiated feature",
  ),
  semantic_action_not_negotiated: e(
    -32601,
    "semantic_action_not_negotiated",
    false,
    "semantic action requires an explicitly negotiated feature",
  ),
  ws_handshake_required: e(-32601, "handshake_required", false, "system.hello must be the first WebSocket message"),
  ws_method_not_found: e(
    -32601,
    "method_not_found",
    false,
    "the event WebSocket accepts exactly one events.subscribe request",
  ),
  invalid_params: e(-32602, "invalid_params", false, (m) => `${m} params are invalid`),
  params_not_accepted: e(-32602, "invalid_params", false, (m) => `${m} does not accept params`),
  hello_invalid_params: e(-32602, "invalid_params", true, "system.hello params are invalid"),
  empty_protocol_offer: e(-32602, "invalid_params", true, "client protocol offer must contain at least one range"),
  invalid_protocol_range: e(-32602, "invalid_params", true, "client protocol offer contains an inverted minor range"),
  export_after_sequence_requires_limit: e(
    -32602,
    "invalid_params",
    false,
    "session.export afterSequence requires limit",
  ),
  verdict_bounds: e(-32602, "invalid_params", false, "verdict.record params exceed the supported bounds"),
  feature_not_negotiated: e(-32602, "feature_not_negotiated", false, (f) => `${f} requires negotiated request control`),
  request_timeout_not_supported: e(
    -32602,
    "request_timeout_not_supported",
    false,
    (m) => `timeoutMs is not supported by ${m}`,
  ),
  ws_request_timeout_not_supported: e(
    -32602,
    "request_timeout_not_supported",
    false,
    "events.subscribe does not accept timeoutMs",
  ),
  invalid_stream_origin: e(-32602, "invalid_stream_origin", false, "event stream Origin policy is invalid"),
  duplicate_evidence_reference: e(
    -32602,
    "duplicate_evidence_reference",
    false,
    "verdict evidence references must be unique",
  ),
  evidence_not_reachable: e(
    -32602,
    "evidence_not_reachable",
    false,
    "verdict evidence must already be reachable from the active Session log",
  ),
  internal_error: e(-32603, "internal_error", false, "internal server error"),
  response_serialization_failed: e(-32603, "internal_error", false, "response serialization failed"),
  server_offer_invalid: e(-32603, "internal_error", false, "server protocol offer is invalid"),
  evidence_cleanup_failed: e(
    -32603,
    "evidence_cleanup_failed",
    false,
    "session event log was deleted but Evidence release did not complete",
  ),
  // Evidence store (−32603)
  evidence_store_unavailable: e(
    -32603,
    "evidence_store_unavailable",
    false,
    "evidence store is not configured for this runtime",
  ),
  invalid_evidence_store_configuration: e(
    -32603,
    "invalid_evidence_store_configuration",
    false,
    "evidence store configuration is invalid",
  ),
  evidence_corrupt: e(-32603, "evidence_corrupt", false, "evidence store is corrupt"),
  invalid_evidence_reference: e(-32603, "invalid_evidence_reference", false, "evidence reference is invalid"),
  invalid_evidence_digest: e(-32603, "invalid_evidence_digest", false, "evidence digest is invalid"),
  invalid_evidence_media_type: e(-32603, "invalid_evidence_media_type", false, "evidence media type is invalid"),
  empty_evidence: e(-32603, "empty_evidence", false, "evidence content is empty"),
  evidence_size_mismatch: e(-32603, "evidence_size_mismatch", false, "evidence size does not match its declaration"),
  evidence_digest_mismatch: e(
    -32603,
    "evidence_digest_mismatch",
    false,
    "evidence digest does not match its declaration",
  ),
  evidence_not_found: e(-32603, "evidence_not_found", false, "evidence was not found"),
  evidence_not_attached: e(-32603, "evidence_not_attached", false, "evidence is not attached to this session"),
  evidence_media_type_conflict: e(
    -32603,
    "evidence_media_type_conflict",
    false,
    "evidence media type conflicts with stored metadata",
  ),
  unsafe_evidence_path: e(-32603, "unsafe_evidence_path", false, "evidence storage path is unsafe"),
  evidence_too_large: e(-32603, "evidence_too_large", false, "evidence exceeds the configured size limit"),
  evidence_reference_limit: e(-32603, "evidence_reference_limit", false, "session evidence reference limit exceeded"),
  evidence_session_closed: e(-32603, "evidence_session_closed", false, "evidence session is already closed"),
  evidence_store_busy: e(-32603, "evidence_store_busy", true, "evidence store is busy"),
  unsupported_evidence_store_version: e(
    -32603,
    "unsupported_evidence_store_version",
    false,
    "evidence store version is unsupported",
  ),
  evidence_io_error: e(-32603, "evidence_io_error", true, "evidence store I/O failed"),
  evidence_store_error: e(-32603, "evidence_store_error", true, "evidence store failed"),
  // Driver failures (−32000)
  device_not_connected: e(-32000, "device_not_connected", true, (id) => `device ${id} is not connected`),
  unknown_action: e(-32000, "unknown_action", false, (a) => `unknown action: ${a}`),
  invalid_arguments: e(-32000, "invalid_arguments", false, (a) => `invalid arguments for action ${a}`),
  element_not_found: e(-32000, "element_not_found", false, "element was not found"),
  element_ambiguous: e(-32000, "element_ambiguous", false, "element selector matched more than one element"),
  element_stale: e(-32000, "element_stale", true, "element reference is stale"),
  element_not_interactable: e(-32000, "element_not_interactable", false, "element is not interactable"),
  ui_context_not_found: e(-32000, "ui_context_not_found", false, "UI context was not found"),
  ui_context_ambiguous: e(-32000, "ui_context_ambiguous", false, "UI context selector matched more than one context"),
  ui_context_changed: e(-32000, "ui_context_changed", true, "UI context changed"),
  semantic_channel_unavailable: e(-32000, "semantic_channel_unavailable", false, "semantic UI channel is unavailable"),
  protocol_error: e(-32000, "protocol_error", false, "driver protocol error"),
  driver_cancelled: e(-32000, "driver_cancelled", false, "driver operation was cancelled"),
  driver_timed_out: e(-32000, "driver_timed_out", true, "driver operation timed out"),
  platform_error: e(-32000, "platform_error", false, "platform operation failed"),
  driver_internal_error: e(-32000, "internal_error", true, "internal driver error"),
  // DeviceRail control codes (−32001 … −32012)
  handshake_required: e(-32001, "handshake_required", true, "system.hello must succeed before any other method"),
  handshake_already_completed: e(
    -32002,
    "handshake_already_completed",
    false,
    "this transport connection has already completed system.hello",
  ),
  protocol_version_incompatible: e(
    -32003,
    "protocol_version_incompatible",
    false,
    "client and server do not share a protocol version",
  ),
  ws_protocol_version_incompatible: e(
    -32003,
    "protocol_version_incompatible",
    false,
    "event WebSocket requires protocol 1.3 or newer",
  ),
  required_feature_unsupported: e(
    -32004,
    "required_feature_unsupported",
    true,
    "one or more required protocol features are unsupported",
  ),
  ws_required_feature_unsupported: e(
    -32004,
    "required_feature_unsupported",
    false,
    "event WebSocket requires events.stream.v1",
  ),
  feature_dependency_unsatisfied: e(
    -32004,
    "feature_dependency_unsatisfied",
    false,
    "semantic Actions require negotiated UI snapshot evidence",
  ),
  session_required: e(-32005, "session_required", true, "start a session before recording device operations"),
  session_already_active: e(-32006, "session_already_active", false, "this connection already has an active session"),
  session_protocol_incompatible: e(
    -32006,
    "session_protocol_incompatible",
    false,
    "the Session contains an event that requires a newer protocol",
  ),
  request_cancelled: e(-32007, "request_cancelled", false, (r) => `request was cancelled: ${r}`),
  media_capture_cancelled: e(-32007, "request_cancelled", true, "media capture was cancelled"),
  request_timed_out: e(-32008, "request_timed_out", true, (n) => `Request timed out after ${n} ms`),
  shutdown_timed_out: e(-32008, "request_timed_out", true, (n) => `Shutdown timed out after ${n} ms`),
  action_timed_out: e(-32008, "action_timed_out", true, (n) => `Action timed out after ${n} ms`),
  media_capture_timed_out: e(-32008, "request_timed_out", true, "media capture timed out"),
  request_id_in_use: e(-32009, "request_id_in_use", false, "request id is already active on this connection"),
  too_many_requests: e(-32010, "too_many_requests", true, "this connection has reached its in-flight request limit"),
  no_registered_devices: e(-32011, "device_not_found", true, "no devices are registered"),
  device_not_found: e(-32011, "device_not_found", false, (id) => `device is not registered: ${id}`),
  device_selection_required: e(
    -32011,
    "device_selection_required",
    true,
    "select a device before calling device methods",
  ),
  response_frame_too_large: e(
    -32012,
    "response_frame_too_large",
    false,
    "response frame exceeds the 1048576-byte limit",
  ),
  // Event store (−32006)
  session_already_exists: e(-32006, "session_already_exists", false, (id) => `session already exists: ${id}`),
  session_not_found: e(-32006, "session_not_found", false, (id) => `session not found: ${id}`),
  stream_session_not_found: e(-32006, "session_not_found", false, "event stream Session was not found"),
  session_ended: e(-32006, "session_ended", false, (id) => `session is already ended: ${id}`),
  session_active: e(-32006, "session_active", false, (id) => `active session cannot be deleted: ${id}`),
  session_busy: e(-32006, "session_busy", true, (s) => `session ${s}`),
  invalid_observation_lease: e(-32006, "invalid_observation_lease", false, (s) => `observation lease ${s}`),
  invalid_event: e(
    -32006,
    "invalid_event",
    false,
    "session lifecycle events can only be written by start_session/end_session",
  ),
  duplicate_action_call: e(
    -32006,
    "duplicate_action_call",
    false,
    (id) => `action call id is already used in this session: ${id}`,
  ),
  action_not_started: e(-32006, "action_not_started", false, (id) => `action was not started in this session: ${id}`),
  action_correlation_mismatch: e(
    -32006,
    "action_correlation_mismatch",
    false,
    (id) => `action event correlation changed for call ${id}`,
  ),
  action_result_mismatch: e(
    -32006,
    "action_result_mismatch",
    false,
    (id) => `successful action result call id does not match completed call ${id}`,
  ),
  duplicate_media_stream: e(-32006, "duplicate_media_stream", false, (id) => `media stream id is already used: ${id}`),
  invalid_media_stream: e(-32006, "invalid_media_stream", false, "media stream declaration is invalid"),
  media_stream_not_active: e(-32006, "media_stream_not_active", false, (id) => `media stream is not active: ${id}`),
  store_media_frame_out_of_order: e(-32006, "media_frame_out_of_order", false, "media stream frame is out of order"),
  media_frame_mismatch: e(
    -32006,
    "media_frame_mismatch",
    false,
    "media stream frame does not match its declared stream",
  ),
  media_frame_count_mismatch: e(
    -32006,
    "media_frame_count_mismatch",
    false,
    "media stream ended with an inconsistent frame count",
  ),
  event_sequence_exhausted: e(
    -32006,
    "event_sequence_exhausted",
    false,
    (id) => `event sequence exhausted for session: ${id}`,
  ),
  event_cursor_ahead: e(-32006, "event_cursor_ahead", false, (s) => `session ${s}`),
  invalid_page_limit: e(-32006, "invalid_page_limit", false, (n) => `event page limit ${n} is outside 1..=1000`),
  event_store_shutting_down: e(-32006, "event_store_shutting_down", false, "event store is shutting down"),
  timestamp_out_of_range: e(
    -32006,
    "timestamp_out_of_range",
    false,
    "timestamp exceeds the cross-language safe integer limit",
  ),
  event_store_error: e(-32006, "event_store_error", true, (t) => `event store failed: ${t}`),
  // Never retryable: the device may already have acted, and a blind retry would act twice.
  action_outcome_unknown: e(
    -32006,
    "action_outcome_unknown",
    false,
    (id) =>
      `the outcome of action ${id} could not be recorded; it may have run on the device: observe the device before retrying`,
  ),
  // Event stream (−32013)
  stream_capability_limit: e(-32013, "stream_capability_limit", true, "event stream capability limit reached"),
  stream_server_shutdown: e(-32013, "stream_server_shutdown", true, "event stream server is shutting down"),
  stream_transport_error: e(-32013, "stream_transport_error", false, "event stream transport failed"),
  stream_cursor_session_mismatch: e(
    -32013,
    "stream_cursor_session_mismatch",
    false,
    "event cursor belongs to another Session",
  ),
  stream_capability_session_mismatch: e(
    -32013,
    "stream_cursor_session_mismatch",
    false,
    "stream capability and subscription identify different Sessions",
  ),
  stream_cursor_epoch_mismatch: e(
    -32013,
    "stream_cursor_epoch_mismatch",
    true,
    "event cursor belongs to another daemon lifetime",
  ),
  stream_session_deleted: e(-32013, "stream_session_deleted", false, "event stream Session was already deleted"),
  stream_cursor_ahead: e(-32013, "stream_cursor_ahead", false, "event cursor is ahead of the Session head"),
  stream_cursor_too_old: e(
    -32013,
    "stream_cursor_too_old",
    true,
    "event replay suffix exceeds the bounded replay limit",
  ),
  stream_subscription_limit: e(-32013, "stream_subscription_limit", true, "Session reached its event subscriber limit"),
  stream_internal_error: e(-32013, "stream_internal_error", false, "event stream Core failed"),
  // events.stream.terminal errors (docs/protocol/event-stream.md#terminals): ErrorInfo only, never an RPC error, so the number is unused.
  stream_terminal_slow_queue: e(-32013, "stream_slow_consumer", true, "subscriber exceeded its bounded queue"),
  stream_terminal_slow_tail: e(-32013, "stream_slow_consumer", true, "subscriber fell behind the bounded Core tail"),
  stream_terminal_session_deleted: e(-32013, "stream_session_deleted", false, "the streamed Session was deleted"),
  stream_terminal_event_too_large: e(
    -32013,
    "stream_event_too_large",
    false,
    "one event exceeds the WebSocket message limit",
  ),
  stream_event_protocol_incompatible: e(
    -32013,
    "stream_event_protocol_incompatible",
    false,
    "an event requires a newer negotiated protocol version",
  ),
  stream_terminal_internal: e(-32013, "stream_internal_error", false, "event stream feeder stopped unexpectedly"),
  // Device pool / lease (−32014)
  device_lease_active: e(
    -32014,
    "device_lease_active",
    false,
    "end the active session before selecting another device",
  ),
  device_health_unknown: e(-32014, "device_health_unknown", true, (id) => `device health is unknown: ${id}`),
  device_health_stale: e(-32014, "device_health_stale", true, (id) => `device health is stale: ${id}`),
  device_unhealthy: e(-32014, "device_unhealthy", true, (s) => `device is unhealthy: ${s}`),
  device_in_use: e(-32014, "device_in_use", true, (id) => `device is leased by another owner: ${id}`),
  device_lease_expired: e(-32014, "device_lease_expired", true, "device lease has expired"),
  device_lease_not_found: e(-32014, "device_lease_not_found", true, "device lease was not found"),
  device_lease_mismatch: e(
    -32014,
    "device_lease_mismatch",
    false,
    "device lease does not match the requested device or owner",
  ),
  pool_device_not_found: e(-32014, "device_not_found", false, (id) => `device is not in the pool: ${id}`),
  device_registration_changed: e(
    -32014,
    "device_registration_changed",
    true,
    (id) => `device registration changed before the operation completed: ${id}`,
  ),
  device_pool_error: e(-32014, "device_pool_error", false, "invalid device pool configuration"),
  // Remote authentication (−32015)
  authentication_required: e(-32015, "authentication_required", false, "remote authentication failed"),
  authentication_failed: e(-32015, "authentication_failed", false, "remote authentication failed"),
  auth_request_invalid: e(-32015, "auth_request_invalid", false, "remote authentication failed"),
  auth_challenge_pending: e(-32015, "auth_challenge_pending", false, "remote authentication failed"),
  auth_attempt_limit: e(-32015, "auth_attempt_limit", false, "remote authentication failed"),
  auth_random_unavailable: e(-32015, "auth_random_unavailable", false, "remote authentication failed"),
  auth_configuration_invalid: e(-32015, "auth_configuration_invalid", false, "remote authentication failed"),
  permission_denied: e(
    -32015,
    "permission_denied",
    false,
    "the authenticated principal is not permitted to call this method",
  ),
  method_not_permitted_on_transport: e(
    -32015,
    "method_not_permitted_on_transport",
    false,
    (m) => `${m} is privileged and not permitted on this transport: use stdio, the Unix socket or TCP NDJSON`,
  ),
  // Media stream (−32016)
  media_stream_conflict: e(
    -32016,
    "media_stream_conflict",
    false,
    "media stream id is already bound to different metadata",
  ),
  media_stream_busy: e(-32016, "media_stream_busy", true, "another capture is already in flight for this stream"),
  media_stream_owner_conflict: e(
    -32016,
    "media_stream_owner_conflict",
    false,
    "media stream id belongs to another Session or device",
  ),
  media_stream_sensitive_action_in_flight: e(
    -32016,
    "media_stream_sensitive_action_in_flight",
    true,
    "cannot start media capture while a protected or unknown action is in flight",
  ),
  media_stream_protected_action_blocked: e(
    -32016,
    "media_stream_protected_action_blocked",
    true,
    "protected or unknown actions are disabled while media capture is active",
  ),
  media_stream_active_limit: e(-32016, "media_stream_active_limit", true, "too many media streams are active"),
  media_stream_session_limit: e(
    -32016,
    "media_stream_session_limit",
    false,
    "the Session media stream limit was reached",
  ),
  media_stream_not_found: e(-32016, "media_stream_not_found", false, "media stream is not owned by this connection"),
  media_stream_session_mismatch: e(
    -32016,
    "media_stream_session_mismatch",
    false,
    "media stream does not belong to the active Session",
  ),
  media_stream_device_changed: e(
    -32016,
    "media_stream_device_changed",
    false,
    "selected media producer differs from the stream owner",
  ),
  invalid_media_frame: e(-32016, "invalid_media_frame", false, "media frame metadata is invalid"),
  media_frame_retry_conflict: e(
    -32016,
    "media_frame_retry_conflict",
    false,
    "frame retry metadata differs from the committed frame",
  ),
  media_stream_ended: e(-32016, "media_stream_ended", false, "media stream is already ended"),
  media_stream_poisoned: e(
    -32016,
    "media_stream_poisoned",
    false,
    "media stream encountered an ambiguous frame append and must be ended",
  ),
  media_frame_out_of_order: e(
    -32016,
    "media_frame_out_of_order",
    false,
    "media frame index is not the next expected index",
  ),
  media_stream_frame_limit: e(-32016, "media_stream_frame_limit", false, "media stream frame limit was reached"),
  media_capture_rate_limited: e(
    -32016,
    "media_capture_rate_limited",
    true,
    "media capture rate exceeds the per-stream limit",
  ),
  media_capture_unavailable: e(
    -32016,
    "media_capture_unavailable",
    true,
    "selected device did not return screenshot Evidence",
  ),
  media_capture_format_unsupported: e(
    -32016,
    "media_capture_format_unsupported",
    false,
    "selected device screenshot is not image/png",
  ),
  media_frame_state_mismatch: e(
    -32016,
    "media_frame_state_mismatch",
    false,
    "media writer frame index differs from daemon admission state",
  ),
  media_stream_close_timed_out: e(-32016, "media_stream_close_timed_out", true, "timed out while closing media stream"),
  media_stream_close_failed: e(-32016, "media_stream_close_failed", true, "media stream close task failed"),
  // UI snapshot (−32017)
  ui_snapshot_not_found: e(
    -32017,
    "ui_snapshot_not_found",
    false,
    "the Observation does not exist in the active Session",
  ),
  ui_snapshot_unavailable: e(
    -32017,
    "ui_snapshot_unavailable",
    false,
    "the Observation does not contain a UI snapshot",
  ),
  invalid_ui_snapshot: e(-32017, "invalid_ui_snapshot", false, "the stored UI snapshot is invalid"),
  ui_snapshot_read_failed: e(-32017, "ui_snapshot_read_failed", true, "the UI snapshot could not be read"),
  // Codes that appear only inside events
  action_cancelled: e(-32007, "action_cancelled", false, (r) => `request was cancelled: ${r}`),
  action_timeout: e(-32008, "action_timeout", true, (n) => `Action timed out after ${n} ms`),
} as const satisfies Record<string, ErrorEntry>;

/**
 * The numbers devicerail's own surfaces use, outside the reference protocol: JSON-RPC's
 * implementation-defined server range ends at −32099, and devicerail counts down from there, one
 * number per surface, so no future protocol code (the protocol counts up from −32000) can collide.
 * Clients branch on `data.code`, as for every error; the number only names the surface.
 */
export const EXTENSION_RANGE = { min: -32099, max: -32090 } as const;
export const EXTENSION_SURFACES: Readonly<Record<number, { surface: string; sent: string }>> = {
  [-32099]: { surface: "the farm's HTTP routes (`POST /farm/acquire`, `/farm/release`)", sent: "HTTP response" },
  [-32098]: {
    surface:
      "MCP tool results (`isError`, `structuredContent.error` has the ErrorInfo fields; the number is never sent)",
    sent: "MCP tool result",
  },
  [-32097]: {
    surface: "the CLI's own failures in its `--json` error output (see the README's CLI section)",
    sent: "CLI `--json`",
  },
};

/**
 * devicerail's extension codes (docs/protocol/errors.md#extensions). A surface also answers with
 * protocol codes (an HTTP route's invalid_params is the protocol's −32602); these are the codes only
 * it has.
 */
export const EXTENSION_ERRORS = {
  // Farm (−32099)
  farm_no_matching_device: e(-32099, "farm_no_matching_device", false, "no device in the farm matches the request"),
  farm_acquire_timed_out: e(-32099, "farm_acquire_timed_out", true, "no matching device became free in time"),
  farm_unavailable: e(-32099, "farm_unavailable", true, "the farm database is unreachable"),
  // MCP tools (−32098)
  stale_ref: e(-32098, "stale_ref", false, "the ref is not on the current screen: observe again"),
  unsupported_on_device: e(-32098, "unsupported_on_device", false, "the device has no action for this tool"),
  unknown_tool: e(-32098, "unknown_tool", false, (t) => `there is no tool ${t}`),
  // CLI (−32097)
  cli_usage: e(-32097, "usage_error", false, "the command line is not valid: see devicerail --help"),
  cli_failed: e(-32097, "command_failed", false, "the command failed"),
  cli_daemon_not_running: e(-32097, "daemon_not_running", false, "no devicerail daemon runs on this data directory"),
  cli_interrupted: e(-32097, "interrupted", false, "interrupted"),
  cli_unexpected: e(-32097, "unexpected_error", false, "unexpected error"),
} as const satisfies Record<string, ErrorEntry>;

/** The one error table: the protocol's codes and devicerail's extensions. */
export const ERRORS = { ...PROTOCOL_ERRORS, ...EXTENSION_ERRORS } as const;

export type ErrorName = keyof typeof ERRORS;

export interface ErrorOptions {
  /** Argument of a templated message (method, id, count …). */
  arg?: string | number;
  details?: unknown;
  /** Overrides the entry's default (platform errors choose their own). */
  retryable?: boolean;
  /** Overrides the message (store texts with more than one variable part). */
  message?: string;
}

export function errorInfo(name: ErrorName, opts: ErrorOptions = {}): ErrorInfo {
  const entry: ErrorEntry = ERRORS[name];
  const message =
    opts.message ?? (typeof entry.message === "function" ? entry.message(String(opts.arg ?? "")) : entry.message);
  return {
    code: entry.code,
    message,
    retryable: opts.retryable ?? entry.retryable,
    details: opts.details === undefined ? null : opts.details,
  };
}

export function errorObject(name: ErrorName, opts: ErrorOptions = {}): RpcErrorObject {
  const data = errorInfo(name, opts);
  return { code: ERRORS[name].numeric, message: data.message, data };
}

/** Every distinct numeric code the protocol uses (extensions excluded). */
export const NUMERIC_CODES = [...new Set(Object.values(PROTOCOL_ERRORS).map((x) => x.numeric))].sort((a, b) => b - a);

export const isExtension = (name: ErrorName): name is keyof typeof EXTENSION_ERRORS =>
  Object.hasOwn(EXTENSION_ERRORS, name);

/** The message of anything thrown, for a log line or a reason: an Error's message, else its text. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
