/**
 * `devicerail android helper install|status|remove` and doctor's helpers line, through the real
 * CLI process, the real adb server and the simulated phone (issue 27).
 */
import { expect, test } from "bun:test";
import { adbServerForFile, demoScenario, describeWithAdb, startFakeDevice } from "../support/adb-device/index.ts";
import { SETTINGS_APP_PACKAGE, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "../support/adb-device/apk-catalog.ts";
import { filesUnder } from "../support/canary.ts";
import { tempDataDir } from "../support/daemon.ts";
import { readFileSync, statSync } from "node:fs";
import { encodeImapUtf7 } from "../support/adb-device/ime.ts";
import { cli, tempCwd } from "./run.ts";

const adb = adbServerForFile();

const env = () => adb.androidEnv();
const PACKAGES = [SETTINGS_APP_PACKAGE, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE];

describeWithAdb("devicerail android helper", () => {
  test("status, install, status, remove: versions, usability, the warning, and doctor's line", async () => {
    await using dev = await startFakeDevice(adb.server(), { scenario: demoScenario });
    const before = await cli(["android", "helper", "status"], env());
    expect(before.code).toBe(0);
    expect(before.stdout).toContain(`phone ${dev.serial}`);
    expect(before.stdout).toContain("io.appium.settings                  not installed (devicerail ships 8.0.10)");
    expect(before.stdout).toContain("install them with: devicerail android helper install");

    const installed = await cli(["android", "helper", "install", "-d", dev.serial], env());
    expect([installed.code, installed.stderr]).toEqual([0, ""]);
    expect(installed.stdout).toStartWith(`installed ${PACKAGES.join(", ")} on ${dev.serial}\n`);
    expect(installed.stdout).toContain('"trusted test environment"');
    for (const p of PACKAGES) expect(dev.phone.packages.installed.has(p)).toBe(true);

    const after = JSON.parse((await cli(["android", "helper", "status", "--json"], env())).stdout);
    expect(after).toMatchObject({ serial: dev.serial, imeUsable: true, serverUsable: true, inputRefused: false });
    expect(after.apps.map((a: { installed: string }) => a.installed)).toEqual(["8.0.10", "10.6.6", "10.6.6"]);

    const again = await cli(["android", "helper", "install"], env());
    expect(again.stdout).toStartWith(`nothing to do: the helpers are current on ${dev.serial}`);

    const doctor = JSON.parse((await cli(["doctor", "--json"], env())).stdout);
    const line = doctor.checks.find((c: { name: string }) => c.name === `phone ${dev.serial}: helpers`);
    expect(line).toMatchObject({ status: "ok" });
    expect(line.detail).toContain("Unicode IME usable; UiAutomator2 server usable");

    const removed = await cli(["android", "helper", "remove", "--json"], env());
    expect(JSON.parse(removed.stdout)).toEqual({ serial: dev.serial, removed: [...PACKAGES].reverse() });
    for (const p of PACKAGES) expect(dev.phone.packages.installed.has(p)).toBe(false);
  });

  test("an install the ROM refuses exits 1 with the setting to change; nothing is left in /data/local/tmp", async () => {
    await using dev = await startFakeDevice(adb.server(), {
      scenario: demoScenario,
      installRefused: true,
      props: { "ro.product.manufacturer": "Xiaomi" },
    });
    const r = await cli(["android", "helper", "install"], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("INSTALL_FAILED_USER_RESTRICTED");
    expect(r.stderr).toContain("Install via USB");
    expect(dev.phone.files.paths().filter((p) => p.startsWith("/data/local/tmp/devicerail-"))).toEqual([]);
    const status = await cli(["android", "helper", "status"], env());
    expect(status.stdout).toContain("blocked: MIUI/HyperOS");
  });

  test("several phones and no -d is a usage error naming them", async () => {
    await using one = await startFakeDevice(adb.server(), { scenario: demoScenario });
    await using two = await startFakeDevice(adb.server(), { scenario: demoScenario });
    const r = await cli(["android", "helper", "status"], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(one.serial);
    expect(r.stderr).toContain(two.serial);
  });

  test("through the daemon with the helpers: Unicode typed, a secret only in the server's request body, never stored", async () => {
    await using dev = await startFakeDevice(adb.server(), { scenario: demoScenario });
    expect((await cli(["android", "helper", "install"], env())).code).toBe(0);
    const e = { ...env(), DEVICERAIL_DATA_DIR: tempDataDir() };
    const secret = "Hunter2-canary-x9";
    expect((await cli(["tap", "540", "440"], e)).code).toBe(0);
    const typed = await cli(["type", "שלום 東京 😀"], e);
    expect([typed.code, typed.stderr]).toEqual([0, ""]);
    expect(dev.phone.runtime("com.example.app").state.username).toBe("שלום 東京 😀");
    expect((await cli(["tap", "540", "600"], e)).code).toBe(0);
    const r = await cli(["type", "--secret"], e, tempCwd(), `${secret}\n`);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(dev.phone.runtime("com.example.app").state.password).toBe(secret);
    // The server served them: no dump, tap or text through the shell (only connect's input probe).
    expect(dev.phone.uia2.running).toBe(true);
    // Non-ASCII text went through the Unicode IME (modified UTF-7), as the driver prefers.
    const shellSteps = dev.phone.commandLog.filter(
      (c) => c.argv[0] === "uiautomator" || (c.argv[0] === "input" && c.argv.join(" ") !== "input keyevent 0"),
    );
    expect(shellSteps.map((c) => c.argv)).toEqual([
      ["input", "text", encodeImapUtf7("שלום 東京 😀").replaceAll(" ", "%s")],
    ]);
    // Nowhere in a command line or stdin on the phone, nor in the data directory or an export.
    for (const log of [dev.phone.commandLog, dev.phone.serviceLog, dev.phone.uia2.requests])
      expect(JSON.stringify(log)).not.toContain(secret);
    const cwd = tempCwd();
    const sessions = JSON.parse((await cli(["sessions", "--json"], e)).stdout).sessions as { id: string }[];
    for (const { id } of sessions) expect((await cli(["export", id, "-o", `${cwd}/`], e)).code).toBe(0);
    const files = [...filesUnder(e.DEVICERAIL_DATA_DIR), ...filesUnder(cwd)].filter((p) => statSync(p).isFile());
    expect(files.length).toBeGreaterThan(sessions.length);
    expect(files.filter((p) => readFileSync(p).includes(Buffer.from(secret)))).toEqual([]);
  }, 90_000);
});
