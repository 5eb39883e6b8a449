/**
 * What real phones do to screenshots and the foreground app, through the real adb server against
 * the simulated phone: foldables (several physical displays, Android 14's screencap warning on
 * stderr, merged into the exec: stream) and the frozen LAST ANR section of `dumpsys window`.
 */
import { expect, test } from "bun:test";
import { pngSize } from "../../../src/driver/png.ts";
import { type CommandFn, DEMO_PACKAGE, describeWithAdb, adbServerForFile } from "../../support/adb-device/index.ts";
import { attach, clearLogs, ctx, driverError, platformError, ran } from "../../support/adb-device/driver-harness.ts";
import { FOLDABLE_DISPLAYS, FOLDED_DISPLAYS, MULTI_DISPLAY_WARNING } from "../../support/adb-device/displays.ts";

const adb = adbServerForFile();

/** Android 14, where screencap warns about several displays (AOSP cmds/screencap/screencap.cpp). */
const ANDROID_14 = { "ro.build.version.sdk": "34", "ro.build.version.release": "14" };
const OUTER = FOLDED_DISPLAYS.find((d) => d.on) as (typeof FOLDED_DISPLAYS)[number];
const screencaps = (argvs: (string[] | string)[]) =>
  argvs.filter((a): a is string[] => Array.isArray(a) && a[0] === "screencap");
/** The commands that list displays (others, run at connect for other reasons, are left out). */
const displayQueries = (argvs: (string[] | string)[]) =>
  argvs.filter(
    (a): a is string[] =>
      Array.isArray(a) && ((a[0] === "dumpsys" && a[1] === "SurfaceFlinger") || (a[0] === "cmd" && a[1] === "display")),
  );

describeWithAdb("screenshots on a foldable (several physical displays)", () => {
  test("captures the panel that is on with -d, chosen once at connect, when the phone is folded", async () => {
    await using a = await attach(adb.server(), { props: ANDROID_14, displays: FOLDED_DISPLAYS, connect: false });
    await a.driver.connect(a.id, ctx());
    const atConnect = displayQueries(ran(a.phone));
    clearLogs(a.phone);
    const first = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    const second = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect([first.screenshot, second.screenshot]).toEqual([a.phone.screenshot(), a.phone.screenshot()]);
    expect(atConnect).toEqual([
      ["dumpsys", "SurfaceFlinger", "--display-id"],
      ["cmd", "display", "get-displays"],
    ]);
    // The cover panel (HWC display 1), not screencap's default first display, which is off and black.
    expect(screencaps(ran(a.phone))).toEqual([
      ["screencap", "-p", "-d", OUTER.physicalId],
      ["screencap", "-p", "-d", OUTER.physicalId],
    ]);
    expect(a.phone.problems).toEqual([]);
  });

  test("captures the inner panel when the phone is unfolded", async () => {
    await using a = await attach(adb.server(), { props: ANDROID_14, displays: FOLDABLE_DISPLAYS });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(obs.screenshot).toEqual(a.phone.screenshot());
    expect(screencaps(ran(a.phone))).toEqual([["screencap", "-p", "-d", FOLDABLE_DISPLAYS[0]?.physicalId as string]]);
  });

  test("returns the PNG without screencap's warning when no display can be chosen (none is on)", async () => {
    // The screen is off: no logical display is ON, so screencap's default (with its warning) runs.
    const displays = FOLDABLE_DISPLAYS.map((d) => ({ ...d, on: false }));
    await using a = await attach(adb.server(), { props: ANDROID_14, displays });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(pngSize(obs.screenshot as Uint8Array)).toEqual({ width: 2076, height: 2152 });
    expect(a.phone.serviceLog.filter((s) => s.kind === "exec").map((s) => s.command)).toEqual([
      "screencap -p 2>/dev/null",
    ]);
  });

  test("finds the PNG by its signature when text precedes it on stdout", async () => {
    await using a = await attach(adb.server());
    const screencap = a.phone.commands.get("screencap") as CommandFn;
    // The phone prints both the warning and a VMOS Pro header on stdout (AzurLaneAutoScript PR #940
    // quotes `long long=8 fun*=10` before the PNG; on which stream it comes is not known): text that
    // 2>/dev/null cannot remove.
    a.phone.commands.set("screencap", (argv, io) => {
      io.out(`${MULTI_DISPLAY_WARNING}long long=8 fun*=10\n`);
      return screencap(argv, io);
    });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(obs.screenshot).toEqual(a.phone.screenshot());
  });

  test("still fails as a malformed PNG when the output holds no PNG at all", async () => {
    await using a = await attach(adb.server());
    a.phone.commands.set("screencap", (_argv, io) => (io.out(MULTI_DISPLAY_WARNING), 0));
    expect(await driverError(a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx()))).toEqual(
      platformError("android_adb_malformed_png", true),
    );
  });

  test("asks SurfaceFlinger once at connect and passes no -d on a phone with one display", async () => {
    await using a = await attach(adb.server(), { props: ANDROID_14, connect: false });
    await a.driver.connect(a.id, ctx());
    await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect([displayQueries(ran(a.phone)), screencaps(ran(a.phone))]).toEqual([
      [["dumpsys", "SurfaceFlinger", "--display-id"]],
      [["screencap", "-p"]],
    ]);
  });

  test("asks for no display before Android 10, whose screencap has no physical display ids", async () => {
    await using a = await attach(adb.server(), {
      props: { "ro.build.version.sdk": "28", "ro.build.version.release": "9" },
      connect: false,
    });
    await a.driver.connect(a.id, ctx());
    expect(displayQueries(ran(a.phone))).toEqual([]);
  });
});

describeWithAdb("the foreground app after an ANR", () => {
  const settingsAnr = { package: "com.android.settings", activity: "com.android.settings.Settings" };

  test("reports the app in front, not the one frozen in the LAST ANR section of dumpsys window", async () => {
    await using a = await attach(adb.server(), { lastAnr: settingsAnr });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(obs.metadata.foreground).toEqual({ packageName: DEMO_PACKAGE, activity: `${DEMO_PACKAGE}.LoginActivity` });
  });

  test("reads the displays section on Android 10+ and the windows section before", async () => {
    const read = async (sdk: string) => {
      await using a = await attach(adb.server(), { lastAnr: settingsAnr, props: { "ro.build.version.sdk": sdk } });
      const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: false }, ctx());
      return {
        foreground: obs.metadata.foreground,
        dumpsys: ran(a.phone).filter((c) => Array.isArray(c) && c[0] === "dumpsys" && c[1] === "window"),
      };
    };
    const foreground = { packageName: DEMO_PACKAGE, activity: `${DEMO_PACKAGE}.LoginActivity` };
    expect([await read("34"), await read("28")]).toEqual([
      { foreground, dumpsys: [["dumpsys", "window", "displays"]] },
      { foreground, dumpsys: [["dumpsys", "window", "windows"]] },
    ]);
  });

  test("keeps the activity of the app in front when a tree observation refreshes it", async () => {
    await using a = await attach(adb.server(), { lastAnr: settingsAnr, props: ANDROID_14 });
    await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    // The refresh runs in the background; the next observation of the same screen carries its result.
    let foreground: unknown = null;
    for (let i = 0; i < 50 && !(foreground as { activity?: string } | null)?.activity; i++) {
      await Bun.sleep(20);
      foreground = (await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx())).metadata.foreground;
    }
    expect(foreground).toEqual({ packageName: DEMO_PACKAGE, activity: `${DEMO_PACKAGE}.LoginActivity` });
  });
});
