/**
 * The protocol's HTTP binding, shared by every HTTP route (the API, MCP, the live report, the farm):
 * the status of each error code, error and JSON bodies, the body limit and media type, the rule
 * for requests a web page sent (docs/protocol/transport-and-framing.md#privileged-methods), and
 * streamed text bodies. Web-standard Request and Response only, so any surface may use it.
 */
import { type ErrorName, type ErrorOptions, errorObject } from "./errors.ts";
import { MAX_FRAME_BYTES } from "./limits.ts";

/** Request bodies larger than this are refused with 413 (the same limit as one NDJSON line). */
export const MAX_BODY_BYTES = MAX_FRAME_BYTES;

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
 * A request a web page sent: browsers add Origin to a cross-origin fetch in CORS mode and to
 * every non-GET request, and a page cannot remove it. Such a request runs no privileged call
 * (docs/protocol/transport-and-framing.md#privileged-methods). The daemon's own pages (the live
 * report) fetch same-origin GETs, which carry no Origin, and the HTTP guard refuses other sites'
 * requests that carry none (Sec-Fetch-Site).
 */
export const sentByPage = (req: Request): boolean => req.headers.has("origin");

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

/**
 * An HTTP body written as `chunks` come: each is produced only when the client has read the one
 * before (a pull stream with no queue), so a slow reader holds back the reads behind it instead
 * of letting them pile up in memory. `finish` runs once, at the end, on an error or when the
 * client goes away.
 */
export function textStream(
  chunks: AsyncGenerator<string>,
  finish: () => Promise<void> | void = () => {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let finished = false;
  const end = async () => {
    if (finished) return;
    finished = true;
    await finish();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const next = await chunks.next();
            if (next.done) {
              controller.close();
              await end();
              return;
            }
            if (next.value.length) {
              controller.enqueue(encoder.encode(next.value));
              return;
            }
          }
        } catch (err) {
          controller.error(err);
          await end();
        }
      },
      async cancel() {
        await chunks.return(undefined);
        await end();
      },
    },
    { highWaterMark: 0 },
  );
}
