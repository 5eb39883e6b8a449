import type { RpcErrorObject } from "../protocol/errors.ts";
import { errorObject } from "../protocol/errors.ts";
import type { RpcId } from "../protocol/ids.ts";
import { MAX_FRAME_BYTES } from "../protocol/limits.ts";

const encoder = new TextEncoder();

/** UTF-8 length without encoding when the answer is obvious (≤ 3 bytes per UTF-16 unit). */
export function utf8Length(s: string): number {
  if (s.length * 3 <= MAX_FRAME_BYTES) {
    let ascii = true;
    for (let i = 0; i < s.length; i++)
      if (s.charCodeAt(i) > 0x7f) {
        ascii = false;
        break;
      }
    if (ascii) return s.length;
  }
  return encoder.encode(s).length;
}

export const failureFrame = (id: RpcId | null, error: RpcErrorObject): string =>
  JSON.stringify({ jsonrpc: "2.0", id, error });

/**
 * Encodes a success, replacing it by response_frame_too_large (same id) when the line would exceed
 * the 1 MiB output limit: a client then learns why instead of getting a truncated or missing line.
 */
export function successFrame(id: RpcId, result: unknown): string {
  return withinLimit(id, JSON.stringify({ jsonrpc: "2.0", id, result }));
}

/** response_frame_too_large for a frame over the output limit; null when it fits. */
function tooLarge(frame: string): RpcErrorObject | null {
  if (frame.length <= MAX_FRAME_BYTES / 3) return null;
  const bytes = utf8Length(frame);
  return bytes <= MAX_FRAME_BYTES
    ? null
    : errorObject("response_frame_too_large", { details: { actualBytes: bytes, limitBytes: MAX_FRAME_BYTES } });
}

function withinLimit(id: RpcId | null, frame: string): string {
  const error = tooLarge(frame);
  return error ? failureFrame(id, error) : frame;
}

/** The success frame's text around a result whose JSON is already known. */
const successText = (id: RpcId, resultJson: string) =>
  `{"jsonrpc":"2.0","id":${typeof id === "number" ? id : JSON.stringify(id)},"result":${resultJson}}`;

/** Like successFrame, for a result whose JSON is already known. */
export function successFrameFromJson(id: RpcId, resultJson: string): string {
  return withinLimit(id, successText(id, resultJson));
}

/**
 * For in-process callers, which get values rather than frames: null when the success frame of
 * `resultJson` fits the output limit, else the response_frame_too_large error that would replace
 * it, so they are answered exactly as a socket client would be.
 */
export function oversizedResult(id: RpcId, resultJson: string): RpcErrorObject | null {
  return tooLarge(successText(id, resultJson));
}

export function checkedFailureFrame(id: RpcId | null, error: RpcErrorObject): string {
  return withinLimit(id, failureFrame(id, error));
}
