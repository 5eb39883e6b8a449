import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  ADB_PATH,
  type AdbServer,
  type FakeDevice,
  demoScenario,
  describeWithAdb,
  startAdbServer,
  startFakeDevice,
} from "../support/adb-device/index.ts";
import { filesUnder } from "../support/canary.ts";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson, sha256, tempCwd } from "./run.ts";

let server: AdbServer;
let phone: FakeDevice;
let id: string;
beforeAll(async () => {
  server = await startAdbServer();
  phone = await startFakeDevice(server, { scenario: demoScenario, props: { "ro.product.model": "Pixel_Test" } });
  id = `android-adb:${phone.serial}`;
});
afterAll(async () => {
  await phone?.[Symbol.asyncDispose]();
  await server?.stop();
});

// The CLI's own daemon on the test's private adb server: never the machine's server on 5037.
const env = (extra: Record<string, string> = {}) => ({
  DEVICERAIL_ANDROID: "auto",
  DEVICERAIL_ADB_PATH: ADB_PATH,
  ANDROID_ADB_SERVER_PORT: String(server.port),
  DEVICERAIL_DATA_DIR: tempDataDir(),
  ...extra,
});
const inputsSince = (n: number) => phone.phone.inputLog.slice(n).map(({ target: _t, ...rest }) => rest);
const commandsSince = (n: number, name: string) =>
  phone.phone.commandLog
    .slice(n)
    .filter((c) => c.argv[0] === name)
    .map((c) => c.argv);

