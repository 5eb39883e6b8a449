/**
 * Parsers for the CLI's option and argument values, and the default device-call timeout: what the
 * command definitions need before any command runs, so `program.ts` loads them without loading a
 * command (each command's module is imported only when that command runs; see program.ts).
 */
import { InvalidArgumentError } from "commander";

/** How long one device call may take unless --timeout says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Non-negative integer arguments (screen pixels, counts); anything else is a usage error. */
export function integer(min: number, max = 2 ** 32 - 1) {
  return (text: string): number => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return Number(text);
  };
}
export const coord = integer(0);

/** `X,Y` in screen pixels (doctor --smoke --tap). */
export function point(text: string): { x: number; y: number } {
  const m = /^(\d+),(\d+)$/.exec(text.trim());
  if (!m) throw new InvalidArgumentError("expected X,Y in screen pixels, e.g. 540,1200");
  return { x: coord(m[1] as string), y: coord(m[2] as string) };
}

/** `30s`, `500ms`, `2m`, or a number of seconds; what --timeout takes. */
export function duration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "m" ? 60_000 : 1_000) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 1 || ms > 86_400_000)
    throw new InvalidArgumentError("expected a duration such as 30s, 500ms or 2m (at most 24 h)");
  return Math.round(ms);
}

/** `7d`, `12h`, `30m`: how long ago (sessions prune --older-than, report --since). */
export function age(text: string): number {
  const m = /^(\d+)(d|h|m)$/.exec(text.trim());
  if (!m) throw new InvalidArgumentError("expected an age such as 7d, 12h or 30m");
  return Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as "d" | "h" | "m"];
}
