/** The simulated package manager and `ime` through the real adb server: push + pm install, adb install, refusal, uninstall, grants. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { PINNED_APK_FILES, SETTINGS_APP_PACKAGE, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "./apk-catalog.ts";
import type { TraceEntry } from "./fake-adbd.ts";
import { startFakeDevice } from "./fake-device.ts";
import { STOCK_IME } from "./ime.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const SETTINGS_IMES = [
  "io.appium.settings/.AppiumIME",
  "io.appium.settings/.EmptyIME",
  "io.appium.settings/.UnicodeIME",
];

describeWithAdb("package manager of the simulated phone", () => {
  test("adb push then pm install -r -g installs the Settings app with its runtime permissions and IMEs", async () => {
    await using dev = await startFakeDevice(server);
    const s = ["-s", dev.serial];
    expect((await server.adb([...s, "push", PINNED_APK_FILES.settings, "/data/local/tmp/settings.apk"])).exitCode).toBe(
      0,
    );
    const r = await server.adb([...s, "shell", "pm", "install", "-r", "-g", "/data/local/tmp/settings.apk"]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "Success\n", ""]);
    const list = await server.adb([...s, "shell", "pm", "list", "packages", SETTINGS_APP_PACKAGE]);
    expect(list.stdout).toBe(`package:${SETTINGS_APP_PACKAGE}\n`);
    expect((await server.adb([...s, "shell", "pm", "path", SETTINGS_APP_PACKAGE])).exitCode).toBe(0);
    const dump = (await server.adb([...s, "shell", "dumpsys", "package", SETTINGS_APP_PACKAGE])).stdout;
    // The lines appium-adb getPackageInfo matches.
    expect(
      new RegExp(`^\\s*Package\\s+\\[${SETTINGS_APP_PACKAGE.replaceAll(".", "\\.")}\\][^:]+:$`, "m").test(dump),
    ).toBe(true);
    expect(dump).toContain("    versionCode=192 minSdk=26 targetSdk=35\n    versionName=8.0.10\n");
    expect(
      dev.phone.packages.installed.get(SETTINGS_APP_PACKAGE)?.granted.has("android.permission.ACCESS_FINE_LOCATION"),
    ).toBe(true);
    const imes = await server.adb([...s, "shell", "ime", "list", "-a", "-s"]);
    expect(imes.stdout).toBe([STOCK_IME, ...SETTINGS_IMES].map((i) => `${i}\n`).join(""));
    // Installed, not enabled.
    expect((await server.adb([...s, "shell", "ime", "list", "-s"])).stdout).toBe(`${STOCK_IME}\n`);
    // The launcher activity starts.
    const start = await server.adb([...s, "shell", "am", "start", "-W", "-n", "io.appium.settings/.Settings"]);
    expect(start.stdout).toContain("Status: ok");
    expect(dev.phone.foreground).toBe(SETTINGS_APP_PACKAGE);
    expect(dev.phone.problems).toEqual([]);
  });

  test("adb install streams the APK to `cmd package install -S <size>` and succeeds; adb uninstall removes it", async () => {
    const opens: string[] = [];
    const trace = (e: TraceEntry) => {
      if (e.direction === "in" && e.command === "OPEN") opens.push(new TextDecoder().decode(e.data));
    };
    await using dev = await startFakeDevice(server, { trace });
    const s = ["-s", dev.serial];
    const size = readFileSync(PINNED_APK_FILES.server).length;
    const r = await server.adb([...s, "install", "-r", "-t", PINNED_APK_FILES.server]);
    expect([r.exitCode, r.stdout]).toEqual([0, "Performing Streamed Install\nSuccess\n"]);
    // Debian's adb 29.0.6 on a device with the `cmd` feature and no `abb_exec`.
    expect(opens).toContain(`exec:cmd package 'install' '-r' '-t' -S ${size}\0`);
    expect((await server.adb([...s, "install", PINNED_APK_FILES.test])).exitCode).toBe(0);
    expect([...dev.phone.packages.installed.keys()]).toEqual([UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE]);
    const dump = (await server.adb([...s, "shell", "dumpsys", "package", UIA2_TEST_PACKAGE])).stdout;
    expect(dump).toContain("    versionCode=0 minSdk=26 targetSdk=34\n    versionName=null\n");
    const u = await server.adb([...s, "uninstall", UIA2_TEST_PACKAGE]);
    expect([u.exitCode, u.stdout]).toEqual([0, "Success\n"]);
    expect(dev.phone.apps.has(UIA2_TEST_PACKAGE)).toBe(false);
    expect(dev.phone.problems).toEqual([]);
  });

  test("an unknown file gets the parse failure, a missing one the open error", async () => {
    await using dev = await startFakeDevice(server, { files: { "/data/local/tmp/junk.apk": "not a zip" } });
    const sh = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    const junk = await sh("pm", "install", "-r", "/data/local/tmp/junk.apk");
    expect(junk.exitCode).toBe(1);
    expect(junk.stdout).toMatch(
      /^Failure \[INSTALL_PARSE_FAILED_NOT_APK: Failed to parse (\/data\/app\/vmdl\d+\.tmp\/base\.apk): Failed to load asset path \1\]\n$/,
    );
    const missing = await sh("pm", "install", "/data/local/tmp/none.apk");
    expect([missing.exitCode, missing.stderr.split("\n")[0]]).toEqual([
      255,
      "Error: Can't open file: /data/local/tmp/none.apk",
    ]);
    expect(dev.phone.packages.installed.size).toBe(0);
  });

  test("a ROM that refuses installs answers INSTALL_FAILED_USER_RESTRICTED to pm and to adb install", async () => {
    await using dev = await startFakeDevice(server, { installRefused: true });
    const s = ["-s", dev.serial];
    await server.adb([...s, "push", PINNED_APK_FILES.test, "/data/local/tmp/t.apk"]);
    const pm = await server.adb([...s, "shell", "pm", "install", "-r", "-g", "/data/local/tmp/t.apk"]);
    expect([pm.exitCode, pm.stdout]).toEqual([
      1,
      "Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]\n",
    ]);
    const cli = await server.adb([...s, "install", PINNED_APK_FILES.test]);
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toContain("Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]");
    expect(dev.phone.packages.installed.size).toBe(0);
    dev.phone.packages.installRefused = false;
    expect((await server.adb([...s, "install", PINNED_APK_FILES.test])).exitCode).toBe(0);
  });

  test("pm uninstall of a package that is not there fails as Android does, with and without --user", async () => {
    await using dev = await startFakeDevice(server);
    const sh = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    expect((await sh("pm", "uninstall", "com.nope")).stdout).toBe("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
    expect((await sh("pm", "uninstall", "--user", "0", "com.nope")).stdout).toBe("Failure [not installed for 0]\n");
    // A stock app cannot be removed for all users either.
    expect((await sh("pm", "uninstall", "com.android.chrome")).stdout).toBe("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
    expect(dev.phone.apps.has("com.android.chrome")).toBe(true);
  });

  test("pm grant, appops set and cmd notification allow_listener record what they allow; bad grants fail", async () => {
    await using dev = await startFakeDevice(server);
    const phone = dev.phone;
    const sh = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    await server.adb(["-s", dev.serial, "install", PINNED_APK_FILES.settings]);
    const pkg = phone.packages.installed.get(SETTINGS_APP_PACKAGE);
    expect(pkg?.granted.size).toBe(0);
    for (const p of ["android.permission.SET_ANIMATION_SCALE", "android.permission.ACCESS_FINE_LOCATION"])
      expect((await sh("pm", "grant", SETTINGS_APP_PACKAGE, p)).exitCode).toBe(0);
    expect([...(pkg?.granted ?? [])]).toEqual([
      "android.permission.SET_ANIMATION_SCALE",
      "android.permission.ACCESS_FINE_LOCATION",
    ]);
    const notRequested = await sh("pm", "grant", SETTINGS_APP_PACKAGE, "android.permission.CAMERA");
    expect([notRequested.exitCode, notRequested.stderr]).toEqual([
      255,
      "Exception occurred while executing 'grant':\njava.lang.SecurityException: Package io.appium.settings has not requested permission android.permission.CAMERA\n",
    ]);
    const installTime = await sh("pm", "grant", SETTINGS_APP_PACKAGE, "android.permission.INTERNET");
    expect(installTime.stderr).toContain("is not a changeable permission type");
    expect((await sh("pm", "grant", "com.nope", "android.permission.CAMERA")).stderr).toContain(
      "Unknown package: com.nope",
    );
    expect((await sh("appops", "set", SETTINGS_APP_PACKAGE, "android:mock_location", "allow")).exitCode).toBe(0);
    expect(phone.packages.appop(SETTINGS_APP_PACKAGE, "android:mock_location")).toBe("allow");
    expect((await sh("cmd", "notification", "allow_listener", "io.appium.settings/.NLService")).exitCode).toBe(0);
    expect((await sh("settings", "get", "secure", "enabled_notification_listeners")).stdout).toBe(
      "io.appium.settings/io.appium.settings.NLService\n",
    );
    expect(phone.problems).toEqual([]);
  });

  test("ime enable, set and disable print AOSP's texts and keep default_input_method in step", async () => {
    await using dev = await startFakeDevice(server);
    const sh = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    const unicode = "io.appium.settings/.UnicodeIME";
    expect((await sh("settings", "get", "secure", "default_input_method")).stdout).toBe(`${STOCK_IME}\n`);
    const notInstalled = await sh("ime", "enable", unicode);
    expect([notInstalled.exitCode, notInstalled.stderr]).toEqual([
      255,
      `Unknown input method ${unicode} cannot be enabled for user #0\n`,
    ]);
    await server.adb(["-s", dev.serial, "install", PINNED_APK_FILES.settings]);
    const notEnabled = await sh("ime", "set", unicode);
    expect([notEnabled.exitCode, notEnabled.stderr]).toEqual([
      255,
      `Unknown input method ${unicode} cannot be selected for user #0\n`,
    ]);
    expect((await sh("ime", "enable", unicode)).stdout).toBe(`Input method ${unicode}: now enabled for user #0\n`);
    expect((await sh("ime", "enable", unicode)).stdout).toBe(`Input method ${unicode}: already enabled for user #0\n`);
    // The full class name is not the IME's id.
    expect((await sh("ime", "set", "io.appium.settings/io.appium.settings.UnicodeIME")).exitCode).toBe(255);
    expect((await sh("ime", "set", unicode)).stdout).toBe(`Input method ${unicode} selected for user #0\n`);
    expect((await sh("settings", "get", "secure", "default_input_method")).stdout).toBe(`${unicode}\n`);
    expect(dev.phone.ime.selected).toBe(unicode);
    expect((await sh("ime", "list", "-s")).stdout).toBe(`${STOCK_IME}\n${unicode}\n`);
    // appium-adb runInImeContext cycles the original IME off and on.
    expect((await sh("ime", "disable", STOCK_IME)).stdout).toBe(
      `Input method ${STOCK_IME}: now disabled for user #0\n`,
    );
    expect((await sh("ime", "enable", STOCK_IME)).stdout).toBe(`Input method ${STOCK_IME}: now enabled for user #0\n`);
    expect((await sh("ime", "set", STOCK_IME)).exitCode).toBe(0);
    expect(dev.phone.ime.enabled).toEqual([unicode, STOCK_IME]);
    // Removing the app drops its IMEs; with one selected, the stock keyboard takes over.
    await sh("ime", "set", unicode);
    await server.adb(["-s", dev.serial, "uninstall", SETTINGS_APP_PACKAGE]);
    expect([dev.phone.ime.selected, dev.phone.ime.enabled]).toEqual([STOCK_IME, [STOCK_IME]]);
    expect(dev.phone.problems).toEqual([]);
  });
});
