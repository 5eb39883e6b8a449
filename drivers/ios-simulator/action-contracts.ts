/**
 * The iOS Simulator action space, declared once: scripts/gen-protocol.ts writes each action's
 * advertised JSON Schema from these valibot schemas (src/protocol/generated/drivers/
 * ios-simulator-actions.json), and execute validates calls with the same schemas. Whatever a
 * schema checks beyond what JSON Schema can say carries v.metadata stating it for the document.
 * Coordinates, deltas and durations are bounded as on Android (docs/protocol/limits.md#devices-and-actions).
 */
import * as v from "valibot";
import {
  DURATION_MS,
  PIXEL,
  POINT_ARGUMENTS,
  SCROLL_ARGUMENTS,
  SWIPE_ARGUMENTS,
  URL_ARGUMENT,
} from "../../src/protocol/driver-arguments.ts";
import { cpString } from "../../src/protocol/ids.ts";
import type { ActionContract } from "../../src/driver/action-space.ts";

/** HID usage codes of the keys keyPress offers. */
export const KEYS = {
  enter: 40,
  escape: 41,
  delete: 42,
  tab: 43,
  space: 44,
  arrowRight: 79,
  arrowLeft: 80,
  arrowDown: 81,
  arrowUp: 82,
} as const;
type KeyName = keyof typeof KEYS;
const KEY_NAMES = Object.keys(KEYS) as [KeyName, ...KeyName[]];

const BUNDLE = v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/));

/** What every backend can do: simctl alone. */
export const SIMCTL_CONTRACTS = [
  {
    name: "launch",
    description: "Launch an installed app by bundle id",
    arguments: v.strictObject({ bundleId: BUNDLE }),
  },
  {
    name: "terminate",
    description: "Terminate a running app by bundle id",
    arguments: v.strictObject({ bundleId: BUNDLE }),
  },
  {
    name: "openUrl",
    description: "Open a URL or deep link in the simulator",
    arguments: v.strictObject({ url: URL_ARGUMENT }),
  },
  {
    name: "setAppearance",
    description: "Switch the simulator between light and dark appearance",
    arguments: v.strictObject({ appearance: v.picklist(["light", "dark"]) }),
  },
] as const satisfies readonly ActionContract[];

/** Every action, in the order AXe offers them: input at screenshot-pixel coordinates, keys, the home button, text. */
export const IOS_CONTRACTS = [
  { name: "tap", description: "Tap one point in screenshot pixels", arguments: POINT_ARGUMENTS },
  { name: "doubleTap", description: "Tap one point twice in quick succession", arguments: POINT_ARGUMENTS },
  {
    name: "longPress",
    description: "Press and hold one point in screenshot pixels",
    arguments: v.strictObject({ x: PIXEL, y: PIXEL, durationMs: v.optional(DURATION_MS) }),
  },
  {
    name: "swipe",
    description: "Swipe between two points in screenshot pixels",
    arguments: SWIPE_ARGUMENTS,
  },
  {
    name: "scroll",
    description: "Scroll by a screenshot-pixel delta with a gesture centred on the screen",
    arguments: SCROLL_ARGUMENTS,
  },
  {
    name: "inputText",
    description: "Type text into the focused control: US-keyboard text through AXe, other text by pasting",
    arguments: v.strictObject({ text: cpString(1, 4096) }),
  },
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
