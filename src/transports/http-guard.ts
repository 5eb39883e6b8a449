import { type ErrorName, type ErrorOptions, errorObject } from "../protocol/errors.ts";
import type { ConnectionGrant } from "../rpc/connection.ts";
import type { AccessToken, GrantIssuer } from "./token.ts";
import type { ViewerPasses } from "./viewer-passes.ts";

/** Request bodies larger than this are refused with 413 (the same limit as one NDJSON line). */
export const MAX_BODY_BYTES = 1_048_576;

/** Who may talk to the HTTP side, decided before any route runs. */
export interface HttpPolicy {
  /** Exact Host header values accepted; null = any (a Unix socket, or a token-guarded public bind). */
  hosts: ReadonlySet<string> | null;
  /** Exact Origin values accepted; a request without Origin is a non-browser client. */
  origins: ReadonlySet<string>;
  token: AccessToken | null;
  /** Credentials other than the token, honoured on the JSON-RPC WebSocket (`/rpc`) only. */
  grants?: GrantIssuer | null;
  /** A browser's tickets and view keys for the live report, honoured on its GETs only (viewer-passes.ts). */
  viewer?: ViewerPasses | null;
}

/** The Host values a loopback listener on `port` accepts: the three spellings of loopback a browser sends. */
export const loopbackHosts = (port: number): ReadonlySet<string> =>
  new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);

export const NO_STORE = { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" };

/** `{"error":{code,message,data}}` with `status`; `errorJson` is an already encoded error object. */
export function errorResponse(status: number, errorJson: string, headers: Record<string, string> = {}): Response {
  return new Response(`{"error":${errorJson}}`, {
    status,
    headers: { "Content-Type": "application/json", ...NO_STORE, ...headers },
  });
}

/**
 * The HTTP status that fits an error, by its `data.code`, for every HTTP route (the API, the report,
 * the farm); anything unlisted is a 500. `request_cancelled` is 503 everywhere: the server did not
 * finish the request (it shuts down, or the client hung up and reads no answer).
 */
const STATUS: Record<string, number> = {};
const status = (code: number, names: string[]) => names.forEach((n) => (STATUS[n] = code));
status(400, [
  "parse_error",
  "invalid_request",
  "invalid_params",
  "invalid_arguments",
  "feature_not_negotiated",
  "request_timeout_not_supported",
  "device_selection_required",
]);
status(400, [
  "protected_action_not_negotiated",
  "semantic_action_not_negotiated",
  "invalid_page_limit",
  "event_cursor_ahead",
  "invalid_evidence_digest",
]);
status(401, ["authentication_required", "authentication_failed"]);
status(403, ["permission_denied", "method_not_permitted_on_transport"]);
status(404, [
  "method_not_found",
  "unknown_action",
  "device_not_found",
  "session_not_found",
  "evidence_not_found",
  "ui_snapshot_not_found",
]);
status(404, ["farm_no_matching_device"]);
status(408, ["farm_acquire_timed_out"]);
status(409, [
  "device_in_use",
  "device_lease_active",
  "session_busy",
  "session_active",
  "session_already_active",
  "session_ended",
  "duplicate_action_call",
]);
status(409, ["device_lease_expired", "device_lease_not_found", "device_lease_mismatch", "device_registration_changed"]);
status(422, [
  "element_not_found",
  "element_ambiguous",
  "element_stale",
  "element_not_interactable",
  "ui_context_not_found",
  "ui_context_ambiguous",
  "ui_context_changed",
]);
status(429, ["too_many_requests"]);
status(503, [
  "device_not_connected",
  "device_unhealthy",
  "device_health_unknown",
  "device_health_stale",
  "media_capture_unavailable",
  "ui_snapshot_unavailable",
]);
status(503, [
  "semantic_channel_unavailable",
  "event_store_shutting_down",
  "request_cancelled",
  "evidence_store_unavailable",
  "stream_server_shutdown",
]);
status(503, ["farm_unavailable"]);
status(504, ["request_timed_out", "action_timed_out", "driver_timed_out"]);
status(413, ["response_frame_too_large"]);

export const httpStatusOf = (dataCode: string): number => STATUS[dataCode] ?? 500;

/**
 * An error answer built from the error table: the status from `httpStatusOf` unless the route
 * needs another (405 for a wrong HTTP method, 415, 413 for a body).
 */
export const httpError = (
  name: ErrorName,
  opts: ErrorOptions = {},
  http: { status?: number; headers?: Record<string, string> } = {},
) => {
  const error = errorObject(name, opts);
  return errorResponse(http.status ?? httpStatusOf(error.data.code), JSON.stringify(error), http.headers);
};

/** A 200 answer with a JSON body, never cached. */
export const jsonResponse = (body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status: 200, headers: { "Content-Type": "application/json", ...NO_STORE, ...headers } });

