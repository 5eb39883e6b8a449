/** Display geometry from `wm size`, `wm density` and a screenshot's PNG header. */

export type Size = { width: number; height: number };

export class DisplayParseError extends Error {
  override name = "DisplayParseError";
}

/** Larger values are not a display; they would only overflow the viewport arithmetic. */
const MAX_PIXELS = 1_000_000;
const MAX_DPI = 10_000;

/**
 * The value after `<label>:` on its own line, or null when the line is absent. Other lines (linker
 * warnings some ROMs print) are ignored; a label given twice is garbage.
 */
function field(stdout: string, label: string): string | null {
  const found = stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith(`${label}:`));
  if (found.length > 1) throw new DisplayParseError(`"${label}" appears ${found.length} times`);
  return found[0]?.slice(label.length + 1).trim() ?? null;
}

function size(text: string, label: string): Size {
  const m = /^(\d{1,7})x(\d{1,7})$/.exec(text);
  const width = Number(m?.[1]);
  const height = Number(m?.[2]);
  if (!m || width < 1 || height < 1 || width > MAX_PIXELS || height > MAX_PIXELS)
    throw new DisplayParseError(`${label} "${text}" is not WIDTHxHEIGHT`);
  return { width, height };
}

function dpi(text: string, label: string): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : 0;
  if (n < 1 || n > MAX_DPI) throw new DisplayParseError(`${label} "${text}" is not a density`);
  return n;
}

/** `Physical size: 1080x2400` and, while `wm size WxH` is in force, `Override size: 720x1600`. */
export function parseWmSize(stdout: string): { physical: Size; override: Size | null } {
  const physical = field(stdout, "Physical size");
  if (physical === null)
    throw new DisplayParseError(`no "Physical size" in wm size output: ${JSON.stringify(stdout.slice(0, 200))}`);
  const override = field(stdout, "Override size");
  return {
    physical: size(physical, "Physical size"),
    override: override === null ? null : size(override, "Override size"),
  };
}

/** `Physical density: 420` and, while `wm density N` is in force, `Override density: 320`. */
export function parseWmDensity(stdout: string): { physical: number; override: number | null } {
  const physical = field(stdout, "Physical density");
  if (physical === null)
    throw new DisplayParseError(`no "Physical density" in wm density output: ${JSON.stringify(stdout.slice(0, 200))}`);
  const override = field(stdout, "Override density");
  return {
    physical: dpi(physical, "Physical density"),
    override: override === null ? null : dpi(override, "Override density"),
  };
}

/** The pixel size from a PNG's IHDR chunk; shared by every driver's screenshots. */
export { pngSize } from "../../../src/driver/png.ts";

export function orientationOf(size: Size): "portrait" | "landscape" | "square" {
  return size.width > size.height ? "landscape" : size.width < size.height ? "portrait" : "square";
}
