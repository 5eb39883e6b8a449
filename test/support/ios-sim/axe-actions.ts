/**
 * What AXe's HID commands do to the simulated device, in points: a tap hits the tree and runs the
 * node's action, a vertical swipe scrolls the list under its start, a swipe up from the bottom
 * edge goes home (iOS's home gesture), keys and text go to the focused field. Every input is
 * appended to the device's input log with what it hit.
 */
import { pressButton, pressCombo, pressKey, runAction, runScroll, screenTree, typeText } from "./apps.ts";
import type { InputEvent, SimDevice, SimState } from "./sim-state.ts";
import { nodeName, scrollTarget, tapTarget } from "./ui-tree.ts";

export type Via = InputEvent["via"];

/**
 * `style` is how the touch was made: AXe's `simulator` tapAt (its default for coordinate taps) or a
 * physical touch down/up (`--tap-style physical`, `touch`, WebDriverAgent); with
 * `switchesIgnoreSimulatorTaps` a simulator tap on a switch is logged and does nothing.
 */
export function tapAt(
  state: SimState,
  device: SimDevice,
  x: number,
  y: number,
  via: Via,
  kind: "tap" | "double-tap" | "long-press" = "tap",
  durationS: number | null = null,
  style: "simulator" | "physical" = "physical",
): void {
  const target = device.locked ? null : tapTarget(screenTree(device), x, y);
  device.input.push({
    via,
    kind,
    x,
    y,
    ...(kind === "long-press" ? { durationS } : {}),
    target: nodeName(target),
    atMs: Date.now(),
    ...(via === "axe" && kind === "tap" ? { style } : {}),
  });
  if (!target?.enabled || !target.action) return;
  if (style === "simulator" && target.kind === "switch" && state.switchesIgnoreSimulatorTaps) return;
  runAction(state, device, target.action);
  if (kind === "double-tap" && target.action !== undefined) {
    const again = tapTarget(screenTree(device), x, y);
    if (again?.enabled && again.action) runAction(state, device, again.action);
  }
}

export function swipe(
  device: SimDevice,
  from: { x: number; y: number },
  to: { x: number; y: number },
  durationS: number | null,
  via: Via,
): void {
  const tree = screenTree(device);
  const target = device.locked ? null : scrollTarget(tree, from.x, from.y);
  device.input.push({
    via,
    kind: "swipe",
    x: from.x,
    y: from.y,
    toX: to.x,
    toY: to.y,
    durationS,
    target: nodeName(target),
  });
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  if (from.y >= device.screen.height - 34 && -dy > 100 && Math.abs(dy) > Math.abs(dx)) {
    pressButton(device, "home");
    return;
  }
  if (target?.scroll && Math.abs(dy) > Math.abs(dx))
    runScroll(device, target.scroll.action, dy, target.scroll.rowHeight);
}

export function enterText(device: SimDevice, text: string, via: Via): void {
  device.input.push({ via, kind: "text", text, target: null });
  typeText(device, text);
}

export function key(device: SimDevice, keycode: number, durationS: number | null, via: Via): void {
  device.input.push({ via, kind: "key", keys: [keycode], durationS, target: null });
  pressKey(device, keycode);
}

export function keyCombo(device: SimDevice, modifiers: number[], keycode: number, via: Via): void {
  device.input.push({ via, kind: "key-combo", keys: [...modifiers, keycode], target: null });
  pressCombo(device, modifiers, keycode);
}

export function button(device: SimDevice, name: string, durationS: number | null, via: Via): void {
  device.input.push({ via, kind: "button", button: name, durationS, target: null });
  pressButton(device, name);
}
