import type { ErrorName } from "../protocol/errors.ts";
import { type IssueDetail, MAX_ISSUE_DETAILS } from "../protocol/issue-details.ts";
import { RpcError } from "../protocol/rpc-error.ts";

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
    opts: {
      deviceId?: string;
      action?: string;
      platformCode?: string;
      retryable?: boolean;
      detail?: string;
      message?: string;
      /** Keys after `action` for unknown_action and invalid_arguments; see DriverError.withDetails. */
      details?: Readonly<Record<string, unknown>>;
    } = {},
  ) {
    const name: ErrorName = code === "internal_error" ? "driver_internal_error" : code;
    let details: unknown = null;
    let arg = "";
    if (code === "device_not_connected") {
      details = { deviceId: opts.deviceId ?? "" };
      arg = opts.deviceId ?? "";
    } else if (code === "unknown_action" || code === "invalid_arguments") {
      details = { action: opts.action ?? "", ...opts.details };
      arg = opts.action ?? "";
    } else if (code === "platform_error") {
      // Codes outside the protocol's pattern are replaced rather than sent (docs/protocol/errors.md#-32000).
      details = {
        platformCode: opts.platformCode && PLATFORM_CODE.test(opts.platformCode) ? opts.platformCode : "unknown",
      };
    }
    super(name, {
      arg,
      details,
      ...(opts.retryable !== undefined ? { retryable: opts.retryable } : {}),
      ...(opts.message ? { message: opts.message } : {}),
    });
    this.name = "DriverError";
    this.driverCode = code;
    this.detail = opts.detail;
    // Only the codes that mean a driver or device fault; the others are the client's to act on.
    if (code === "protocol_error" || code === "internal_error") this.logDetail = opts.detail ?? this.message;
  }

  /** The platform's own code of a platform_error (details.platformCode), null for other errors. */
  get platformCode(): string | null {
    if (this.driverCode !== "platform_error") return null;
    return (this.error.data.details as { platformCode: string }).platformCode;
  }

  /**
   * unknown_action or invalid_arguments with keys that help fix the call besides `action`
   * (availableActions; pointer, expected, received, issues). Callers write the details as one
   * object literal so that the error-site scan (scripts/error-sites.ts) lists their keys in
   * docs/protocol/errors.md.
   */
  static withDetails(
    code: "unknown_action" | "invalid_arguments",
    details: { readonly action: string } & Readonly<Record<string, unknown>>,
  ): DriverError {
    const { action, ...rest } = details;
    return new DriverError(code, { action, details: rest });
  }
}

/**
 * invalid_arguments saying what to fix (docs/protocol/errors.md#-32000): the first refused
 * location spelled out, and every one (at most MAX_ISSUE_DETAILS) in `issues`. Pointers are
 * relative to the action's arguments object. `issues` must not be empty.
 */
export function invalidArguments(action: string, issues: readonly IssueDetail[]): DriverError {
  const first = issues[0] as IssueDetail;
  return DriverError.withDetails("invalid_arguments", {
    action,
    pointer: first.pointer,
    expected: first.expected,
    received: first.received,
    issues: issues.slice(0, MAX_ISSUE_DETAILS),
  });
}
