/**
 * The MCP tools: names, descriptions written for a model, valibot input schemas (JSON Schema for
 * tools/list is generated from them) and annotations. What each one does is in calls.ts.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";

const d = v.description;

const DeviceId = v.pipe(v.string(), v.minLength(1), d("Device id from devices_list, e.g. android-adb:emulator-5554 or mock-1. Required on every device tool; there is no current device."));
const Coordinate = (axis: string) => v.pipe(v.number(), v.finite(), v.minValue(0), d(`${axis} in device pixels (the tree's at= values; an image point divided by the image scale)`));
const Ref = v.pipe(v.string(), v.minLength(1), d('An element ref as printed in the latest device_observe or ui_tree listing of this device, e.g. "@e12"'));

export const SelectorSchema = v.pipe(
  v.strictObject({
    role: v.optional(v.pipe(v.string(), v.minLength(1), d('Element role, e.g. "Button", "TextField", "android.widget.EditText"'))),
    name: v.optional(v.pipe(v.string(), v.minLength(1), d("Accessible name (content description / accessibility label)"))),
    value: v.optional(v.pipe(v.string(), d("Current value of an input"))),
    identifier: v.optional(v.pipe(v.string(), v.minLength(1), d('Resource id or accessibility identifier, as printed after id= in the tree (e.g. "username")'))),
    text: v.optional(
      v.strictObject({
        value: v.pipe(v.string(), v.minLength(1), d("Text to match")),
        mode: v.optional(v.pipe(v.picklist(["exact", "contains", "regex"]), d("How to match (default exact; regex is RE2 syntax)"))),
        caseSensitive: v.optional(v.pipe(v.boolean(), d("Default true"))),
      }),
    ),
  }),
  v.check((s) => Object.keys(s).length > 0, "a selector needs at least one of role, name, value, identifier, text"),
  d("Finds one element by its properties; all given members must match"),
);
export type McpSelector = v.InferOutput<typeof SelectorSchema>;

const target = {
  x: v.optional(Coordinate("X")),
  y: v.optional(Coordinate("Y")),
  ref: v.optional(Ref),
  selector: v.optional(SelectorSchema),
};
const oneTarget = (a: { x?: number; y?: number; ref?: string; selector?: unknown }) => [a.x !== undefined || a.y !== undefined, a.ref !== undefined, a.selector !== undefined].filter(Boolean).length === 1;
const bothCoordinates = (a: { x?: number; y?: number }) => (a.x === undefined) === (a.y === undefined);
const ONE_TARGET = "give exactly one target: x and y, or ref, or selector";
const BOTH = "x and y go together";

const optionalTarget = { ref: v.optional(Ref), selector: v.optional(SelectorSchema) };
const notBoth = (a: { ref?: string; selector?: unknown }) => a.ref === undefined || a.selector === undefined;
const NOT_BOTH = "give ref or selector, not both";

export const KEYS = ["back", "home", "recentApps", "enter", "tab", "escape", "delete", "space", "arrowUp", "arrowDown", "arrowLeft", "arrowRight"] as const;

export const INPUTS = {
  devices_list: v.strictObject({}),
  device_observe: v.strictObject({
    deviceId: DeviceId,
    screenshot: v.optional(v.pipe(v.boolean(), d("Include the screenshot (default true)"))),
    tree: v.optional(v.pipe(v.boolean(), d("Include the element listing (default true)"))),
    diff: v.optional(v.pipe(v.boolean(), d("Also list what changed since the previous observation (default false)"))),
  }),
  screenshot: v.strictObject({ deviceId: DeviceId }),
  ui_tree: v.strictObject({ deviceId: DeviceId, diff: v.optional(v.pipe(v.boolean(), d("Also list what changed since the previous observation (default false)"))) }),
  tap: v.pipe(v.strictObject({ deviceId: DeviceId, ...target }), v.check((a) => oneTarget(a), ONE_TARGET), v.check((a) => bothCoordinates(a), BOTH)),
  double_tap: v.pipe(v.strictObject({ deviceId: DeviceId, ...target }), v.check((a) => oneTarget(a), ONE_TARGET), v.check((a) => bothCoordinates(a), BOTH)),
  long_press: v.pipe(
    v.strictObject({ deviceId: DeviceId, ...target, durationMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000), d("How long to hold (default: the platform's long press)"))) }),
    v.check((a) => oneTarget(a), ONE_TARGET),
    v.check((a) => bothCoordinates(a), BOTH),
  ),
  swipe: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      direction: v.optional(v.pipe(v.picklist(["up", "down", "left", "right"]), d('The way the finger moves: "up" reveals content further down'))),
      distance: v.optional(v.pipe(v.number(), v.minValue(0.05), v.maxValue(0.95), d("With direction: how far, as a fraction of the screen (default 0.5)"))),
      startX: v.optional(Coordinate("Start x")),
      startY: v.optional(Coordinate("Start y")),
      endX: v.optional(Coordinate("End x")),
      endY: v.optional(Coordinate("End y")),
      durationMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000), d("Gesture duration (default 300)"))),
    }),
    v.check((a) => {
      const points = [a.startX, a.startY, a.endX, a.endY].filter((p) => p !== undefined).length;
      return a.direction !== undefined ? points === 0 : points === 4;
    }, "give either direction, or all of startX, startY, endX, endY"),
  ),
  type_text: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      text: v.pipe(v.string(), v.minLength(1), v.maxLength(4096), d("Any Unicode text")),
      ...optionalTarget,
      submit: v.optional(v.pipe(v.boolean(), d("Press enter afterwards (default false)"))),
    }),
    v.check((a) => notBoth(a), NOT_BOTH),
  ),
  press_key: v.strictObject({ deviceId: DeviceId, key: v.pipe(v.picklist(KEYS), d("back, home and recentApps are system navigation; the rest are keyboard keys")) }),
  launch_app: v.strictObject({
    deviceId: DeviceId,
    appId: v.pipe(v.string(), v.minLength(1), d("Android package name or iOS bundle id")),
    activity: v.optional(
      v.pipe(v.string(), v.minLength(1), v.maxLength(255), d("Android only: the activity to start, fully qualified or relative to the package (.MainActivity); needed when the app has several launcher activities and no default")),
    ),
  }),
  terminate_app: v.strictObject({ deviceId: DeviceId, appId: v.pipe(v.string(), v.minLength(1), d("Android package name or iOS bundle id")) }),
  open_url: v.strictObject({ deviceId: DeviceId, url: v.pipe(v.string(), v.minLength(3), d("A URL or deep link")) }),
  wait_for: v.strictObject({
    deviceId: DeviceId,
    selector: SelectorSchema,
    gone: v.optional(v.pipe(v.boolean(), d("Wait for the element to disappear instead (default false)"))),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600_000), d("How long to wait (default 10000)"))),
  }),
  set_secret: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      secret: v.pipe(v.string(), v.minLength(1), v.maxLength(1024), d("The value; it is typed as a protected action and never appears in any result, log, event or export")),
      ...optionalTarget,
    }),
    v.check((a) => notBoth(a), NOT_BOTH),
  ),
  session_verdict: v.strictObject({
    deviceId: DeviceId,
    status: v.pipe(v.picklist(["pass", "fail", "unknown"]), d("The verdict")),
    summary: v.pipe(v.string(), v.minLength(1), v.maxLength(16_384), d("One or two sentences a reviewer reads: what was checked and what was seen")),
  }),
} as const;

export type ToolName = keyof typeof INPUTS;
export type ToolInput<N extends ToolName> = v.InferOutput<(typeof INPUTS)[N]>;

interface ToolMeta {
  title: string;
  description: string;
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
}

const ACT = "Recorded as an action in this client's DeviceRail Session on the device; the result names it. The screen usually changes: observe again before using refs.";
const TARGET = "Target: x and y (device pixels), or ref from the latest listing, or selector.";

export const META: Record<ToolName, ToolMeta> = {
  devices_list: { title: "List devices", description: "Lists the phones, emulators and simulators this daemon can drive, with the device id every other tool needs, and whether another client holds one.", readOnly: true, idempotent: true },
  device_observe: {
    title: "Observe a device",
    description:
      "Captures what the device shows: a screenshot (JPEG, scaled down; the image scale is stated so image points map back to device pixels) and a listing of visible elements, one per line: `@e12 Button \"Sign in\" id=login [disabled] at=540,1200 size=300x120` (at = centre in device pixels). Refs stay valid while the screen keeps its UI context. Set diff to see what changed since the previous observation. Also reports the foreground app.",
    readOnly: true,
  },
  screenshot: { title: "Screenshot", description: "The device's screen as an image (JPEG, long edge at most 1568 px by default) with its scale, without the element listing.", readOnly: true },
  ui_tree: { title: "Element listing", description: "The visible, meaningful elements of the device's screen as compact text with refs (see device_observe), without an image: cheaper when you need to find or tap something.", readOnly: true },
  tap: { title: "Tap", description: `Taps once. ${TARGET} A ref or selector taps the element itself (at its centre, or through accessibility where the platform can). ${ACT}`, destructive: false },
  double_tap: { title: "Double tap", description: `Taps twice in quick succession. ${TARGET} ${ACT}`, destructive: false },
  long_press: { title: "Long press", description: `Presses and holds. ${TARGET} ${ACT}`, destructive: false },
  swipe: { title: "Swipe", description: `Swipes between two points (startX, startY, endX, endY in device pixels) or in a direction ("up" moves the finger up, which scrolls content down). ${ACT}`, destructive: false },
  type_text: {
    title: "Type text",
    description: `Types any Unicode text into the focused field, or first taps the field given by ref or selector. submit presses enter afterwards. For passwords and other secrets use set_secret. ${ACT}`,
    destructive: false,
  },
  press_key: { title: "Press a key", description: `Presses a system navigation button (back, home, recentApps) or a keyboard key. ${ACT}`, destructive: false },
  launch_app: { title: "Launch an app", description: `Starts an installed app by Android package name or iOS bundle id and waits until it is shown. ${ACT}`, destructive: false },
  terminate_app: { title: "Stop an app", description: `Force-stops an app; unsaved state in it is lost. ${ACT}`, destructive: true, idempotent: true },
  open_url: { title: "Open a URL", description: `Opens a URL or deep link on the device. ${ACT}`, destructive: false },
  wait_for: {
    title: "Wait for an element",
    description: "Waits until an element matching the selector is visible (or, with gone, no longer there), up to timeoutMs (default 10000). Fails with action_timed_out and the current screen when it does not happen.",
    readOnly: true,
  },
  set_secret: {
    title: "Enter a secret",
    description: `Types a password or other secret into the focused field, or into the field given by ref or selector, as a protected action: the value is never shown in any result, log, event, screenshot or export. ${ACT}`,
    destructive: false,
  },
  session_verdict: {
    title: "Record a verdict",
    description: "Records pass, fail or unknown with a summary in this client's DeviceRail Session on the device, for reports and CI.",
    destructive: false,
    idempotent: false,
  },
};

/** The tools/list entries, built once. */
export function toolList() {
  return (Object.keys(INPUTS) as ToolName[]).map((name) => {
    const m = META[name];
    const schema = toJsonSchema(INPUTS[name] as v.GenericSchema, { errorMode: "ignore", typeMode: "input" }) as Record<string, unknown>;
    delete schema.$schema;
    return {
      name,
      title: m.title,
      description: m.description,
      inputSchema: schema as { type: "object"; properties?: Record<string, object>; required?: string[] },
      annotations: { title: m.title, readOnlyHint: m.readOnly ?? false, destructiveHint: m.destructive ?? false, idempotentHint: m.idempotent ?? m.readOnly ?? false, openWorldHint: false },
    };
  });
}
