/**
 * The Android driver with io.appium.settings (issue 27): installed on first connect in `install`
 * mode (pushed, `pm install -r -g -t`, the pushed file removed), used where installed in `use`
 * mode, never in `off`; any Unicode through the Unicode IME with the user's keyboard selected
 * again afterwards, also on failure; mock location, clipboard and animation scales. Over the real
 * adb server and the simulated phone.
 */
import { expect, test } from "bun:test";
import { adbServerForFile, DEMO_PACKAGE, describeWithAdb } from "../../support/adb-device/index.ts";
import { PINNED_APKS, PINNED_APK_FILES, SETTINGS_APP_PACKAGE } from "../../support/adb-device/apk-catalog.ts";
import { STOCK_IME, UNICODE_IME } from "../../support/adb-device/ime.ts";
import { installApk } from "../../support/adb-device/packages.ts";
import {
  type Attached,
  attach,
  clearLogs,
  ctx,
  demo,
  driverError,
  exec,
  ran,
} from "../../support/adb-device/driver-harness.ts";

const adb = adbServerForFile();
const TEXTS = ["שלום עולם", "こんにちは、世界", "ok 😀👍🏽 & done", "e\u0301 a\u0308 n\u0303"];
const settingsApk = Object.values(PINNED_APKS).find((a) => a.package === SETTINGS_APP_PACKAGE);
const names = async (a: Attached) => (await a.driver.actions(a.id, ctx())).map((d) => d.name);

