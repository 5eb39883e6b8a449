/** What an Observation's free-form metadata says, read the same way on every surface. */
import { UI_STATES } from "../../protocol/types/ui.ts";

/** Node states by stableNodeId. */
export type UiStates = Record<string, readonly string[]>;

/**
 * `metadata.uiStates` of an Observation. Metadata is free-form JSON, so anything of another shape
 * or an unknown state is left out rather than shown.
 */
export function uiStatesOf(metadata: Record<string, unknown> | undefined): UiStates {
  const raw = metadata?.uiStates;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const states: Record<string, string[]> = {};
  for (const [id, list] of Object.entries(raw)) {
    const known = Array.isArray(list) ? UI_STATES.filter((s) => list.includes(s)) : [];
    if (known.length) states[id] = known;
  }
  return states;
}

/** The foreground app as a person knows it: Android's `package/.Activity`, else the Mock's app and screen. */
export function foregroundOf(metadata: Record<string, unknown>): string | null {
  const fg = metadata.foreground as { packageName?: unknown; activity?: unknown } | null | undefined;
  if (fg && typeof fg.packageName === "string") {
    const { packageName, activity } = fg as { packageName: string; activity?: unknown };
    if (typeof activity !== "string") return packageName;
    return `${packageName}/${activity.startsWith(`${packageName}.`) ? activity.slice(packageName.length) : activity}`;
  }
  if (typeof metadata.foregroundApp === "string")
    return typeof metadata.screen === "string"
      ? `${metadata.foregroundApp} (${metadata.screen})`
      : metadata.foregroundApp;
  return null;
}
