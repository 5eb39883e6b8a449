/** Small pure helpers: type tests and the page's ways of writing numbers, times and errors. */

export const pad = (n: number, width = 2) => String(n).padStart(width, "0");
export const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
export const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
export const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? String(v);
export const oneLine = (s: unknown) => String(s).replace(/\s+/g, " ").trim();
export const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A session's length as a person reads it: "122 ms", "4.2 s", "3 m 05 s", "1 h 02 m". */
export function durationText(ms: number | null | undefined): string {
  if (!isNum(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} m ${pad(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor(s / 60) % 60)} m`;
}

/** ISO 8601 in the viewer's local time, with its offset: 2026-12-01T21:06:13+01:00. */
export function isoLocal(ms: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? "+" : "-";
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${date}T${time}${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

export const errorText = (error: unknown) =>
  isObj(error) ? `${error.code ?? "error"}: ${error.message ?? ""}` : "error";

/** The foreground app: Android's package(/activity), else the Mock's foregroundApp. */
export function foregroundApp(metadata: unknown): string | null {
  if (!isObj(metadata)) return null;
  const fg = metadata.foreground;
  if (isObj(fg) && typeof fg.packageName === "string")
    return typeof fg.activity === "string" ? `${fg.packageName}/${fg.activity}` : fg.packageName;
  if (typeof metadata.foregroundApp === "string") return metadata.foregroundApp;
  return null;
}
