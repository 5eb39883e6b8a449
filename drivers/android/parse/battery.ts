/**
 * The battery level from `dumpsys battery`: the `level:` and `scale:` lines of the battery
 * service's state (scale is 100 on every phone seen, but the level is out of it). Null when the
 * output has no level (a device without a battery service, an emulator that reports none).
 */
export function parseBatteryPercent(stdout: string): number | null {
  const value = (label: string): number | null => {
    const m = new RegExp(`^\\s*${label}:\\s*(\\d{1,6})\\s*$`, "m").exec(stdout);
    return m ? Number(m[1]) : null;
  };
  const level = value("level");
  const scale = value("scale") ?? 100;
  if (level === null || scale <= 0 || level > scale) return null;
  return Math.round((level * 100) / scale);
}
