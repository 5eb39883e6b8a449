/**
 * What a device can do, as every surface asks it: which of the device actions that would do a
 * request it offers (the first, in the request's order of preference), and which MCP tools it can
 * therefore serve.
 */

/** The first of `wanted` that the device offers, or null. */
export function firstOffered(offered: readonly string[], wanted: readonly string[]): string | null {
  return wanted.find((n) => offered.includes(n)) ?? null;
}

/** The device actions each MCP device tool needs (any one of them). */
export const TOOL_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  tap: ["tap", "tapElement"],
  double_tap: ["doubleTap"],
  long_press: ["longPress"],
  swipe: ["swipe", "scroll"],
  type_text: ["inputText"],
  press_key: ["keyPress", "back", "home", "recentApps"],
  launch_app: ["launch"],
  terminate_app: ["terminate"],
  open_url: ["openUrl"],
  wait_for: ["waitForElement"],
  set_secret: ["inputSecret", "setElementValue"],
};

/** Tools that only read, which every device serves. */
const ALWAYS = ["device_observe", "screenshot", "ui_tree", "session_verdict"];

/** The MCP tools a device with these actions can do, sorted. */
export function toolsFor(offered: readonly string[]): string[] {
  return [
    ...ALWAYS,
    ...Object.entries(TOOL_ACTIONS)
      .filter(([, names]) => firstOffered(offered, names) !== null)
      .map(([tool]) => tool),
  ].sort();
}

/** How a missing action reads on any surface: `no keyPress or back action`. */
export const missing = (wanted: readonly string[]) => `no ${wanted.join(" or ")} action`;
