import documents from "../../src/protocol/generated/drivers/android-actions.json" with { type: "json" };
import { ActionSpace, type ParsedCall } from "../../src/driver/action-space.ts";
import { ANDROID_CONTRACTS, type AndroidContract, ORIENTATIONS } from "./action-contracts.ts";
import { KEYCODES } from "./parse/keys.ts";

/** What the Android driver advertises and validates calls against. */
export const ANDROID_ACTIONS = new ActionSpace(ANDROID_CONTRACTS, documents);

export type Call =
  | { kind: "tap"; x: number; y: number }
  | { kind: "doubleTap"; x: number; y: number }
  | { kind: "longPress"; x: number; y: number; durationMs: number }
  | { kind: "swipe"; startX: number; startY: number; endX: number; endY: number; durationMs: number }
  | { kind: "scroll"; deltaX: number; deltaY: number }
  | { kind: "key"; name: string; keycode: number }
  | { kind: "text"; text: string }
  | { kind: "secret"; secret: string }
  | { kind: "launch"; packageName: string; activity?: string }
  | { kind: "terminate"; packageName: string }
  | { kind: "openUrl"; url: string }
  | { kind: "rotate"; orientation: (typeof ORIENTATIONS)[number] }
  | { kind: "setAnimations"; enabled: boolean }
  | { kind: "setLocation"; latitude: number; longitude: number; altitude?: number }
  | { kind: "clipboardGet" };

/** The device operation of a call whose arguments passed their schema. */
export function toCall(p: ParsedCall<AndroidContract>): Call {
  switch (p.name) {
    case "tap":
    case "doubleTap":
      return { kind: p.name, x: p.args.x, y: p.args.y };
    case "longPress":
      return { kind: "longPress", x: p.args.x, y: p.args.y, durationMs: p.args.durationMs ?? 800 };
    case "swipe":
      return { kind: "swipe", ...p.args };
    case "scroll":
      return { kind: "scroll", ...p.args };
    case "keyPress":
      return { kind: "key", name: p.args.key, keycode: KEYCODES[p.args.key] };
    case "back":
    case "home":
    case "recentApps":
      return { kind: "key", name: p.name, keycode: KEYCODES[p.name === "recentApps" ? "appSwitch" : p.name] };
    case "inputText":
      return { kind: "text", text: p.args.text };
    case "inputSecret":
      return { kind: "secret", secret: p.args.secret };
    case "launch":
      return {
        kind: "launch",
        packageName: p.args.packageName,
        ...(p.args.activity !== undefined ? { activity: p.args.activity } : {}),
      };
    case "terminate":
      return { kind: "terminate", packageName: p.args.packageName };
    case "openUrl":
      return { kind: "openUrl", url: p.args.url };
    case "rotate":
      return { kind: "rotate", orientation: p.args.orientation };
    case "setAnimations":
      return { kind: "setAnimations", enabled: p.args.enabled };
    case "setLocation":
      return { kind: "setLocation", ...p.args };
    case "clipboardGet":
      return { kind: "clipboardGet" };
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