describeWithAdb("the CLI with an Android phone on the real adb server", () => {
  test("devices lists the phone (the Mock steps aside) as JSON and as a table", async () => {
    const device = { id, name: "Pixel Test", platform: { kind: "android" }, osVersion: "10", connected: false };
    expect(await cliJson(["devices"], env())).toEqual({ devices: [device], selectedDeviceId: null });
    const r = await cli(["devices"], env());
    expect(r.stdout).toBe(`${id}\tandroid\tPixel Test\t10\tavailable\t-\n`);
  }, 30_000);

  test("screenshot writes exactly the phone's screen as PNG", async () => {
    const expected = phone.phone.screenshot();
    const cwd = tempCwd();
    const { observation } = await cliJson(["screenshot", "-o", "phone.png"], env(), cwd);
    const bytes = readFileSync(join(cwd, "phone.png"));
    expect(sha256(bytes)).toBe(sha256(expected));
    expect([observation.deviceId, observation.screenshot.sha256, observation.viewport]).toEqual([
      id,
      sha256(expected),
      { width: 1080, height: 2400, scaleFactor: 2.625 },
    ]);
  }, 30_000);

  test("ui prints the login screen's tree", async () => {
    const r = await cli(["ui", "-d", id], env());
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(
      lines
        .filter((l) => /#com\.example\.app:id\/(title|username|password|sign_in)\b/.test(l))
        .map((l) => l.replace(/^@e\d+\s+/, "").replace(/ \[[\d,]+\].*$/, "")),
    ).toEqual([
      'android.widget.TextView "Sign in" #com.example.app:id/title',
      'android.widget.EditText "Username" #com.example.app:id/username',
      'android.widget.EditText "••••••••" #com.example.app:id/password',
      'android.widget.Button "SIGN IN" #com.example.app:id/sign_in',
    ]);
    // Every meaningful element has a ref; a container without text or name gets blanks in its place (src/surfaces/interaction/refs.ts).
    for (const l of lines)
      expect(l).toMatch(/^(@e\d+ | +)( {2})*\S+( "[^"]*")?( #\S+)? \[-?\d+,-?\d+,\d+,\d+\]( \[[a-z]+\])*$/);
    for (const l of lines.filter((l) => /#com\.example\.app:id\/(title|username|password|sign_in)\b/.test(l)))
      expect(l).toMatch(/^@e\d+ /);
    const snapshot = await cliJson(["ui"], env());
    expect(snapshot.context.contextId).toBe("com.example.app");
  }, 30_000);

  test("-d takes the serial adb prints, as well as the device id; an unknown one is device_not_found", async () => {
    const { observation } = await cliJson(["screenshot", "-o", "by-serial.png", "-d", phone.serial], env(), tempCwd());
    expect(observation.deviceId).toBe(id);
    const r = await cli(["ui", "-d", "no-such-serial", "--json"], env());
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.data).toEqual(
      expect.objectContaining({ code: "device_not_found", details: { deviceId: "no-such-serial" } }),
    );
  }, 30_000);

  test("tap, swipe, type, key, launch and open-url reach the phone", async () => {
    const inputs = phone.phone.inputLog.length;
    const commands = phone.phone.commandLog.length;
    const e = env();
    const tap = await cliJson(["tap", "540", "935"], e);
    expect(tap.after.deviceId).toBe(id);
    await cliJson(["swipe", "100", "2000", "100", "500", "--duration", "250", "-d", id], e);
    await cliJson(["type", "alice"], e);
    await cliJson(["key", "enter"], e);
    await cliJson(["key", "back"], e);
    expect(inputsSince(inputs)).toEqual([
      // The daemon's first connect to the phone asks once whether it accepts input (KEYCODE_UNKNOWN).
      { kind: "keyevent", keyCode: 0, longpress: false },
      { kind: "tap", x: 540, y: 935 },
      { kind: "swipe", x1: 100, y1: 2000, x2: 100, y2: 500, durationMs: 250 },
      { kind: "text", text: "alice" },
      { kind: "keyevent", keyCode: 66, longpress: false },
      { kind: "keyevent", keyCode: 4, longpress: false },
    ]);
    const launched = await cli(["launch", "com.example.app"], e);
    expect(launched.stdout).toStartWith(`ok launch com.example.app on ${id} (launch, `);
    await cliJson(["open-url", "https://example.com/a?b=1"], e);
    expect([
      ...commandsSince(commands, "cmd"),
      ...commandsSince(commands, "am").filter((a) => a.includes("-n")),
    ]).toEqual([
      [
        "cmd",
        "package",
        "resolve-activity",
        "--brief",
        "--user",
        "current",
        "-a",
        "android.intent.action.MAIN",
        "-c",
        "android.intent.category.LAUNCHER",
        "com.example.app",
      ],
      ["am", "start", "-W", "--user", "current", "-n", "com.example.app/com.example.app.LoginActivity"],
    ]);
    expect(commandsSince(commands, "am").filter((a) => a.includes("android.intent.action.VIEW"))).toEqual([
      ["am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", "https://example.com/a?b=1"],
    ]);
    // Each one-shot action is its own recorded Session.
    const { sessions } = await cliJson(["sessions"], e);
    expect(sessions.map((s: { state: string; eventCount: number }) => [s.state, s.eventCount])).toEqual(
      Array(7).fill(["ended", 4]),
    );
  }, 60_000);

  test("type --secret reaches the phone through the shell's stdin, never a command line, and the data directory keeps none of it", async () => {
    const secret = "Tr0ub4dor-and-3";
    const inputs = phone.phone.inputLog.length;
    const services = phone.phone.serviceLog.length;
    const e = env();
    const r = await cli(["type", "--secret"], e, tempCwd(), `${secret}\n`);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toStartWith(`ok type a secret on ${id} (inputSecret, `);
    expect(inputsSince(inputs)).toEqual([
      { kind: "keyevent", keyCode: 0, longpress: false },
      { kind: "text", text: secret },
    ]);
    // What crossed adb: a fixed script, with the secret only on its stdin. (On the phone that script
    // hands it to `input text`, whose argv is Android's own affair: see android-secret.test.ts.)
    const typed = phone.phone.serviceLog
      .slice(services)
      .filter((s) => s.stdin?.includes(secret) || s.command.includes(secret));
    expect(typed.map((s) => [s.command.includes(secret), s.stdin])).toEqual([[false, `${secret}\n`]]);
    const stored = filesUnder(e.DEVICERAIL_DATA_DIR).filter((p) => statSync(p).isFile());
    expect(stored.filter((p) => readFileSync(p).includes(Buffer.from(secret)))).toEqual([]);
  }, 60_000);

  test("an action the phone rejects exits 1 with the JSON-RPC error", async () => {
    const r = await cli(["launch", "not-a-package"], env());
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toStartWith(
      "devicerail: invalid_arguments: invalid arguments for action launch\n  at /packageName: expected a string of 3 to 255 characters matching ",
    );
  }, 30_000);

  test("doctor checks adb, its private server (loopback only), the phone and its settings; --smoke times it", async () => {
    const dataDir = tempDataDir();
    const r = await cli(["doctor", "--json"], env({ DEVICERAIL_DATA_DIR: dataDir }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).checks).toEqual([
      {
        name: "adb",
        status: "ok",
        detail: expect.stringMatching(new RegExp(`^${ADB_PATH}: Android Debug Bridge version `)),
        fix: null,
      },
      {
        name: "adb server",
        status: "ok",
        detail: expect.stringMatching(
          new RegExp(`^answers on 127\\.0\\.0\\.1:${server.port} \\(adb protocol \\d+\\)$`),
        ),
        fix: null,
      },
      {
        name: "adb server exposure",
        status: "ok",
        detail: expect.stringMatching(/^listens on loopback only \(/),
        fix: null,
      },
      { name: `device ${phone.serial}`, status: "ok", detail: "device (ready)", fix: null },
      {
        name: `phone ${phone.serial}: input permission`,
        status: "ok",
        detail: "the phone accepts taps, keys and text from adb",
        fix: null,
      },
      {
        name: `phone ${phone.serial}: screen and lock`,
        status: "ok",
        detail: "the screen is on and unlocked",
        fix: null,
      },
      // The simulated phone leaves the animation scales unset, as a phone out of the box does.
      {
        name: `phone ${phone.serial}: animations`,
        status: "warn",
        detail: expect.stringMatching(/^animations are on \(window_animation_scale unset \(default 1\), /),
        fix: expect.stringContaining("Developer options"),
      },
      {
        name: `phone ${phone.serial}: UI automation bridge`,
        status: "ok",
        detail: "no other UiAutomation client is running",
        fix: null,
      },
      // Optional: their absence is fine, and the line says what they would add.
      {
        name: `phone ${phone.serial}: helpers`,
        status: "ok",
        detail:
          "Appium's helpers are not installed: the stock shell serves (ASCII text only, trees by uiautomator dump)",
        fix: `optional: devicerail android helper install -d ${phone.serial} (any Unicode text, UI trees and taps through the UiAutomator2 server)`,
      },
      { name: "iOS simulator tools", status: "skip", detail: "not macOS", fix: null },
      { name: "data directory", status: "ok", detail: `${dataDir}: writable, lock free`, fix: null },
      {
        name: "listen address",
        status: "skip",
        detail: "DEVICERAIL_RPC_LISTEN is not set (serve uses stdio)",
        fix: null,
      },
      {
        name: "daemon TCP port",
        status: "skip",
        detail: "no devicerail daemon runs on this data directory",
        fix: null,
      },
      {
        name: "daemon socket",
        status: "ok",
        detail: `the Unix socket admits your uid (${process.getuid?.()}) and root only: the peer's uid is checked on every connection, besides the 0600 socket in a 0700 folder`,
        fix: null,
      },
    ]);
    const smoke = await cliJson(["doctor", "--smoke", "-d", id, "-n", "2"], env());
    expect(smoke.smoke).toEqual({
      deviceId: id,
      cycles: 2,
      observe: { p50Ms: expect.any(Number), p95Ms: expect.any(Number) },
      tap: null,
      tapAt: null,
      report: expect.any(Object),
    });
    expect(smoke.smoke.report.device.platform).toBe("android");
    expect(smoke.smoke.report.observation.metadata).toHaveProperty("android");
  }, 60_000);

  test("doctor fails an unauthorized phone with the fix, and exits 1", async () => {
    await using locked = await startFakeDevice(server, { scenario: demoScenario, auth: "never" });
    const r = await cli(["doctor", "--json"], env());
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).checks.filter((c: { name: string }) => c.name.startsWith("device "))).toEqual(
      [
        { name: `device ${phone.serial}`, status: "ok", detail: "device (ready)", fix: null },
        {
          name: `device ${locked.serial}`,
          status: "fail",
          detail: "unauthorized",
          fix: "accept the USB debugging prompt on the phone (and tick 'Always allow'), then try again",
        },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    const text = await cli(["doctor"], env());
    expect(text.stdout).toContain(`fail  device ${locked.serial}`);
    expect(text.stdout).toContain("fix: accept the USB debugging prompt on the phone");
    // Two phones now: the one-shot commands ask for -d, and devices shows the state from the name.
    const table = await cli(["devices"], env());
    expect(
      table.stdout
        .split("\n")
        .find((row) => row.startsWith(`android-adb:${locked.serial}\t`))
        ?.split("\t")[4],
    ).toBe("unauthorized");
  }, 60_000);
});
