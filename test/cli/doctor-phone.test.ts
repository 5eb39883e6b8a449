/**
 * `devicerail doctor` on attached phones and on the adb server's version: the phone checks run
 * through the real adb server against the simulated phone, each under its own deadline, and a
 * server of another version than the user's adb is explained, never replaced.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { AdbkitPort } from "../../drivers/android/adbkit-port.ts";
import { AndroidShell } from "../../drivers/android/android-shell.ts";
import { type PhoneCheckFn, runPhoneChecks } from "../../drivers/android/phone-checks.ts";
import { serverExecutable } from "../../src/cli/adb-host.ts";
import {
  ADB_PATH,
  type AdbServer,
  demoScenario,
  describeWithAdb,
  startAdbServer,
  startFakeDevice,
} from "../support/adb-device/index.ts";
import { ctx } from "../support/adb-device/driver-harness.ts";
import { OtherVersionServer } from "../support/adb-device/other-version-server.ts";
import { cli } from "./run.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const env = (port = server.port) => ({
  DEVICERAIL_ANDROID: "auto",
  DEVICERAIL_ADB_PATH: ADB_PATH,
  ANDROID_ADB_SERVER_PORT: String(port),
});
type Check = { name: string; status: string; detail: string; fix: string | null };
async function doctor(port?: number): Promise<{ code: number; checks: Check[]; text: string }> {
  const json = await cli(["doctor", "--json"], env(port));
  const text = await cli(["doctor"], env(port));
  return { code: json.code, checks: JSON.parse(json.stdout).checks, text: text.stdout };
}
const SCALES = ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"];
const FIX =
  "on the phone: Settings › Developer options › Window animation scale, Transition animation scale and Animator duration scale › Animation off; or run: " +
  "adb -s SERIAL shell settings put global window_animation_scale 0; adb -s SERIAL shell settings put global transition_animation_scale 0; " +
  "adb -s SERIAL shell settings put global animator_duration_scale 0";

describeWithAdb("doctor on a phone", () => {
  test("doctor warns about animations with the fix when the scales are unset or not 0, and says ok when all three are 0", async () => {
    await using phone = await startFakeDevice(server, { scenario: demoScenario });
    phone.phone.settings.set("global/animator_duration_scale", "0.5");
    const before = await doctor();
    expect(before.code).toBe(0);
    const names = before.checks.map((c) => c.name);
    // Listed right after the phone's own line, in PHONE_CHECKS order.
    const at = names.indexOf(`device ${phone.serial}`);
    expect(names.slice(at, at + 5)).toEqual([
      `device ${phone.serial}`,
      ...["input permission", "screen and lock", "animations", "UI automation bridge"].map(
        (c) => `phone ${phone.serial}: ${c}`,
      ),
    ]);
    expect(before.checks.find((c) => c.name === `phone ${phone.serial}: animations`)).toEqual({
      name: `phone ${phone.serial}: animations`,
      status: "warn",
      detail:
        "animations are on (window_animation_scale unset (default 1), transition_animation_scale unset (default 1), animator_duration_scale 0.5): " +
        "uiautomator waits up to 10 s for an animated screen to go idle, so observations are slow or come without a UI tree",
      fix: FIX.replaceAll("SERIAL", phone.serial),
    });
    expect(before.text).toContain(`warn  phone ${phone.serial}: animations`);
    expect(before.text).toContain("fix: on the phone: Settings › Developer options › Window animation scale");
    expect(phone.phone.commandLog.filter((r) => r.argv[0] === "settings").map((r) => r.argv)).toEqual(
      // Each doctor run (--json, then text): the animation check, then the helpers check's keyboard.
      [...SCALES, "ime", ...SCALES, "ime"].map((k) =>
        k === "ime" ? ["settings", "get", "secure", "default_input_method"] : ["settings", "get", "global", k],
      ),
    );

    for (const k of SCALES) phone.phone.settings.set(`global/${k}`, k === "animator_duration_scale" ? "0.0" : "0");
    const after = await doctor();
    expect(after.checks.find((c) => c.name === `phone ${phone.serial}: animations`)).toEqual({
      name: `phone ${phone.serial}: animations`,
      status: "ok",
      detail: "window, transition and animator animations are off",
      fix: null,
    });
    expect(phone.phone.problems).toEqual([]);
  }, 60_000);

  test("doctor shows a phone check whose command hangs as failed after its deadline, and still finishes and exits 1", async () => {
    await using phone = await startFakeDevice(server, { scenario: demoScenario });
    phone.phone.faults.slow.set("settings", 120_000);
    const started = Date.now();
    const r = await cli(["doctor", "--json"], env());
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).checks.find((c: Check) => c.name === `phone ${phone.serial}: animations`)).toEqual({
      name: `phone ${phone.serial}: animations`,
      status: "fail",
      detail: "the check did not finish within 5000 ms",
      fix: `make sure the phone is awake and responds (adb -s ${phone.serial} shell true), then run devicerail doctor again`,
    });
  }, 60_000);

  test("runPhoneChecks reports a check that throws or overruns as failed and runs the next ones, over the real adb server", async () => {
    await using phone = await startFakeDevice(server, { scenario: demoScenario });
    const shell = new AndroidShell(new AdbkitPort({ port: server.port, bin: ADB_PATH }), () => null);
    let hungSignal: AbortSignal | null = null;
    const throws: PhoneCheckFn = async (sh, serial, c) => {
      await sh.run(serial, "false", c);
      return { name: "never", status: "ok", detail: "", fix: null };
    };
    const hangs: PhoneCheckFn = (_sh, _serial, c) => {
      hungSignal = c.signal;
      return new Promise(() => {});
    };
    const fine: PhoneCheckFn = async (sh, serial, c) => ({
      name: "echo",
      status: "ok",
      detail: (await sh.run(serial, "echo hi", c)).trim(),
      fix: null,
    });
    const checks = [
      { name: "throws", run: throws },
      { name: "hangs", run: hangs },
      { name: "echo", run: fine },
    ];
    const results = await runPhoneChecks(shell, phone.serial, ctx(), checks, 300);
    const fix = `make sure the phone is awake and responds (adb -s ${phone.serial} shell true), then run devicerail doctor again`;
    expect(results).toEqual([
      {
        name: "throws",
        status: "fail",
        detail: "the check failed: android_mutation_remote_error: false exited 1: ",
        fix,
      },
      { name: "hangs", status: "fail", detail: "the check did not finish within 300 ms", fix },
      { name: "echo", status: "ok", detail: "hi", fix: null },
    ]);
    // The overrunning check's context was aborted, so its commands stop on the phone too.
    expect((hungSignal as AbortSignal | null)?.aborted).toBe(true);
  }, 30_000);
});

describeWithAdb("doctor and an adb server of another version", () => {
  test("doctor warns that the server and the adb differ, says which adb to use, and never kills the server", async () => {
    const mine = Number(
      /^Android Debug Bridge version \d+\.\d+\.(\d+)$/m.exec(
        Bun.spawnSync([ADB_PATH, "version"]).stdout.toString(),
      )?.[1] ?? 41,
    );
    await using other = await OtherVersionServer.start(mine - 1);
    const r = await doctor(other.port);
    expect(r.checks.find((c) => c.name === "adb server")).toEqual({
      name: "adb server",
      status: "warn",
      detail:
        `answers on 127.0.0.1:${other.port} with adb protocol ${mine - 1}, but ${ADB_PATH} is version ${mine}: adb clients and servers of different versions kill each other ` +
        `("adb server version (${mine - 1}) doesn't match this client (${mine}); killing..."); devicerail uses the running server as it is and never restarts it`,
      fix:
        `use one adb for everything: the adb that started it (one whose \`adb version\` prints 1.0.${mine - 1}), and set DEVICERAIL_ADB_PATH to it; ` +
        `or stop this server and use only ${ADB_PATH} (the adb you run yourself), pointing DEVICERAIL_ADB_PATH at it`,
    });
    expect(r.text).toContain("warn  adb server");
    expect([other.killed, other.requests.filter((q) => q !== "host:version" && q !== "host:devices")]).toEqual([
      false,
      [],
    ]);
  }, 60_000);

  test("serverExecutable names the adb binary that serves a port, and null for a port no adb serves", async () => {
    expect(serverExecutable(server.port)).toBe(realpathSync(ADB_PATH));
    await using other = await OtherVersionServer.start(1);
    expect(serverExecutable(other.port)).toBeNull();
  });
});
