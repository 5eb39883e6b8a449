/**
 * Which physical display `screencap -d` should capture on a phone with several (foldables,
 * phones with a cover screen): from `dumpsys SurfaceFlinger --display-id` (the physical ids
 * screencap takes) and `cmd display get-displays` (which logical display is on, and the physical
 * panel behind it as `uniqueId "local:<id>"`). The line shapes are those that
 * mobile-next/mobile-mcp src/android.ts and mobile-next/mobilecli devices/android.go read.
 */

/** `Display 4619827259835644672 (HWC display 0): port=0 …` → the decimal id, in listed order. */
export function parseSurfaceFlingerDisplayIds(out: string): string[] {
  const ids: string[] = [];
  for (const m of out.matchAll(/^Display (\d{1,20}) \(([^)]*)\)/gm)) {
    // Virtual displays (listed by some builds) cannot be what the phone's own screen shows.
    if (!/^virtual/i.test(m[2] as string)) ids.push(m[1] as string);
  }
  return ids;
}

export interface LogicalDisplay {
  logicalId: number;
  on: boolean;
  /** The physical panel's id from `uniqueId "local:<id>"`; null for virtual or overlay displays. */
  physicalId: string | null;
}

/** `Display id 0: DisplayInfo{"Built-in Screen", displayId 0, … state ON, … uniqueId "local:4619827259835644672", …}`. */
export function parseGetDisplays(out: string): LogicalDisplay[] {
  const found: LogicalDisplay[] = [];
  for (const line of out.split(/\r?\n/)) {
    const head = /^Display id (\d+): DisplayInfo\{/.exec(line);
    if (!head) continue;
    const state = /, state ([A-Z_]+)[,}]/.exec(line);
    const unique = /uniqueId "local:(\d{1,20})"/.exec(line);
    found.push({
      logicalId: Number(head[1]),
      on: state?.[1] === "ON",
      physicalId: unique ? (unique[1] as string) : null,
    });
  }
  return found;
}

/**
 * The physical id to pass to `screencap -d`: the panel behind the first logical display that is
 * on, when SurfaceFlinger lists it. Null when there is nothing to choose (one display) or nothing
 * that fits (no display on, or the listings disagree): screencap's own default then applies.
 */
export function chooseCaptureDisplay(
  physicalIds: readonly string[],
  logical: readonly LogicalDisplay[],
): string | null {
  if (physicalIds.length <= 1) return null;
  const on = logical.find((d) => d.on && d.physicalId !== null && physicalIds.includes(d.physicalId));
  return on?.physicalId ?? null;
}
