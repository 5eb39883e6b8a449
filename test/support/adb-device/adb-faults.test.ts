import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { IDLE_STATE_ERROR, NULL_ROOT_ERROR } from "./commands-screen.ts";
import { demoScenario } from "./demo-scenario.ts";
import { startFakeDevice } from "./fake-device.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const pick = ({ exitCode, stdout, stderr }: { exitCode: number | null; stdout: string; stderr: string }) => ({
  exitCode,
  stdout,
  stderr,
});

describeWithAdb("simulated device faults over adb", () => {
  test("auth never leaves the device unauthorized and adb shell refuses it", async () => {
    await using dev = await startFakeDevice(server, { auth: "never" });
    expect((await server.devices()).find((d) => d.serial === dev.serial)).toEqual({
      serial: dev.serial,
      state: "unauthorized",
    });
    expect(pick(await server.adb(["-s", dev.serial, "shell", "echo", "hi"]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr:
        "error: device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\nTry 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device.\n",
    });
    expect(dev.phone.serviceLog).toEqual([]);
  });

  test("the AUTH exchange ends online when the device accepts a signature or the public key", async () => {
    await using signed = await startFakeDevice(server, { auth: "accept-any-signature" });
    await using allowed = await startFakeDevice(server, { auth: "accept-pubkey" });
    const results = await Promise.all(
      [signed, allowed].map((d) => server.adb(["-s", d.serial, "shell", "echo", "ok"])),
    );
    expect(results.map(pick)).toEqual([
      { exitCode: 0, stdout: "ok\n", stderr: "" },
      { exitCode: 0, stdout: "ok\n", stderr: "" },
    ]);
  });

  test("unplug removes the device from adb devices at once", async () => {
    await using dev = await startFakeDevice(server);
    await dev.unplug();
    expect((await server.devices()).filter((d) => d.serial === dev.serial)).toEqual([]);
    expect(pick(await server.adb(["-s", dev.serial, "shell", "echo"]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: `error: device '${dev.serial}' not found\n`,
    });
  });

  test("vanish leaves the device listed as offline", async () => {
    await using dev = await startFakeDevice(server);
    await dev.vanish();
    const list = await server.waitForState(dev.serial, "offline", { poll: true });
    expect(list.filter((d) => d.serial === dev.serial)).toEqual([{ serial: dev.serial, state: "offline" }]);
  });

  test("uiautomator prints the idle-state error N times, then dumps", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    dev.phone.faults.uiautomatorIdleErrors = 2;
    const dump = () => server.adb(["-s", dev.serial, "shell", "uiautomator", "dump", "/dev/tty"]);
    const results = [await dump(), await dump(), await dump()].map(pick);
    expect(results).toEqual([
      { exitCode: 0, stdout: "", stderr: "ERROR: could not get idle state.\n" },
      { exitCode: 0, stdout: "", stderr: "ERROR: could not get idle state.\n" },
      { exitCode: 0, stdout: `${dev.phone.dumpXml()}UI hierchary dumped to: /dev/tty\n`, stderr: "" },
    ]);
    expect(IDLE_STATE_ERROR).toBe("ERROR: could not get idle state.");
  });

  test("uiautomator prints the null-root error and writes no file", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    dev.phone.faults.uiautomatorNullRoot = 1;
    const r = await server.adb(["-s", dev.serial, "shell", "uiautomator dump && cat /sdcard/window_dump.xml"]);
    expect(pick(r)).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: `${NULL_ROOT_ERROR}\ncat: /sdcard/window_dump.xml: No such file or directory\n`,
    });
    expect(NULL_ROOT_ERROR).toBe("ERROR: null root node returned by UiTestAutomationBridge.");
  });

  for (const [command, fault] of [
    ["uiautomator", "uiautomatorHang"],
    ["screencap", "screencapHang"],
  ] as const) {
    test(`${command} hangs until the client goes away when ${fault} is on`, async () => {
      await using dev = await startFakeDevice(server, { scenario: demoScenario });
      dev.phone.faults[fault] = true;
      const started = dev.phone.waitForCommand(command);
      const proc = server.spawnAdb([
        "-s",
        dev.serial,
        "exec-out",
        command,
        command === "uiautomator" ? "dump" : "-p",
        ...(command === "uiautomator" ? ["/dev/tty"] : []),
      ]);
      await started;
      const ended = dev.phone.waitForCommand(command, "end");
      proc.kill();
      expect((await ended).exitCode).toBe(130);
      await proc.exited;
    });
  }

  test("a slow command takes at least its delay", async () => {
    await using dev = await startFakeDevice(server);
    dev.phone.faults.slow.set("echo", 300);
    const t0 = performance.now();
    const r = await server.adb(["-s", dev.serial, "shell", "echo", "late"]);
    expect([r.stdout, performance.now() - t0 >= 300]).toEqual(["late\n", true]);
  });

  test("unplugging mid-command ends adb shell with status 0 and no output, and the device goes offline", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    dev.phone.faults.unplugOn = "screencap";
    // adb 29.0.6 reports success when the transport drops before the shell_v2 exit packet.
    expect(pick(await server.adb(["-s", dev.serial, "shell", "screencap", "-p"]))).toEqual({
      exitCode: 0,
      stdout: "",
      stderr: "",
    });
    expect(
      (await server.waitForState(dev.serial, "offline", { poll: true })).filter((d) => d.serial === dev.serial),
    ).toEqual([{ serial: dev.serial, state: "offline" }]);
    expect(dev.phone.commandLog).toEqual([{ argv: ["screencap", "-p"], origin: "command-line", exitCode: null }]);
  });

  test("a crashed adb server comes back on the same port and the device reconnects", async () => {
    await using own = await startAdbServer();
    await using dev = await startFakeDevice(own);
    await own.crash();
    await own.restart();
    expect((await own.devices()).filter((d) => d.serial === dev.serial)).toEqual([]);
    await dev.connect();
    expect(pick(await own.adb(["-s", dev.serial, "shell", "echo", "back"]))).toEqual({
      exitCode: 0,
      stdout: "back\n",
      stderr: "",
    });
  });
});
