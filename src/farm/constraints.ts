/**
 * What a client asks the farm for: constraints on the device, a priority, how long it will wait.
 * The same shape arrives from `devicerail farm acquire` and from `POST /farm/acquire`; it is checked
 * here (valibot) and turned into the columns the allocator matches in SQL.
 */
import * as v from "valibot";

/** The longest a request may wait for a device: a day. */
export const MAX_WAIT_MS = 86_400_000;

// PostgreSQL refuses NUL in text, and the other control characters would reach operators' terminals.
const text = (max: number) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, "must not be empty"),
    v.maxLength(max, `at most ${max} characters`),
    v.regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain NUL or other control characters"),
  );

export const AcquireRequestSchema = v.strictObject({
  /** android, ios, mock … */
  platform: v.optional(text(32)),
  /** A pattern over the device's name or id; `*` matches any run of characters, case ignored. */
  model: v.optional(text(128)),
  /** An OS major version range: `14`, `>=14`, `>13`, `<=15`, `<16`, `14-15`. */
  os: v.optional(
    v.pipe(
      text(16),
      v.check((s) => parseOsRange(s) !== null, "expected an OS range: 14, >=14, >13, <=15, <16 or 14-15"),
    ),
  ),
  /** A host's id, name or endpoint. */
  host: v.optional(text(256)),
  /** An action the device must support (device.capabilities), e.g. swipe. */
  capability: v.optional(text(64)),
  /** One particular device id. */
  device: v.optional(text(256)),
  /** Higher first; FIFO within a priority. */
  priority: v.optional(v.pipe(v.number(), v.integer("expected an integer"), v.minValue(-100), v.maxValue(100)), 0),
  /** How long to wait for a device to become free (0 = only one now). */
  waitMs: v.optional(v.pipe(v.number(), v.integer("expected an integer"), v.minValue(0), v.maxValue(MAX_WAIT_MS)), 0),
  /** Who is asking, shown to operators (e.g. a CI job's name). */
  holder: v.optional(text(128)),
});
export type AcquireRequest = v.InferOutput<typeof AcquireRequestSchema>;

export interface OsRange {
  min: number | null;
  max: number | null;
}

/** `14`, `>=14`, `>13`, `<=15`, `<16`, `14-15` (majors, inclusive bounds after parsing); null when unparsable. */
export function parseOsRange(text: string): OsRange | null {
  const s = text.replace(/\s+/g, "");
  let m = /^(\d{1,4})$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[1]) };
  m = /^(\d{1,4})(?:-|\.\.)(\d{1,4})$/.exec(s);
  if (m) return Number(m[1]) <= Number(m[2]) ? { min: Number(m[1]), max: Number(m[2]) } : null;
  m = /^(>=|>|<=|<)(\d{1,4})$/.exec(s);
  if (!m) return null;
  const n = Number(m[2]);
  switch (m[1]) {
    case ">=":
      return { min: n, max: null };
    case ">":
      return { min: n + 1, max: null };
    case "<=":
      return { min: null, max: n };
    default:
      return n === 0 ? null : { min: null, max: n - 1 };
  }
}

/** The leading number of an OS version ("14" of "14.1.2"), or null. */
export function osMajor(version: string | null): number | null {
  const m = version ? /^\s*(\d{1,4})/.exec(version) : null;
  return m ? Number(m[1]) : null;
}

/** A `*` pattern as an ILIKE pattern: `%` and `_` are literal, `*` is any run. */
export function likePattern(glob: string): string {
  return glob.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, "%");
}

/** The request's matching columns (see tables.ts `requests`). */
export function matchColumns(r: AcquireRequest) {
  const os = r.os ? parseOsRange(r.os) : null;
  return {
    platform: r.platform?.toLowerCase() ?? null,
    model: r.model ? likePattern(r.model) : null,
    osMin: os?.min ?? null,
    osMax: os?.max ?? null,
    host: r.host ?? null,
    capability: r.capability ?? null,
    deviceId: r.device ?? null,
  };
}