export const refusal = (
  status: number,
  name: ErrorName,
  message: string,
  details: Record<string, unknown>,
  headers?: Record<string, string>,
) => httpError(name, { message, details }, { status, headers });

/**
 * Browser protection (SEC-2, SEC-3): the exact Host (DNS rebinding: a page on evil.test that
 * resolves to 127.0.0.1 still sends `Host: evil.test:PORT`), the Origin allow-list (Bun joins
 * duplicate headers with ", ", which then matches nothing), Sec-Fetch-Site for requests that carry
 * no Origin (an `<img>` or `<script>` GET from another site), then the token. Returns the refusal,
 * or null when the request may be routed.
 */
export function admit(req: Request, policy: HttpPolicy): Response | null {
  const h = req.headers;
  const host = h.get("host");
  if (policy.hosts && (host === null || !policy.hosts.has(host)))
    return refusal(
      403,
      "permission_denied",
      "request refused: the Host header is not an allowed loopback name and port",
      { reason: "hostNotAllowed" },
    );
  const origin = h.get("origin");
  if (origin !== null && !policy.origins.has(origin))
    return refusal(
      403,
      "permission_denied",
      "request refused: the Origin is not on the allow-list (DEVICERAIL_ALLOWED_ORIGINS)",
      { reason: "originNotAllowed" },
    );
  const site = h.get("sec-fetch-site");
  if (origin === null && site !== null && site !== "none" && site !== "same-origin")
    return refusal(403, "permission_denied", "request refused: cross-site browser requests are not accepted", {
      reason: "crossSiteRequest",
    });
  if (policy.token) {
    const auth = policy.token.matchesAuthorization(h.get("authorization"));
    if (auth === "missing")
      return refusal(
        401,
        "authentication_required",
        "remote authentication failed",
        { reason: "missingBearerToken" },
        { "WWW-Authenticate": "Bearer" },
      );
    if (auth === "wrong")
      return refusal(
        401,
        "authentication_failed",
        "remote authentication failed",
        { reason: "wrongBearerToken" },
        { "WWW-Authenticate": "Bearer" },
      );
  }
  return null;
}

/**
 * The grant a request's bearer credential opens, when it is not the host's token but a credential
 * the policy's issuer honours (a farm allocation's). Only the JSON-RPC WebSocket asks: a grant opens
 * one device's control connection, not the HTTP routes.
 */
export function grantOf(req: Request, policy: HttpPolicy): ConnectionGrant | null {
  if (!policy.token || !policy.grants) return null;
  const header = req.headers.get("authorization");
  if (policy.token.matchesAuthorization(header) !== "wrong") return null;
  const credential = /^bearer +(\S+)$/i.exec(header ?? "")?.[1];
  return credential ? policy.grants(credential) : null;
}

/** POST bodies must be declared JSON: a browser form or a no-cors fetch cannot send that type without a preflight. */
export function checkJsonContentType(req: Request): Response | null {
  const type = req.headers.get("content-type");
  const essence = type?.split(";", 1)[0]?.trim().toLowerCase();
  if (essence === "application/json") return null;
  return refusal(415, "invalid_request", "request refused: the body must be sent with Content-Type: application/json", {
    reason: "unsupportedMediaType",
    contentType: type,
  });
}

// The unread rest of the body cannot be skipped cheaply, so the connection ends with the answer.
const tooLarge = () =>
  refusal(
    413,
    "invalid_request",
    "request refused: the body exceeds 1048576 bytes",
    { reason: "bodyTooLarge", limitBytes: MAX_BODY_BYTES },
    { Connection: "close" },
  );

/** Reads the body as UTF-8 text, at most MAX_BODY_BYTES (chunked bodies too); a Response is the refusal. */
export async function readBody(req: Request): Promise<string | Response> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) return tooLarge();
  if (!req.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of req.body) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return tooLarge();
      chunks.push(chunk);
    }
  } catch {
    // Bun aborts a chunked body past maxRequestBodySize while it is read.
    return tooLarge();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return refusal(400, "request_not_utf8", "request body is not valid UTF-8", { reason: "invalidUtf8" });
  }
}
