/**
 * The iOS Simulator action space, declared once: scripts/gen-protocol.ts writes each action's
 * advertised JSON Schema from these valibot schemas (src/protocol/generated/drivers/
 * ios-simulator-actions.json), and execute validates calls with the same schemas. Whatever a
 * schema checks beyond what JSON Schema can say carries v.metadata stating it for the document.
 * Coordinates, deltas and durations are bounded as on Android (docs/protocol/limits.md#devices-and-actions).
 */
import * as v from "valibot";
import { cpString, int } from "../../src/protocol/ids.ts";
import type { ActionContract } from "../../src/driver/action-space.ts";

/** HID usage codes of the keys keyPress offers. */
export const KEYS = { enter: 40, escape: 41, delete: 42, tab: 43, space: 44, arrowRight: 79, arrowLeft: 80, arrowDown: 81, arrowUp: 82 } as const;
type KeyName = keyof typeof KEYS;
const KEY_NAMES = Object.keys(KEYS) as [KeyName, ...KeyName[]];
/** A scheme, then 1 to 4096 code points without whitespace or controls (JSON Schema patterns are unicode). */
const URL_PATTERN = "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s\\u0000-\\u001f\\u007f]{1,4096}$";
const URL_RE = new RegExp(URL_PATTERN, "u");

const U32 = int(0, 4_294_967_295);
const DURATION_MS = int(1, 60_000);
const DELTA = int(-100_000, 100_000);
const BUNDLE = v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/));
const URL = v.pipe(cpString(3, 4200), v.metadata({ pattern: URL_PATTERN }), v.check((s) => URL_RE.test(s)));

/** What every backend can do: simctl alone. */
export const SIMCTL_CONTRACTS = [
  { name: "launch", description: "Launch an installed app by bundle id", arguments: v.strictObject({ bundleId: BUNDLE }) },
  { name: "terminate", description: "Terminate a running app by bundle id", arguments: v.strictObject({ bundleId: BUNDLE }) },
  { name: "openUrl", description: "Open a URL or deep link in the simulator", arguments: v.strictObject({ url: URL }) },
  { name: "setAppearance", description: "Switch the simulator between light and dark appearance", arguments: v.strictObject({ appearance: v.picklist(["light", "dark"]) }) },
] as const satisfies readonly ActionContract[];

/** Every action, in the order AXe offers them: input at screenshot-pixel coordinates, keys, the home button, text. */
export const IOS_CONTRACTS = [
  { name: "tap", description: "Tap one point in screenshot pixels", arguments: v.strictObject({ x: U32, y: U32 }) },
  { name: "doubleTap", description: "Tap one point twice in quick succession", arguments: v.strictObject({ x: U32, y: U32 }) },
  { name: "longPress", description: "Press and hold one point in screenshot pixels", arguments: v.strictObject({ x: U32, y: U32, durationMs: v.optional(DURATION_MS) }) },
  {
    name: "swipe",
    description: "Swipe between two points in screenshot pixels",
    arguments: v.strictObject({ startX: U32, startY: U32, endX: U32, endY: U32, durationMs: DURATION_MS }),
  },
  {
    name: "scroll",
    description: "Scroll by a screenshot-pixel delta with a gesture centred on the screen",
    arguments: v.pipe(
      v.strictObject({ deltaX: DELTA, deltaY: DELTA }),
      v.check((a) => a.deltaX !== 0 || a.deltaY !== 0),
      v.metadata({ not: { required: ["deltaX", "deltaY"], properties: { deltaX: { const: 0 }, deltaY: { const: 0 } } } }),
    ),
  },
  { name: "inputText", description: "Type text into the focused control: US-keyboard text through AXe, other text by pasting", arguments: v.strictObject({ text: cpString(1, 4096) }) },
  { name: "keyPress", description: "Press one key", arguments: v.strictObject({ key: v.picklist(KEY_NAMES) }) },
  { name: "home", description: "Press the Home button", arguments: v.strictObject({}) },
  ...SIMCTL_CONTRACTS,
  {
    name: "inputSecret",
    description: "Type a protected value into the focused control; it travels only on stdin",
    arguments: v.strictObject({ secret: cpString(1, 1024) }),
    protection: "protected",
  },
] as const satisfies readonly ActionContract[];

export type IosContract = (typeof IOS_CONTRACTS)[number];
