import type { ErrorName } from "../protocol/errors.ts";
import { RpcError } from "../rpc/rpc-error.ts";

/** The −32000 codes a driver may raise (docs/protocol/errors.md#-32000). */
export type DriverErrorCode =
  | "device_not_connected"
  | "unknown_action"
  | "invalid_arguments"
  | "element_not_found"
  | "element_ambiguous"
  | "element_stale"
  | "element_not_interactable"
  | "ui_context_not_found"
  | "ui_context_ambiguous"
  | "ui_context_changed"
  | "semantic_channel_unavailable"
  | "protocol_error"
  | "driver_cancelled"
  | "driver_timed_out"
  | "platform_error"
  | "internal_error";

const PLATFORM_CODE = /^[a-z0-9_.-]{1,64}$/;

/**
 * A driver failure with a stable code. It is an RpcError (numeric −32000), so it reaches the
 * client through the dispatcher's one catch; `detail` is for logs only and never sent.
 */
export class DriverError extends RpcError {
  readonly driverCode: DriverErrorCode;
  readonly detail: string | undefined;

  constructor(
    code: DriverErrorCode,
    opts: { deviceId?: string; action?: string; platformCode?: string; retryable?: boolean; detail?: string; message?: string } = {},
  ) {
    const name: ErrorName = code === "internal_error" ? "driver_internal_error" : code;
    let details: unknown = null;
    let arg = "";
    if (code === "device_not_connected") {
      details = { deviceId: opts.deviceId ?? "" };
      arg = opts.deviceId ?? "";
    } else if (code === "unknown_action" || code === "invalid_arguments") {
      details = { action: opts.action ?? "" };
      arg = opts.action ?? "";
    } else if (code === "platform_error") {
      // Codes outside the protocol's pattern are replaced rather than sent (docs/protocol/errors.md#-32000).
      details = { platformCode: opts.platformCode && PLATFORM_CODE.test(opts.platformCode) ? opts.platformCode : "unknown" };
    }
    super(name, { arg, details, ...(opts.retryable !== undefined ? { retryable: opts.retryable } : {}), ...(opts.message ? { message: opts.message } : {}) });
    this.name = "DriverError";
    this.driverCode = code;
    this.detail = opts.detail;
  }
}
