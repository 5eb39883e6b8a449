/** io.appium.settings 8.0.10 on the simulated phone through the real adb server: Unicode IME typing, clipboard, location, notifications, animations. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { PINNED_APK_FILES, SETTINGS_APP_PACKAGE } from "./apk-catalog.ts";
import { DEMO_PACKAGE, demoScenario } from "./demo-scenario.ts";
import { type FakeDevice, type FakeDeviceOptions, startFakeDevice } from "./fake-device.ts";
import { decodeImapRun, encodeImapUtf7, STOCK_IME, UNICODE_IME } from "./ime.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const APPIUM_IME = "io.appium.settings/.AppiumIME";

/** A phone with the demo app in front and the Settings app installed with `adb install -g`. */
async function withSettingsApp(options: FakeDeviceOptions = {}): Promise<FakeDevice> {
  const dev = await startFakeDevice(server, { scenario: demoScenario, ...options });
  const r = await server.adb(["-s", dev.serial, "install", "-g", PINNED_APK_FILES.settings]);
  if (r.exitCode !== 0) throw new Error(r.stderr);
  return dev;
}

const shell = (dev: FakeDevice, ...args: string[]) => server.adb(["-s", dev.serial, "shell", ...args]);

/** appium-adb keyboard-commands.js inputText: backslash before shell specials, %s for spaces, in `''…''`. */
const inputTextArg = (text: string) => `''${text.replace(/[()<>|;&*\\~^"'$`]/g, "\\$&").replaceAll(" ", "%s")}''`;

/** The `data="…"` of `am broadcast` output, as io.appium.settings build/lib/client.js reads it. */
const dataOf = (out: string) => /\bdata="(.+)",?/.exec(out)?.[1] ?? null;

test("decodeImapRun follows ICU's IMAP-mailbox-name decoder on the edges", () => {
  // RFC 3501 §5.1.3's example runs, `&-`, `,` as 63, a surrogate pair, and the illegal forms.
  expect(["&ZeVnLIqe-", "&U,BTFw-", "&-", "&2D3eAA-", "&AOkA6QDp-"].map(decodeImapRun)).toEqual([
    "日本語",
    "台北",
    "&",
    "😀",
    "ééé",
  ]);
  for (const bad of ["&ZeVnLIqe", "ZeVn-", "&A-", "&AOl-", "&AOkA-", "&AC0-", "&AOk&-", "&AOk/-"])
    expect([bad, decodeImapRun(bad)]).toEqual([bad, null]);
  expect(encodeImapUtf7("a&b é/😀")).toBe("a&-b &AOk-/&2D3eAA-");
});

describeWithAdb("io.appium.settings on the simulated phone", () => {
  test("the Unicode IME types Hebrew, Japanese, emoji and combining marks sent as modified UTF-7", async () => {
    await using dev = await withSettingsApp();
    const texts = ["שלום עולם", "こんにちは、世界", "ok 😀👍🏽 & done", "e\u0301 a\u0308 n\u0303"];
    for (const c of [`ime enable ${UNICODE_IME}`, `ime set ${UNICODE_IME}`])
      expect((await shell(dev, c)).exitCode).toBe(0);
    await shell(dev, "input", "tap", "540", "440");
    for (const t of texts)
      expect((await shell(dev, "input", "text", inputTextArg(encodeImapUtf7(t)))).exitCode).toBe(0);
    expect(dev.phone.runtime(DEMO_PACKAGE).state.username).toBe(texts.join(""));
    expect(dev.phone.inputLog.slice(1)).toEqual(texts.map((text) => ({ kind: "text", text, target: "username" })));
    expect(dev.phone.problems).toEqual([]);
  });

  test("malformed UTF-7 is committed undecoded, a run may span two input texts, and another field drops it", async () => {
    await using dev = await withSettingsApp();
    await shell(dev, `ime enable ${UNICODE_IME} && ime set ${UNICODE_IME}`);
    await shell(dev, "input", "tap", "540", "440");
    // 'a' base64-encoded (printable ASCII must represent itself), '/' instead of ',', leftover bits, a space inside.
    for (const bad of ["&AGE-", "&2D3eAA/-", "&BekF3AXVBd-", "&Bek F3A-"]) {
      expect(decodeImapRun(bad)).toBeNull();
      await shell(dev, "input", "text", inputTextArg(bad));
    }
    const state = () => dev.phone.runtime(DEMO_PACKAGE).state;
    expect(state().username).toBe("&AGE-&2D3eAA/-&BekF3AXVBd-&Bek F3A-");
    // A run left open waits for its `-`, in the same field.
    await shell(dev, "input", "text", inputTextArg("x&BekF"));
    await shell(dev, "input", "text", inputTextArg("3AXVBd0-y"));
    expect(state().username.endsWith("xשלוםy")).toBe(true);
    // Focus moves on with a run open: the new field starts clean.
    await shell(dev, "input", "text", inputTextArg("&BekF"));
    await shell(dev, "input", "tap", "540", "560");
    await shell(dev, "input", "text", inputTextArg("3AXVBd0-z"));
    expect(state().password).toBe("3AXVBd0-z");
    // With the stock keyboard the same text is typed as it is.
    await shell(dev, `ime set ${STOCK_IME}`);
    await shell(dev, "input", "text", inputTextArg("&AGE-"));
    expect(state().password).toBe("3AXVBd0-z&AGE-");
  });

  test("the clipboard broadcast answers base64 while an IME of the app is selected, and empty data otherwise on Android 10+", async () => {
    await using dev = await withSettingsApp();
    dev.phone.clipboard = 'héllo "wörld" 😀';
    const get = () =>
      shell(dev, "am broadcast -n io.appium.settings/.receivers.ClipboardReceiver -a io.appium.settings.clipboard.get");
    const denied = await get();
    expect(denied.stdout.split("\n")[1]).toBe('Broadcast completed: result=-1, data=""');
    await shell(dev, `ime enable ${APPIUM_IME} && ime set ${APPIUM_IME}`);
    const allowed = await get();
    expect(allowed.stdout).toContain("result=-1");
    expect(Buffer.from(/data="([^"]*)"/.exec(allowed.stdout)?.[1] ?? "", "base64").toString("utf8")).toBe(
      dev.phone.clipboard,
    );
    dev.phone.clipboard = null;
    expect((await get()).stdout).toContain('Broadcast completed: result=-1, data=""\n');
  });

  test("before Android 10 the clipboard is readable with any IME; without the app the broadcast gets result=0", async () => {
    await using old = await withSettingsApp({ props: { "ro.build.version.sdk": "28" } });
    old.phone.clipboard = "abc";
    const cmd = "am broadcast -n io.appium.settings/.receivers.ClipboardReceiver -a io.appium.settings.clipboard.get";
    expect(dataOf((await shell(old, cmd)).stdout)).toBe("YWJj");
    await using bare = await startFakeDevice(server);
    bare.phone.clipboard = "abc";
    expect((await shell(bare, cmd)).stdout).toBe(
      "Broadcasting: Intent { act=io.appium.settings.clipboard.get cmp=io.appium.settings/.receivers.ClipboardReceiver }\nBroadcast completed: result=0\n",
    );
  });

  test("LocationService mocks the location only with the mock_location app op; stopservice stops it", async () => {
    await using dev = await withSettingsApp();
    const start =
      "am start-foreground-service --user 0 -n io.appium.settings/.LocationService --es latitude 31.7767 --es longitude 35.2345 --es altitude 754.5";
    const read =
      "am broadcast -a io.appium.settings.location -n io.appium.settings/.receivers.LocationInfoReceiver --ez forceUpdate false";
    const started = await shell(dev, start);
    expect([started.exitCode, started.stdout]).toEqual([
      0,
      "Starting service: Intent { cmp=io.appium.settings/.LocationService (has extras) }\n",
    ]);
    expect(dev.phone.location).toBeNull();
    expect((await shell(dev, read)).stdout).toContain('Broadcast completed: result=0, data=""\n');
    await shell(dev, "appops set io.appium.settings android:mock_location allow");
    await shell(dev, start);
    expect(dev.phone.appiumSettings.location).toEqual({ latitude: 31.7767, longitude: 35.2345, altitude: 754.5 });
    const out = (await shell(dev, read)).stdout;
    // The wrapper's regex (build/lib/commands/geolocation.js).
    expect(/data="(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)"/.exec(out)?.slice(1)).toEqual([
      "31.7767000",
      "35.2345000",
      "754.5000000",
    ]);
    expect((await shell(dev, "dumpsys activity services io.appium.settings")).stdout).toContain(
      "io.appium.settings/.LocationService}",
    );
    const stop = await shell(dev, "am stopservice io.appium.settings/.LocationService");
    expect([stop.exitCode, stop.stdout, stop.stderr]).toEqual([
      255,
      "Stopping service: Intent { cmp=io.appium.settings/.LocationService }\n",
      "Service stopped\n",
    ]);
    expect((await shell(dev, "am stopservice io.appium.settings/.LocationService")).stderr).toBe(
      "Service not stopped: was not running.\n",
    );
    expect(dev.phone.appiumSettings.locationService).toBe(false);
  });

  test("notifications come as the README's JSON once the app runs and is a notification listener", async () => {
    await using dev = await withSettingsApp();
    const list = "am broadcast -a io.appium.settings.notifications";
    // Implicit: only the receivers ForegroundService registered get it, so nothing while the app is not running.
    expect((await shell(dev, list)).stdout).toContain("Broadcast completed: result=0\n");
    expect((await shell(dev, "dumpsys activity services io.appium.settings")).stdout).toContain("(nothing)");
    await shell(
      dev,
      "am start -W -n io.appium.settings/.Settings -a android.intent.action.MAIN -c android.intent.category.LAUNCHER",
    );
    expect((await shell(dev, "dumpsys activity services io.appium.settings")).stdout).toContain("isForeground=true");
    expect(dataOf((await shell(dev, list)).stdout)).toStartWith(
      "Appium Settings helper has no access to the system notifications.",
    );
    await shell(dev, "cmd notification allow_listener io.appium.settings/.NLService");
    dev.phone.postNotification({
      packageName: "com.example.chat",
      id: 7,
      title: 'Dana "D"',
      text: "see https://x.test/a",
    });
    dev.phone.postNotification({ packageName: DEMO_PACKAGE, title: "שלום", postTime: 1_700_000_000_000 });
    const out = (await shell(dev, list)).stdout;
    expect(out).toContain("result=-1");
    expect(out).toContain("https:\\/\\/x.test\\/a");
    const json = JSON.parse(dataOf(out) ?? "null");
    expect(json.statusBarNotifications.map((n: { packageName: string }) => n.packageName)).toEqual([
      DEMO_PACKAGE,
      "com.example.chat",
    ]);
    expect(json.statusBarNotifications[1]).toMatchObject({
      id: 7,
      tag: null,
      isRemoved: false,
      notification: { title: 'Dana "D"', text: "see https://x.test/a", bigText: null },
      key: "0|com.example.chat|7|null|10100",
    });
    expect(json.statusBarNotifications[0].postTime).toBe(1_700_000_000_000);
    // force-stop ends the app process and its receivers.
    await shell(dev, `am force-stop ${SETTINGS_APP_PACKAGE}`);
    expect((await shell(dev, list)).stdout).toContain("Broadcast completed: result=0\n");
    expect(dev.phone.problems).toEqual([]);
  });

  test("animation scales go through settings put global, as the 8.0.10 wrapper sets them", async () => {
    await using dev = await withSettingsApp();
    const keys = ["animator_duration_scale", "transition_animation_scale", "window_animation_scale"];
    for (const k of keys) expect((await shell(dev, "settings", "put", "global", k, "0")).exitCode).toBe(0);
    for (const k of keys) expect((await shell(dev, "settings", "get", "global", k)).stdout).toBe("0\n");
    for (const k of keys) await shell(dev, "settings", "put", "global", k, "1.0");
    expect(keys.map((k) => dev.phone.settings.get(`global/${k}`))).toEqual(["1.0", "1.0", "1.0"]);
    // A receiver of the app the fake does not model is a problem, not a silent success.
    await shell(
      dev,
      "am broadcast -a io.appium.settings.animation -n io.appium.settings/.receivers.AnimationSettingReceiver --es setstatus disable",
    );
    expect(dev.phone.problems.length).toBe(1);
  });
});
