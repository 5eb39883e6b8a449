/**
 * The Android driver against what real phones do on the platform side (issue 24): a clipboard
 * without a shell command (every stock Android), apps with several launcher activities, over the
 * real adb server and the simulated phone.
 */
import { expect, test } from "bun:test";
import {
  DEMO_PACKAGE,
  describeWithAdb,
  type Scenario,
  screenRoot,
  adbServerForFile,
} from "../../support/adb-device/index.ts";
import { attach, clearLogs, driverError, ran, TRAILER, exec, demo } from "../../support/adb-device/driver-harness.ts";

const adb = adbServerForFile();

describeWithAdb("non-ASCII text on a stock phone (clipboard without a shell command)", () => {
  test("inputText fails with android_text_unsupported naming the helper and types nothing when the phone is stock", async () => {
    await using a = await attach(adb.server());
    await exec(a, "tap", { x: 540, y: 440 });
    clearLogs(a.phone);
    const err = await driverError(exec(a, "inputText", { text: "ab Grüße" }));
    expect([err.code, err.data.retryable, (err.data.details as { platformCode: string }).platformCode]).toEqual([
      "platform_error",
      false,
      "android_text_unsupported",
    ]);
    expect(err.data.message).toStartWith("stock Android offers no shell path for non-ASCII text");
    expect(err.data.message).toContain("io.appium.settings types any text through its Unicode IME");
    expect(err.data.message).toContain("`devicerail android helper install`");
    expect(err.data.message).toContain("without it, type ASCII text only");
    expect(err.data.message).not.toContain("Android 12");
    // The probe ran and the phone answered as stock Android does: the message, status 0.
    expect(a.phone.commandLog.map((r) => [r.argv, r.exitCode])).toEqual([
      [["cmd", "clipboard", "set", "text", ""], 0],
      [expect.anything(), 0],
    ]);
    expect(ran(a.phone)).toEqual([["cmd", "clipboard", "set", "text", ""], TRAILER]);
    // Nothing half-typed, not even the ASCII prefix.
    expect([demo(a.phone).username, a.phone.inputLog]).toEqual(["", []]);
    // Asked once per device: the second refusal runs nothing.
    clearLogs(a.phone);
    expect((await driverError(exec(a, "inputText", { text: "東京" }))).data.details).toEqual({
      platformCode: "android_text_unsupported",
    });
    expect(a.phone.commandLog).toEqual([]);
  });
});

/** An app with two MAIN/LAUNCHER activities (a main one and a debug entry point), neither the default. */
const MULTI: Scenario = {
  package: "com.example.multi",
  activity: "com.example.multi.MainActivity",
  extraLaunchers: ["com.example.multi.debug.DebugActivity"],
  label: "Multi",
  initial: "main",
  state: {},
  screens: { main: (_s, view) => screenRoot(view, [{ className: "android.widget.TextView", text: "Multi" }]) },
};
const INTENT = [
  "--user",
  "current",
  "-a",
  "android.intent.action.MAIN",
  "-c",
  "android.intent.category.LAUNCHER",
  "com.example.multi",
];
const RESOLVE = ["cmd", "package", "resolve-activity", "--brief", ...INTENT];
const QUERY = ["cmd", "package", "query-activities", "--brief", "--components", ...INTENT];

describeWithAdb("launch of an app with several launcher activities", () => {
  test("launch fails with android_app_launch_ambiguous listing the launcher activities and starts nothing when none is the default", async () => {
    await using a = await attach(adb.server());
    a.phone.install(MULTI);
    const err = await driverError(exec(a, "launch", { packageName: "com.example.multi" }));
    expect(err).toEqual({
      code: "platform_error",
      data: {
        code: "platform_error",
        retryable: false,
        details: { platformCode: "android_app_launch_ambiguous" },
        message:
          "com.example.multi has 2 launcher activities and no default among them: com.example.multi.MainActivity, com.example.multi.debug.DebugActivity. " +
          'Launch one by name with the launch action\'s activity argument, e.g. {"packageName":"com.example.multi","activity":"com.example.multi.MainActivity"} ' +
          "(CLI: devicerail launch com.example.multi --activity com.example.multi.MainActivity)",
      },
    });
    expect([ran(a.phone), a.phone.foreground, a.phone.problems]).toEqual([
      [RESOLVE, TRAILER, QUERY, TRAILER],
      DEMO_PACKAGE,
      [],
    ]);
  });

  test("launch starts the named activity with am start -W -n, fully qualified or relative to the package", async () => {
    await using a = await attach(adb.server());
    a.phone.install(MULTI);
    expect(await exec(a, "launch", { packageName: "com.example.multi", activity: ".debug.DebugActivity" })).toEqual({
      output: { accepted: true },
    });
    expect([ran(a.phone), a.phone.foreground, a.phone.problems]).toEqual([
      [
        ["am", "start", "-W", "--user", "current", "-n", "com.example.multi/com.example.multi.debug.DebugActivity"],
        TRAILER,
      ],
      "com.example.multi",
      [],
    ]);
    a.phone.forceStop("com.example.multi");
    clearLogs(a.phone);
    expect(
      await exec(a, "launch", { packageName: "com.example.multi", activity: "com.example.multi.MainActivity" }),
    ).toEqual({ output: { accepted: true } });
    expect(ran(a.phone)).toEqual([
      ["am", "start", "-W", "--user", "current", "-n", "com.example.multi/com.example.multi.MainActivity"],
      TRAILER,
    ]);
  });

  test("launch refuses an activity argument that is not a class name before anything runs, and reports one the app lacks", async () => {
    await using a = await attach(adb.server());
    a.phone.install(MULTI);
    for (const activity of ["Main; reboot", "../x", ".", "a b"]) {
      const err = await driverError(exec(a, "launch", { packageName: "com.example.multi", activity }));
      expect([err.code, err.data.details]).toEqual([
        "invalid_arguments",
        expect.objectContaining({ action: "launch" }),
      ]);
    }
    expect(a.phone.commandLog).toEqual([]);
    const missing = await driverError(exec(a, "launch", { packageName: "com.example.multi", activity: ".Gone" }));
    expect([missing.data.details, missing.data.retryable]).toEqual([
      { platformCode: "android_app_launch_error" },
      false,
    ]);
    expect(a.phone.foreground).toBe(DEMO_PACKAGE);
  });

  test("the simulated phone prints the chooser for resolve-activity and one component per line for query-activities", async () => {
    await using a = await attach(adb.server());
    a.phone.install(MULTI);
    expect(await a.phone.runForText(RESOLVE.join(" "))).toEqual({
      out: "priority=0 preferredOrder=0 match=0x0 specificIndex=-1 isDefault=false\nandroid/com.android.internal.app.ResolverActivity\n",
      err: "",
      both: "priority=0 preferredOrder=0 match=0x0 specificIndex=-1 isDefault=false\nandroid/com.android.internal.app.ResolverActivity\n",
      status: 0,
    });
    expect((await a.phone.runForText(QUERY.join(" "))).out).toBe(
      "com.example.multi/.MainActivity\ncom.example.multi/.debug.DebugActivity\n",
    );
    expect((await a.phone.runForText(QUERY.slice(0, -1).concat("com.example.missing").join(" "))).out).toBe(
      "No activities found\n",
    );
  });
});
