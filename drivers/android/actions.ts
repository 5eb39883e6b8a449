import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { Protection } from "../../src/driver/driver.ts";
import { KEYCODES } from "./parse/keys.ts";

const S = "https://json-schema.org/draft/2020-12/schema";
const U32 = { type: "integer", minimum: 0, maximum: 4294967295 } as const;
const PACKAGE = { type: "string", minLength: 3, maxLength: 255, pattern: "^[A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z][A-Za-z0-9_]*)+$" } as const;
const none = { $schema: S, type: "object", additionalProperties: false, required: [], properties: {} };
const obj = (properties: Record<string, unknown>, required = Object.keys(properties), extra: Record<string, unknown> = {}) => ({
  $schema: S,
  type: "object",
  additionalProperties: false,
  required,
  properties,
  ...extra,
});

export const REFERENCE_KEYS = ["enter", "tab", "escape", "delete", "space", "arrowUp", "arrowDown", "arrowLeft", "arrowRight"] as const;
export const ORIENTATIONS = ["portrait", "landscape", "reversePortrait", "reverseLandscape"] as const;
export const MAX_TEXT_CODE_POINTS = 4096;
export const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\u0000-\u001f\u007f]{1,4096}$/;

/**
 * The reference's eleven Android actions with their names, descriptions and argument shapes
 * (09 §2), then ours. inputText accepts any Unicode text (the reference: an ASCII allow-list).
 */
export const ANDROID_ACTIONS: ActionDefinition[] = [
  { name: "tap", description: "Tap one point in the current Android screenshot coordinate space", inputSchema: obj({ x: U32, y: U32 }) },
  { name: "keyPress", description: "Press one key from DeviceRail's closed Android key set", inputSchema: obj({ key: { enum: [...REFERENCE_KEYS] } }) },
  {
    name: "swipe",
    description: "Swipe between two points in the current Android screenshot coordinate space",
    inputSchema: obj({ startX: U32, startY: U32, endX: U32, endY: U32, durationMs: { type: "integer", minimum: 1, maximum: 60000 } }),
  },
  {
    name: "scroll",
    description: "Scroll in the requested direction using a bounded, viewport-safe gesture",
    inputSchema: obj({ deltaX: { type: "integer", minimum: -100000, maximum: 100000 }, deltaY: { type: "integer", minimum: -100000, maximum: 100000 } }, ["deltaX", "deltaY"], {
      not: { required: ["deltaX", "deltaY"], properties: { deltaX: { const: 0 }, deltaY: { const: 0 } } },
    }),
  },
  {
    name: "inputText",
    description: "Type text into the focused Android control: ASCII through input, other text through the clipboard",
    inputSchema: obj({ text: { type: "string", minLength: 1, maxLength: MAX_TEXT_CODE_POINTS } }),
  },
  { name: "launch", description: "Launch the package's current-user MAIN/LAUNCHER activity and wait for completion", inputSchema: obj({ packageName: PACKAGE }) },
  { name: "terminate", description: "Force-stop the package for Android's current user", inputSchema: obj({ packageName: PACKAGE }) },
  { name: "back", description: "Invoke Android system Back navigation", inputSchema: none },
  { name: "home", description: "Invoke Android system Home navigation", inputSchema: none },
  { name: "recentApps", description: "Open Android's system application switcher", inputSchema: none },
  {
    name: "inputSecret",
    description: "Type a protected printable-ASCII value through operation-scoped stdin",
    inputSchema: obj({ secret: { type: "string", minLength: 1, maxLength: 1024, pattern: "^[\\u0020-\\u007e]+$", not: { pattern: "%s" } } }),
    protection: "protected",
  },
  {
    name: "longPress",
    description: "Press and hold one point in the current Android screenshot coordinate space",
    inputSchema: obj({ x: U32, y: U32, durationMs: { type: "integer", minimum: 1, maximum: 60000 } }, ["x", "y"]),
  },
  { name: "doubleTap", description: "Tap one point twice in quick succession", inputSchema: obj({ x: U32, y: U32 }) },
  { name: "openUrl", description: "Open a URL or deep link with Android's VIEW intent", inputSchema: obj({ url: { type: "string", minLength: 3, maxLength: 4200, pattern: URL_PATTERN.source } }) },
  { name: "rotate", description: "Lock the screen in one orientation", inputSchema: obj({ orientation: { enum: [...ORIENTATIONS] } }) },
];

export function classifyAndroid(name: string): Protection | undefined {
  const a = ANDROID_ACTIONS.find((d) => d.name === name);
  return a ? (a.protection ?? "standard") : undefined;
}

export type Call =
  | { kind: "tap"; x: number; y: number }
  | { kind: "doubleTap"; x: number; y: number }
  | { kind: "longPress"; x: number; y: number; durationMs: number }
  | { kind: "swipe"; startX: number; startY: number; endX: number; endY: number; durationMs: number }
  | { kind: "scroll"; deltaX: number; deltaY: number }
  | { kind: "key"; name: string; keycode: number }
  | { kind: "text"; text: string }
  | { kind: "secret"; secret: string }
  | { kind: "launch" | "terminate"; packageName: string }
  | { kind: "openUrl"; url: string }
  | { kind: "rotate"; orientation: (typeof ORIENTATIONS)[number] };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const int = (x: unknown, min: number, max: number): x is number => typeof x === "number" && Number.isInteger(x) && x >= min && x <= max;