describeWithAdb("io.appium.settings through the Android driver", () => {
  test("install mode installs the helpers at the first connect, checked and cleaned up; use mode does not", async () => {
    await using a = await attach(adb.server(), { helper: "install", connect: false });
    expect(a.phone.packages.installed.has(SETTINGS_APP_PACKAGE)).toBe(false);
    await a.driver.connect(a.id, ctx());
    for (const pkg of ["io.appium.settings", "io.appium.uiautomator2.server", "io.appium.uiautomator2.server.test"])
      expect([pkg, a.phone.packages.installed.has(pkg)]).toEqual([pkg, true]);
    const installs = ran(a.phone).filter((c) => Array.isArray(c) && c[0] === "pm" && c[1] === "install");
    expect(installs.map((c) => (c as string[]).slice(2))).toEqual([
      ["-r", "-g", "-t", "/data/local/tmp/devicerail-settings.apk"],
      ["-r", "-g", "-t", "/data/local/tmp/devicerail-uiautomator2.apk"],
      ["-r", "-g", "-t", "/data/local/tmp/devicerail-uiautomator2-test.apk"],
    ]);
    // Runtime permissions granted by -g, and no pushed APK left behind.
    expect(a.phone.packages.installed.get(SETTINGS_APP_PACKAGE)?.granted.size).toBeGreaterThan(0);
    expect([...a.phone.files.paths()].filter((p) => p.startsWith("/data/local/tmp/devicerail-"))).toEqual([]);
    expect(await names(a)).toContain("setLocation");
    // A second connect finds them current and installs nothing.
    await a.driver.disconnect(a.id, ctx());
    clearLogs(a.phone);
    await a.driver.connect(a.id, ctx());
    expect(ran(a.phone).some((c) => Array.isArray(c) && c[0] === "pm" && c[1] === "install")).toBe(false);
  });

  test("use mode leaves a phone without the helpers as it is and offers no helper action", async () => {
    await using a = await attach(adb.server(), { helper: "use" });
    expect(a.phone.packages.installed.has(SETTINGS_APP_PACKAGE)).toBe(false);
    expect(await names(a)).not.toContain("setLocation");
    expect(await names(a)).not.toContain("clipboardGet");
    expect(await names(a)).toContain("setAnimations");
    const err = await driverError(exec(a, "clipboardGet"));
    expect(err.data.details).toEqual({ platformCode: "android_helper_missing" });
    expect(err.data.message).toContain("devicerail android helper install");
  });

  test("inputText types Hebrew, Japanese, emoji and combining marks through the Unicode IME and selects the user's keyboard again", async () => {
    await using a = await attach(adb.server(), { helper: "use", connect: false });
    installApk(a.phone, settingsApk!, true);
    await a.driver.connect(a.id, ctx());
    await exec(a, "tap", { x: 540, y: 440 });
    for (const text of TEXTS) {
      const r = await exec(a, "inputText", { text });
      expect(r.output).toMatchObject({ accepted: true, via: "unicodeIme" });
      expect(a.phone.ime.selected).toBe(STOCK_IME);
    }
    expect(demo(a.phone).username).toBe(TEXTS.join(""));
    // ASCII still goes through `input text` with the user's keyboard.
    clearLogs(a.phone);
    expect((await exec(a, "inputText", { text: "!" })).output).toMatchObject({ via: "input" });
    expect(ran(a.phone).some((c) => Array.isArray(c) && c[0] === "ime")).toBe(false);
  });

  test("a typing failure still selects the user's keyboard again", async () => {
    await using a = await attach(adb.server(), { helper: "use", connect: false });
    installApk(a.phone, settingsApk!, true);
    await a.driver.connect(a.id, ctx());
    await exec(a, "tap", { x: 540, y: 440 });
    a.phone.inputDenied = true;
    const err = await driverError(exec(a, "inputText", { text: "日本語" }));
    expect(err.data.details).toEqual({ platformCode: "android_input_not_permitted" });
    expect(a.phone.ime.selected).toBe(STOCK_IME);
  });

  test("without the app, non-ASCII text still fails with android_text_unsupported naming the helper command", async () => {
    await using a = await attach(adb.server(), { helper: "off", connect: false });
    installApk(a.phone, settingsApk!, true);
    await a.driver.connect(a.id, ctx());
    await exec(a, "tap", { x: 540, y: 440 });
    const err = await driverError(exec(a, "inputText", { text: "日本語" }));
    expect(err.data.details).toEqual({ platformCode: "android_text_unsupported" });
    expect(err.data.message).toContain("devicerail android helper install");
    expect(a.phone.ime.selected).toBe(STOCK_IME);
  });

  test("setLocation mocks the location until disconnect; clipboardGet reads the clipboard; setAnimations is restored", async () => {
    await using a = await attach(adb.server(), { helper: "use", connect: false });
    installApk(a.phone, settingsApk!, true);
    await a.driver.connect(a.id, ctx());
    await exec(a, "setLocation", { latitude: 35.6812, longitude: 139.7671, altitude: 40 });
    expect(a.phone.location).toEqual({ latitude: 35.6812, longitude: 139.7671, altitude: 40 });
    a.phone.clipboard = "コピー 📋";
    expect((await exec(a, "clipboardGet")).output).toEqual({ accepted: true, text: "コピー 📋" });
    expect(a.phone.ime.selected).toBe(STOCK_IME);
    const before = ["animator_duration_scale", "transition_animation_scale", "window_animation_scale"].map((k) =>
      a.phone.settings.get(`global/${k}`),
    );
    await exec(a, "setAnimations", { enabled: false });
    for (const k of ["animator_duration_scale", "transition_animation_scale", "window_animation_scale"])
      expect(a.phone.settings.get(`global/${k}`)).toBe("0");
    await a.driver.disconnect(a.id, ctx());
    expect(
      ["animator_duration_scale", "transition_animation_scale", "window_animation_scale"].map((k) =>
        a.phone.settings.get(`global/${k}`),
      ),
    ).toEqual(before);
    expect(a.phone.appiumSettings.locationService).toBe(false);
  });
});

test("the pinned APKs the tests use are the ones the driver embeds", async () => {
  const { HELPER_APKS } = await import("../../../drivers/android/helper/apks.ts");
  for (const apk of HELPER_APKS) {
    const file = Bun.file(apk.path);
    expect([apk.name, file.size]).toEqual([apk.name, apk.bytes]);
  }
  expect(PINNED_APK_FILES.settings).toEndWith("settings_apk-debug.apk");
});
