/**
 * The foreground app from `dumpsys window` (its displays or windows section; a full dump is read
 * without its frozen LAST ANR section). Android 10 wraps the focused app as
 * `AppWindowToken{… token=Token{… ActivityRecord{… u0 pkg/.Act t5}}}`, Android 11+ prints the bare
 * `ActivityRecord{… u0 pkg/.Act t5}`; `mCurrentFocus` names the focused window either way.
 */

export interface Foreground {
  packageName: string;
  /** Fully qualified; null when only the package is known (a package-titled window). */
  activity: string | null;
}

const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$/;
const CLASS = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/**
 * Sources in order of preference. A focused system window (`StatusBar`, `NotificationShade`,
 * `Splash Screen pkg`, `PopupWindow:…`) names no package, so the focused app's record behind it
 * answers instead; `mResumedActivity` lets the same parser read `dumpsys activity activities`.
 */
const SOURCES: readonly { key: RegExp; record: RegExp }[] = [
  { key: /^[ \t]*mCurrentFocus=(.*)$/gm, record: /^Window\{\S+ u\d+ ([^{}]*)\}/ },
  { key: /^[ \t]*mFocusedApp=(.*)$/gm, record: /ActivityRecord\{\S+ u\d+ ([^\s{}]+)[^{}]*\}/ },
  { key: /^[ \t]*mResumedActivity: (.*)$/gm, record: /ActivityRecord\{\S+ u\d+ ([^\s{}]+)[^{}]*\}/ },
];

/** `pkg/.Act`, `pkg/pkg.Act`, `pkg/other.pkg.Act` or a bare package name; null for anything else. */
export function parseComponent(title: string): Foreground | null {
  const slash = title.indexOf("/");
  if (slash < 0) return PACKAGE.test(title) ? { packageName: title, activity: null } : null;
  const packageName = title.slice(0, slash);
  const cls = title.slice(slash + 1);
  const activity = cls.startsWith(".") ? `${packageName}${cls}` : cls;
  return PACKAGE.test(packageName) && CLASS.test(activity) ? { packageName, activity } : null;
}

/** A section header of `dumpsys window`, e.g. `WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)`. */
const HEADER = /^WINDOW MANAGER [A-Z][A-Z ]* \(dumpsys window [a-z-]+\)\r?$/;

/**
 * The output without the `WINDOW MANAGER LAST ANR (dumpsys window lastanr)` section: a full
 * `dumpsys window` starts with the state WindowManagerService froze at the last ANR, kept for two
 * hours, focus lines included. Its frozen copy of the display contents, after `Last ANR
 * continued`, has a section header of its own, so the section ends at the first header after that
 * copy's (or, without the copy, at the first header after its own).
 */
export function withoutLastAnr(dumpsysWindow: string): string {
  const lines = dumpsysWindow.split("\n");
  const start = lines.findIndex((l) => /^WINDOW MANAGER LAST ANR \(dumpsys window lastanr\)\r?$/.test(l));
  if (start < 0) return dumpsysWindow;
  let i = start + 1;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    // The frozen copy's own header belongs to the section.
    if (/^Last ANR continued\r?$/.test(line) && HEADER.test(lines[i + 1] ?? "")) i++;
    else if (HEADER.test(line)) break;
  }
  return [...lines.slice(0, start), ...lines.slice(i)].join("\n");
}

export function parseForeground(dumpsysWindow: string): Foreground | null {
  const live = withoutLastAnr(dumpsysWindow);
  for (const { key, record } of SOURCES) {
    for (const line of live.matchAll(key)) {
      const m = record.exec((line[1] as string).trim());
      const found = m ? parseComponent((m[1] as string).trim()) : null;
      if (found) return found;
    }
  }
  return null;
}
