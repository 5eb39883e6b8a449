import type { CallContext } from "../../src/driver/driver.ts";
import type { Viewport } from "../../src/protocol/types/device.ts";
import type { AndroidShell } from "./android-shell.ts";
import { chooseCaptureDisplay, parseGetDisplays, parseSurfaceFlingerDisplayIds } from "./parse/capture-display.ts";
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
  return {
    physical: s.physical,
    override: s.override,
    physicalDensity: d.physical,
    overrideDensity: d.override,
    density: d.override ?? d.physical,
  };
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

/**
 * The physical display screenshots should capture, read once per connect: null on a phone with
 * one display (or before Android 10, whose screencap has no 64-bit display ids), else the panel
 * that is on. A foldable lists both panels, and `screencap` without `-d` takes the first one,
 * which may be the folded-away panel (black) and, from Android 14 on, warns on stderr. Best
 * effort: a phone that cannot say gets screencap's default.
 */
export async function readCaptureDisplay(
  shell: AndroidShell,
  serial: string,
  sdk: number,
  ctx: CallContext,
): Promise<string | null> {
  if (!(sdk >= 29)) return null;
  try {
    const physical = parseSurfaceFlingerDisplayIds(
      (await shell.exec(serial, "dumpsys SurfaceFlinger --display-id", ctx, { ceilingMs: 5_000 })).out,
    );
    if (physical.length <= 1) return null;
    // `cmd display get-displays` exists from Android 11 (mobile-next/mobile-mcp src/android.ts).
    const logical = parseGetDisplays(
      (await shell.exec(serial, "cmd display get-displays", ctx, { ceilingMs: 5_000 })).out,
    );
    return chooseCaptureDisplay(physical, logical);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return null;
  }
}
