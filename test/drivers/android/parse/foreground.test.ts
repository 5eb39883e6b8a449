import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseComponent, parseForeground } from "../../../../drivers/android/parse/foreground.ts";
import { demoScenario, FakePhone } from "../../../support/adb-device/index.ts";

const sample = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/dumpsys-window/${name}.txt`, import.meta.url), "utf8");

/** stdout and stderr of a script on the simulated phone, as the driver reads them (2>&1). */
const shell = async (phone: FakePhone, src: string) => (await phone.runForText(src)).both;

describe("parseForeground", () => {
  test("names the focused app when the samples come from Android 10 to 14", () => {
    const names = [
      "android-10-settings",
      "android-10-lockscreen",
      "android-11-launcher",
      "android-12-no-focus",
      "android-13-notification-shade",
      "android-14-splash-screen",
    ];
    expect(Object.fromEntries(names.map((s) => [s, parseForeground(sample(s))]))).toEqual({
      "android-10-settings": { packageName: "com.android.settings", activity: "com.android.settings.Settings" },
      "android-10-lockscreen": null,
      "android-11-launcher": {
        packageName: "com.google.android.apps.nexuslauncher",
        activity: "com.google.android.apps.nexuslauncher.NexusLauncherActivity",
      },
      "android-12-no-focus": null,
      // A system window has the focus: the app behind it answers, resolved from `.relative`.
      "android-13-notification-shade": {
        packageName: "com.google.android.youtube",
        activity: "com.google.android.youtube.app.honeycomb.Shell$HomeActivity",
      },
      "android-14-splash-screen": { packageName: "com.example.shop", activity: "com.example.shop.ui.MainActivity" },
    });
  });

  test("follows the simulated phone when it runs Android 10 and 11 and the app navigates", async () => {
    const results = [];
    for (const sdk of ["29", "30"]) {
      const phone = new FakePhone({ scenario: demoScenario, props: { "ro.build.version.sdk": sdk } });
      const login = await shell(phone, "dumpsys window windows");
      phone.runtime().context().goto("home");
      const home = await shell(phone, "dumpsys window");
      phone.launch("com.android.settings");
      const settings = await shell(phone, "dumpsys window w");
      const focusedApp = login
        .split("\n")
        .find((l) => l.includes("mFocusedApp="))
        ?.trim();
      results.push({
        focusedApp: focusedApp?.replace(/[0-9a-f]{7}/g, "#"),
        found: [login, home, settings].map(parseForeground),
      });
    }
    const found = [
      { packageName: "com.example.app", activity: "com.example.app.LoginActivity" },
      { packageName: "com.example.app", activity: "com.example.app.HomeActivity" },
      { packageName: "com.android.settings", activity: "com.android.settings.Settings" },
    ];
    expect(results).toEqual([
      {
        focusedApp:
          "mFocusedApp=AppWindowToken{# token=Token{# ActivityRecord{# u0 com.example.app/.LoginActivity t13}}}",
        found,
      },
      { focusedApp: "mFocusedApp=ActivityRecord{# u0 com.example.app/.LoginActivity t13}", found },
    ]);
  });

  test("reads mResumedActivity when given dumpsys activity activities", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    expect(parseForeground(await shell(phone, "dumpsys activity activities"))).toEqual({
      packageName: "com.example.app",
      activity: "com.example.app.LoginActivity",
    });
  });

  test("returns null when no line names a package", () => {
    const outputs = [
      "",
      "  mCurrentFocus=null\n",
      "  mCurrentFocus=Window{4b9a2c3 u0 StatusBar}\n",
      "  mCurrentFocus=Window{4b9a2c3 u0 PopupWindow:3e1c2b7}\n  mFocusedApp=null\n",
      "  mCurrentFocus=Window{4b9a2c3 u0 Application Not Responding: com.example.app}\n",
      "  mInputMethodTarget in display# 0 Window{3c5e0a1 u0 com.android.settings/com.android.settings.Settings}\n",
      "  mCurrentFocus=Window{3c5e0a1 u0 com.android.settings/not a class}\n",
    ];
    expect(outputs.map(parseForeground)).toEqual(outputs.map(() => null));
  });

  test("takes the first display's focus when several are listed with CRLF line ends", () => {
    const out = "  mCurrentFocus=Window{1 u0 com.a.first/.Main}\r\n  mCurrentFocus=Window{2 u0 com.b.second/.Main}\r\n";
    expect(parseForeground(out)).toEqual({ packageName: "com.a.first", activity: "com.a.first.Main" });
  });
});

describe("parseComponent", () => {
  test("resolves the activity when it is relative, absolute or in another package", () => {
    expect(
      [
        "com.a/.B",
        "com.a/com.a.B",
        "com.a/org.other.B$Inner",
        "com.a.b",
        "StatusBar",
        "com.a/",
        "/com.a.B",
        "com.a/.",
        "1com.a/.B",
      ].map(parseComponent),
    ).toEqual([
      { packageName: "com.a", activity: "com.a.B" },
      { packageName: "com.a", activity: "com.a.B" },
      { packageName: "com.a", activity: "org.other.B$Inner" },
      { packageName: "com.a.b", activity: null },
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});
