import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  parseAmStartWait,
  parseComponentName,
  parseQueryActivities,
  parseResolveActivity,
} from "../../../../drivers/android/parse/launch.ts";

const sample = (dir: string, name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/${dir}/${name}.txt`, import.meta.url), "utf8");
const all = <T>(dir: string, names: string[], parse: (out: string) => T) =>
  Object.fromEntries(names.map((n) => [n, parse(sample(dir, n))]));

describe("parseResolveActivity", () => {
  test("names the launcher activity or says there is none when given the recorded samples", () => {
    const names = [
      "android-14-settings",
      "android-13-class-in-other-package",
      "android-10-pty-inner-class",
      "android-14-no-activity",
      "android-13-exception",
      "android-6-no-cmd",
    ];
    expect(all("resolve-activity", names, parseResolveActivity)).toEqual({
      "android-14-settings": {
        kind: "component",
        packageName: "com.android.settings",
        activity: "com.android.settings.Settings",
      },
      "android-13-class-in-other-package": {
        kind: "component",
        packageName: "com.google.android.apps.maps",
        activity: "com.google.android.maps.MapsActivity",
      },
      "android-10-pty-inner-class": {
        kind: "component",
        packageName: "com.google.android.youtube",
        activity: "com.google.android.youtube.app.honeycomb.Shell$HomeActivity",
      },
      "android-14-no-activity": { kind: "none" },
      "android-13-exception": null,
      "android-6-no-cmd": null,
    });
  });

  test("returns null when the last line is empty, shell syntax or not a component", () => {
    const outputs = [
      "",
      "\n\n",
      "com.example.app/.Main; reboot\n",
      "com.example.app/.Main $(id)\n",
      "com.example.app\n",
      "/.Main\n",
      "com.example.app/\n",
      "1com.example/.Main\n",
      "No activity found.\n",
    ];
    expect(outputs.map(parseResolveActivity)).toEqual(outputs.map(() => null));
  });
});

describe("parseComponentName", () => {
  test("qualifies the class when it is relative, and keeps it when it is absolute or the package has one segment", () => {
    expect(
      ["a.b/.C", "a.b/x.y.C", "android/com.android.internal.app.ResolverActivity", "a.b/C$D"].map(parseComponentName),
    ).toEqual([
      { packageName: "a.b", activity: "a.b.C" },
      { packageName: "a.b", activity: "x.y.C" },
      { packageName: "android", activity: "com.android.internal.app.ResolverActivity" },
      { packageName: "a.b", activity: "C$D" },
    ]);
  });
});

describe("parseAmStartWait", () => {
  test("reads the wait report, an error or a timeout when given the recorded samples", () => {
    const names = [
      "android-14-cold",
      "android-12-task-to-front",
      "android-13-already-in-front",
      "android-9-pty",
      "android-11-timeout",
      "android-14-class-not-found",
      "truncated",
    ];
    expect(all("am-start-w", names, parseAmStartWait)).toEqual({
      "android-14-cold": {
        kind: "ok",
        launchState: "COLD",
        activity: "com.android.settings/.Settings",
        totalTimeMs: 412,
        waitTimeMs: 419,
        warning: null,
      },
      "android-12-task-to-front": {
        kind: "ok",
        launchState: "HOT",
        activity: "com.example.shop/.ui.MainActivity",
        totalTimeMs: 87,
        waitTimeMs: 93,
        warning: "Activity not started, its current task has been brought to the front",
      },
      "android-13-already-in-front": {
        kind: "ok",
        launchState: "UNKNOWN (0)",
        activity: "com.android.settings/.Settings",
        totalTimeMs: null,
        waitTimeMs: 12,
        warning: "Activity not started, its current task has been brought to the front",
      },
      "android-9-pty": {
        kind: "ok",
        launchState: null,
        activity: "com.android.settings/.Settings",
        totalTimeMs: 530,
        waitTimeMs: 545,
        warning: null,
      },
      "android-11-timeout": { kind: "timeout", activity: "com.example.slow/.SplashActivity", waitTimeMs: 10014 },
      "android-14-class-not-found": {
        kind: "error",
        message: "Activity class {com.example.app/com.example.app.Gone} does not exist.",
      },
      truncated: null,
    });
  });

  test("returns null when the report is missing, has an unknown status or field, repeats a field or lacks WaitTime", () => {
    const report = (...lines: string[]) => `Starting: Intent { cmp=a.b/.C }\n${lines.join("\n")}\n`;
    const outputs = [
      "",
      "Starting: Intent { cmp=a.b/.C }\n",
      "garbage\nComplete\n",
      report("Status: maybe", "WaitTime: 1", "Complete"),
      report("Status: ok", "Mood: good", "WaitTime: 1", "Complete"),
      report("Status: ok", "WaitTime: 1", "WaitTime: 2", "Complete"),
      report("Status: ok", "TotalTime: 5", "Complete"),
      report("Status: ok", "TotalTime: soon", "WaitTime: 1", "Complete"),
      report("Status: ok", "WaitTime: 1", "Complete", "trailing"),
    ];
    expect(outputs.map(parseAmStartWait)).toEqual(outputs.map(() => null));
  });

  test("reports the first Error line when am could not start the activity", () => {
    expect(
      parseAmStartWait(
        "Starting: Intent { cmp=a.b/.C }\nError: Activity not started, unable to resolve Intent { cmp=a.b/.C }\n",
      ),
    ).toEqual({
      kind: "error",
      message: "Activity not started, unable to resolve Intent { cmp=a.b/.C }",
    });
  });
});

describe("parseQueryActivities", () => {
  test('reads one flattened component per line, none from "No activities found", and null for anything else', () => {
    // The --components form of AOSP PackageManagerShellCommand.runQueryIntentActivities.
    expect(parseQueryActivities("com.example.multi/.MainActivity\r\ncom.example.multi/com.other.Debug\n")).toEqual([
      { packageName: "com.example.multi", activity: "com.example.multi.MainActivity" },
      { packageName: "com.example.multi", activity: "com.other.Debug" },
    ]);
    expect(parseQueryActivities("No activities found\n")).toEqual([]);
    for (const out of [
      "",
      "2 activities found:\n  Activity #0:\n",
      "com.example.multi/.Main\nException occurred while executing 'query-activities':\n",
      "Unknown command: query-activities\n",
    ])
      expect(parseQueryActivities(out)).toBeNull();
  });
});
