/**
 * The two reports behind the `launch` action. `cmd package resolve-activity --brief` prints a
 * ResolveInfo summary line and then the component (ComponentName.flattenToShortString), or only
 * "No activity found"; it exits 0 either way. `am start -W` prints "Starting: Intent {…}", any
 * warnings or errors, and, when the activity was started, a wait report ending in "Complete".
 * With -W its errors go to stdout and it still exits 0, so the text decides, not the status.
 */

export type ResolvedActivity =
  /** `activity` is fully qualified. */
  { kind: "component"; packageName: string; activity: string } | { kind: "none" };

export type AmStartReport =
  | {
      kind: "ok";
      /** COLD, WARM, HOT, RELAUNCH or "UNKNOWN (n)"; absent before Android 10. */
      launchState: string | null;
      /** As printed (`pkg/.Act`); absent when Android could not tell which activity came up. */
      activity: string | null;
      /** Absent when nothing new was drawn (an app already in front). */
      totalTimeMs: number | null;
      waitTimeMs: number;
      /** A "Warning:" line, e.g. the app's existing task was only brought to the front. */
      warning: string | null;
    }
  | { kind: "timeout"; activity: string | null; waitTimeMs: number }
  /** An "Error:" line: nothing was started. */
  | { kind: "error"; message: string };

// One dot-free segment is allowed: the platform's own package is "android" (its chooser).
const PACKAGE = "[A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z][A-Za-z0-9_]*)*";
const CLASS = "[A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)*";
const COMPONENT = new RegExp(`^(${PACKAGE})/(\\.?${CLASS})$`);

/** Non-empty lines without the CR a legacy pty adds. */
const linesOf = (out: string) =>
  out
    .split("\n")
    .map((l) => l.replace(/\r$/, "").trimEnd())
    .filter((l) => l !== "");

/** The component of `pkg/.Act` or `pkg/some.Act`, the class fully qualified; null for anything else. */
export function parseComponentName(text: string): { packageName: string; activity: string } | null {
  const m = COMPONENT.exec(text);
  if (!m) return null;
  const packageName = m[1] as string;
  const cls = m[2] as string;
  return { packageName, activity: cls.startsWith(".") ? `${packageName}${cls}` : cls };
}

/** Null when the last line is neither a component nor "No activity found" (a stack trace, a missing `cmd`). */
export function parseResolveActivity(out: string): ResolvedActivity | null {
  const last = linesOf(out).at(-1);
  if (last === undefined) return null;
  if (last === "No activity found") return { kind: "none" };
  const component = parseComponentName(last);
  return component ? { kind: "component", ...component } : null;
}

/**
 * `cmd package query-activities --components …`: one flattened component per line, or "No
 * activities found" (AOSP PackageManagerShellCommand.runQueryIntentActivities); null for anything
 * else (a stack trace, a `cmd` without the subcommand).
 */
export function parseQueryActivities(out: string): { packageName: string; activity: string }[] | null {
  const lines = linesOf(out);
  if (lines.length === 1 && lines[0] === "No activities found") return [];
  const components = lines.map(parseComponentName);
  return components.length > 0 && components.every((c) => c !== null)
    ? (components as { packageName: string; activity: string }[])
    : null;
}

const FIELD = /^(Status|LaunchState|Activity|ThisTime|TotalTime|WaitTime): (.+)$/;

/** Null when the output holds neither an error nor one whole wait report. */
export function parseAmStartWait(out: string): AmStartReport | null {
  const lines = linesOf(out);
  const error = lines.find((l) => l.startsWith("Error: "));
  if (error) return { kind: "error", message: error.slice("Error: ".length) };
  const start = lines.findIndex((l) => /^Status: /.test(l));
  if (start < 0 || lines.at(-1) !== "Complete") return null;
  const fields = new Map<string, string>();
  for (const line of lines.slice(start, -1)) {
    const m = FIELD.exec(line);
    if (!m || fields.has(m[1] as string)) return null;
    fields.set(m[1] as string, m[2] as string);
  }
  const number = (key: string) => {
    const v = fields.get(key);
    return v !== undefined && /^\d{1,12}$/.test(v) ? Number(v) : null;
  };
  const waitTimeMs = number("WaitTime");
  const totalTimeMs = number("TotalTime");
  if (waitTimeMs === null || (fields.has("TotalTime") && totalTimeMs === null)) return null;
  const activity = fields.get("Activity") ?? null;
  const status = fields.get("Status");
  if (status === "timeout") return { kind: "timeout", activity, waitTimeMs };
  if (status !== "ok") return null;
  const warning = lines.slice(0, start).find((l) => l.startsWith("Warning: "));
  return {
    kind: "ok",
    launchState: fields.get("LaunchState") ?? null,
    activity,
    totalTimeMs,
    waitTimeMs,
    warning: warning ? warning.slice("Warning: ".length) : null,
  };
}
