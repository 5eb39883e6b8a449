/**
 * Argument shapes that the touch-screen drivers (Android, iOS Simulator) share, with the bounds of
 * docs/protocol/limits.md#devices-and-actions: pixel coordinates, gesture durations, scroll deltas
 * (never both 0) and URLs. Each driver's action contracts are built from these, so the two agree
 * wherever the protocol says they should.
 */
import * as v from "valibot";
import { cpString, int } from "./ids.ts";

/** A scheme, then 1 to 4096 code points without whitespace or controls (JSON Schema patterns are unicode). */
const URL_PATTERN = "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s\\u0000-\\u001f\\u007f]{1,4096}$";
const URL_RE = new RegExp(URL_PATTERN, "u");

/** The keyboard keys of the reference's keyPress (Android's contract; MCP's press_key adds the system keys). */
export const REFERENCE_KEYS = [
  "enter",
  "tab",
  "escape",
  "delete",
  "space",
  "arrowUp",
  "arrowDown",
  "arrowLeft",
  "arrowRight",
] as const;

export const PIXEL = int(0, 4_294_967_295);
export const DURATION_MS = int(1, 60_000);
export const URL_ARGUMENT = v.pipe(
  cpString(3, 4200),
  v.metadata({ pattern: URL_PATTERN }),
  v.check((s) => URL_RE.test(s)),
);

export const POINT_ARGUMENTS = v.strictObject({ x: PIXEL, y: PIXEL });
export const SWIPE_ARGUMENTS = v.strictObject({
  startX: PIXEL,
  startY: PIXEL,
  endX: PIXEL,
  endY: PIXEL,
  durationMs: DURATION_MS,
});

const DELTA = int(-100_000, 100_000);
/** A scroll by a delta; 0/0 moves nothing and is refused, which the document states with `not`. */
export const SCROLL_ARGUMENTS = v.pipe(
  v.strictObject({ deltaX: DELTA, deltaY: DELTA }),
  v.check((a) => a.deltaX !== 0 || a.deltaY !== 0),
  v.metadata({ not: { required: ["deltaX", "deltaY"], properties: { deltaX: { const: 0 }, deltaY: { const: 0 } } } }),
);
