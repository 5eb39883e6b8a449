import documents from "../../src/protocol/generated/drivers/ios-simulator-actions.json" with { type: "json" };
import { ActionSpace } from "../../src/driver/action-space.ts";
import { IOS_CONTRACTS, type IosContract, SIMCTL_CONTRACTS } from "./action-contracts.ts";
import { DOUBLE_TAP_BACKENDS } from "./double-tap.ts";

export type Backend = "axe" | "wda" | "none";

const ALL = new ActionSpace<IosContract>(IOS_CONTRACTS, documents);

/**
 * What each input backend advertises and validates calls against: AXe all but doubleTap (its two
 * taps are seconds apart, double-tap.ts), WebDriverAgent all but keyPress (it has no HID key
 * codes), none only simctl's.
 */
export const IOS_ACTIONS: Readonly<Record<Backend, ActionSpace<IosContract>>> = {
  axe: ALL.only((c) => c.name !== "doubleTap" || DOUBLE_TAP_BACKENDS.has("axe")),
  wda: ALL.only((c) => c.name !== "keyPress"),
  none: new ActionSpace<IosContract>(SIMCTL_CONTRACTS, documents),
};

/**
 * A 300 ms scroll gesture in screenshot pixels: through the centre, the finger moving against the
 * delta, each end kept 25 % inside the screen's edges.
 */
export function scrollGesture(delta: { deltaX: number; deltaY: number }, screen: { width: number; height: number }) {
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));
  const [cx, cy] = [screen.width / 2, screen.height / 2];
  const x = (d: number) => clamp(cx + d / 2, screen.width * 0.25, screen.width * 0.75);
  const y = (d: number) => clamp(cy + d / 2, screen.height * 0.25, screen.height * 0.75);
  return { from: { x: x(delta.deltaX), y: y(delta.deltaY) }, to: { x: x(-delta.deltaX), y: y(-delta.deltaY) } };
}