const keysOk = (a: Record<string, unknown>, required: string[], optional: string[] = []) =>
  required.every((k) => k in a) && Object.keys(a).every((k) => required.includes(k) || optional.includes(k));
const PACKAGE_RE = new RegExp(PACKAGE.pattern);
const pkg = (x: unknown): x is string => typeof x === "string" && x.length >= 3 && x.length <= 255 && PACKAGE_RE.test(x);

/** The validated call, or null when the arguments break the action's schema (never says why to the client). */
export function parseCall(name: string, args: unknown): Call | null {
  if (!isObject(args)) return null;
  const a = args;
  const U = 4294967295;
  switch (name) {
    case "tap":
    case "doubleTap":
      return keysOk(a, ["x", "y"]) && int(a.x, 0, U) && int(a.y, 0, U) ? { kind: name, x: a.x, y: a.y } : null;
    case "longPress":
      return keysOk(a, ["x", "y"], ["durationMs"]) && int(a.x, 0, U) && int(a.y, 0, U) && (a.durationMs === undefined || int(a.durationMs, 1, 60000))
        ? { kind: "longPress", x: a.x, y: a.y, durationMs: (a.durationMs as number | undefined) ?? 800 }
        : null;
    case "swipe":
      return keysOk(a, ["startX", "startY", "endX", "endY", "durationMs"]) &&
        int(a.startX, 0, U) &&
        int(a.startY, 0, U) &&
        int(a.endX, 0, U) &&
        int(a.endY, 0, U) &&
        int(a.durationMs, 1, 60000)
        ? { kind: "swipe", startX: a.startX, startY: a.startY, endX: a.endX, endY: a.endY, durationMs: a.durationMs }
        : null;
    case "scroll":
      return keysOk(a, ["deltaX", "deltaY"]) && int(a.deltaX, -100000, 100000) && int(a.deltaY, -100000, 100000) && (a.deltaX !== 0 || a.deltaY !== 0)
        ? { kind: "scroll", deltaX: a.deltaX, deltaY: a.deltaY }
        : null;
    case "keyPress":
      return keysOk(a, ["key"]) && typeof a.key === "string" && (REFERENCE_KEYS as readonly string[]).includes(a.key)
        ? { kind: "key", name: a.key, keycode: KEYCODES[a.key as keyof typeof KEYCODES] }
        : null;
    case "back":
    case "home":
    case "recentApps":
      return keysOk(a, []) ? { kind: "key", name, keycode: KEYCODES[name === "recentApps" ? "appSwitch" : name] } : null;
    case "inputText": {
      const t = a.text;
      return keysOk(a, ["text"]) && typeof t === "string" && t.length > 0 && [...t].length <= MAX_TEXT_CODE_POINTS && !t.includes("\u0000") ? { kind: "text", text: t } : null;
    }
    case "inputSecret": {
      const s = a.secret;
      return keysOk(a, ["secret"]) && typeof s === "string" && /^[\u0020-\u007e]{1,1024}$/.test(s) && !s.includes("%s") ? { kind: "secret", secret: s } : null;
    }
    case "launch":
    case "terminate":
      return keysOk(a, ["packageName"]) && pkg(a.packageName) ? { kind: name, packageName: a.packageName } : null;
    case "openUrl":
      return keysOk(a, ["url"]) && typeof a.url === "string" && URL_PATTERN.test(a.url) ? { kind: "openUrl", url: a.url } : null;
    case "rotate":
      return keysOk(a, ["orientation"]) && typeof a.orientation === "string" && (ORIENTATIONS as readonly string[]).includes(a.orientation)
        ? { kind: "rotate", orientation: a.orientation as (typeof ORIENTATIONS)[number] }
        : null;
    default:
      return null;
  }
}

/** Points of a call that must lie inside the current screen. */
export function pointsOf(c: Call): { x: number; y: number }[] {
  switch (c.kind) {
    case "tap":
    case "doubleTap":
    case "longPress":
      return [c];
    case "swipe":
      return [
        { x: c.startX, y: c.startY },
        { x: c.endX, y: c.endY },
      ];
    default:
      return [];
  }
}

/** The reference's scroll: a 300 ms gesture centred on the screen, kept 25 % inside each edge. */
export function scrollGesture(c: { deltaX: number; deltaY: number }, size: { width: number; height: number }) {
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));
  const cx = Math.floor(size.width / 2);
  const cy = Math.floor(size.height / 2);
  const [x0, x1, y0, y1] = [size.width * 0.25, size.width * 0.75, size.height * 0.25, size.height * 0.75];
  // Content scrolls with the finger moving the opposite way: a positive deltaY swipes upwards.
  const start = { x: clamp(cx + c.deltaX / 2, x0, x1), y: clamp(cy + c.deltaY / 2, y0, y1) };
  const end = { x: clamp(cx - c.deltaX / 2, x0, x1), y: clamp(cy - c.deltaY / 2, y0, y1) };
  return { startX: start.x, startY: start.y, endX: end.x, endY: end.y, durationMs: 300 };
}
