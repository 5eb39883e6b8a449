import type { CallContext } from "../../src/driver/driver.ts";
import type { Viewport } from "../../src/protocol/types/device.ts";
import type { AndroidShell } from "./android-shell.ts";
import { type Size, parseWmDensity, parseWmSize } from "./parse/display.ts";

export interface Display {
  physical: Size;
  override: Size | null;
  physicalDensity: number;
  overrideDensity: number | null;
  /** The density in effect (override, else physical). */
  density: number;
}

/** `wm size` and `wm density`, read once per connect (and again after a rotation). */
export async function readDisplay(shell: AndroidShell, serial: string, ctx: CallContext): Promise<Display> {
  const [size, density] = await Promise.all([shell.run(serial, "wm size", ctx), shell.run(serial, "wm density", ctx)]);
  const s = parseWmSize(size);
  const d = parseWmDensity(density);
  return { physical: s.physical, override: s.override, physicalDensity: d.physical, overrideDensity: d.override, density: d.override ?? d.physical };
}

/**
 * The screen size in screenshot pixels without taking a screenshot: `wm` reports the natural
 * orientation, so it is swapped for rotation 1 and 3 (from the UI dump), or to match the newest
 * screenshot when there is no dump.
 */
export function effectiveSize(display: Display, rotation: number | null, last: Viewport | null): Size {
  const base = display.override ?? display.physical;
  const swapped = { width: base.height, height: base.width };
  if (rotation === 1 || rotation === 3) return swapped;
  if (rotation === 0 || rotation === 2) return base;
  if (last && last.width > last.height !== base.width > base.height) return swapped;
  return base;
}
