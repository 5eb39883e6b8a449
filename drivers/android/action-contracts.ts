/**
 * The Android action space, declared once: scripts/gen-protocol.ts writes each action's advertised
 * JSON Schema from these valibot schemas (src/protocol/generated/drivers/android-actions.json),
 * and execute validates calls with the same schemas. Whatever a schema checks beyond what JSON
 * Schema can say carries v.metadata stating it for the document.
 */
import * as v from "valibot";
import {
  DURATION_MS,
  PIXEL,
  POINT_ARGUMENTS,
  REFERENCE_KEYS,
  SCROLL_ARGUMENTS,
  SWIPE_ARGUMENTS,
  URL_ARGUMENT,
} from "../../src/protocol/driver-arguments.ts";
import { cpString } from "../../src/protocol/ids.ts";
import type { ActionContract } from "../../src/driver/action-space.ts";

export const ORIENTATIONS = ["portrait", "landscape", "reversePortrait", "reverseLandscape"] as const;

const PACKAGE = v.pipe(
  v.string(),
  v.minLength(3),
  v.maxLength(255),
  v.regex(/^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$/),
);
/** An activity class of the package: fully qualified, or relative to the package with a leading dot (`.MainActivity`). */
const ACTIVITY = v.pipe(
  v.string(),
  v.minLength(2),
  v.maxLength(255),
  v.regex(/^\.?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/),
);
const NONE = v.strictObject({});

/**
 * The reference's eleven Android actions with their names, descriptions and argument shapes
 * (docs/protocol/devices-and-actions.md#android-devices), then ours. inputText accepts any Unicode text but NUL, which no shell argument can
 * carry (the reference: an ASCII allow-list).
 */
export const ANDROID_CONTRACTS = [
  {
    name: "tap",
    description: "Tap one point in the current Android screenshot coordinate space",
    arguments: POINT_ARGUMENTS,
  },
  {
    name: "keyPress",
    description: "Press one key from DeviceRail's closed Android key set",
    arguments: v.strictObject({ key: v.picklist(REFERENCE_KEYS) }),
  },
  {
    name: "swipe",
    description: "Swipe between two points in the current Android screenshot coordinate space",
    arguments: SWIPE_ARGUMENTS,
  },
  {
    name: "scroll",
    description: "Scroll in the requested direction using a bounded, viewport-safe gesture",
    arguments: SCROLL_ARGUMENTS,
  },
  {
    name: "inputText",
    description:
      "Type text into the focused Android control: through the UiAutomator2 server where it runs, else ASCII through input and other text through io.appium.settings' Unicode IME",
    arguments: v.strictObject({ text: v.pipe(cpString(1, 4096), v.regex(/^[^\u0000]*$/)) }),
  },
  {
    name: "launch",
    description:
      "Launch the package's current-user MAIN/LAUNCHER activity (or the named activity: required when the app has several launcher activities and no default) and wait for completion",
    arguments: v.strictObject({ packageName: PACKAGE, activity: v.optional(ACTIVITY) }),
  },
  {
    name: "terminate",
    description: "Force-stop the package for Android's current user",
    arguments: v.strictObject({ packageName: PACKAGE }),
  },
  { name: "back", description: "Invoke Android system Back navigation", arguments: NONE },
  { name: "home", description: "Invoke Android system Home navigation", arguments: NONE },
  { name: "recentApps", description: "Open Android's system application switcher", arguments: NONE },
  {
    name: "inputSecret",
    description: "Type a protected printable-ASCII value through operation-scoped stdin",
    arguments: v.strictObject({
      secret: v.pipe(
        v.string(),
        v.minLength(1),
        v.maxLength(1024),
        v.regex(/^[\u0020-\u007e]+$/),
        // `input text` reads %s as a space, so a secret holding it could not be typed as given.
        v.check((s) => !s.includes("%s")),
        v.metadata({ not: { pattern: "%s" } }),
      ),
    }),
    protection: "protected",
  },
  {
    name: "longPress",
    description: "Press and hold one point in the current Android screenshot coordinate space",
    arguments: v.strictObject({ x: PIXEL, y: PIXEL, durationMs: v.optional(DURATION_MS) }),
  },
  { name: "doubleTap", description: "Tap one point twice in quick succession", arguments: POINT_ARGUMENTS },
  {
    name: "openUrl",
    description: "Open a URL or deep link with Android's VIEW intent",
    arguments: v.strictObject({ url: URL_ARGUMENT }),
  },
  {
    name: "rotate",
    description: "Lock the screen in one orientation",
    arguments: v.strictObject({ orientation: v.picklist(ORIENTATIONS) }),
  },
  {
    name: "setAnimations",
    description: "Turn the three animation scales off (0) or on (1); the owner's values come back at disconnect",
    arguments: v.strictObject({ enabled: v.boolean() }),
  },
  {
    name: "setLocation",
    description:
      "Mock the phone's location through io.appium.settings' location service (offered where it is installed); ends at disconnect",
    arguments: v.strictObject({
      latitude: v.pipe(v.number(), v.minValue(-90), v.maxValue(90)),
      longitude: v.pipe(v.number(), v.minValue(-180), v.maxValue(180)),
      altitude: v.optional(v.pipe(v.number(), v.minValue(-1_000), v.maxValue(100_000))),
    }),
  },
  {
    name: "clipboardGet",
    description: "Read the clipboard's text through io.appium.settings (offered where it is installed)",
    arguments: NONE,
  },
] as const satisfies readonly ActionContract[];

/** Actions offered only on phones where io.appium.settings is installed (and DEVICERAIL_ANDROID_HELPER is not off). */
export const SETTINGS_APP_ACTIONS: ReadonlySet<string> = new Set(["setLocation", "clipboardGet"]);

export type AndroidContract = (typeof ANDROID_CONTRACTS)[number];
