import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { filesUnder, processArgvs } from "../support/canary.ts";
import { adbServerForFile, demoScenario, describeWithAdb, startFakeDevice } from "../support/adb-device/index.ts";
import { spawnDaemon } from "../support/daemon.ts";
import { pollUntil } from "../support/wait.ts";

const { server, androidEnv } = adbServerForFile();
const sel = (m: Record<string, unknown>) => ({
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
  ...m,
});
const target = (m: Record<string, unknown>) => ({ kind: "selector", selector: sel(m) });

// Printable ASCII with characters that JSON and the shell treat specially.
const CANARY = `pw-"c4n4ry'$(id)\`;x`;
const FORMS = [CANARY, JSON.stringify(CANARY).slice(1, -1), Buffer.from(CANARY).toString("base64")];

describeWithAdb("the daemon with an Android phone on the real adb server", () => {
  test("a phone is the sole device, so a client drives it by semantic actions without selecting it", async () => {
    await using phone = await startFakeDevice(server(), {
      scenario: demoScenario,
      props: { "ro.product.model": "Pixel_Test" },
    });
    await using d = spawnDaemon({ env: androidEnv() });
    await d.hello();
    const id = `android-adb:${phone.serial}`;
    // The Mock steps aside while a real device is present (DEVICERAIL_MOCK=auto).
    expect((await d.call("devices.list")).result.devices).toEqual([
      { id, name: "Pixel Test", platform: { kind: "android" }, osVersion: "10", connected: false },
    ]);
    expect((await d.call("device.connect")).result).toEqual({
      id,
      name: "Pixel Test",
      platform: { kind: "android" },
      osVersion: "10",
      connected: true,
    });
    await d.call("session.start");
    const obs = (await d.call("device.observe")).result;
    expect([obs.deviceId, obs.viewport, obs.uiSnapshot.context.contextId]).toEqual([
      id,
      { width: 1080, height: 2400, scaleFactor: 2.625 },
      "com.example.app",
    ]);
    const run = async (name: string, args: unknown) =>
      d.call("device.execute", { id: crypto.randomUUID(), name, arguments: args }, { timeoutMs: 20_000 });
    expect((await run("tapElement", { target: target({ identifier: "username" }) })).result.execution.mode).toBe(
      "coordinateFallback",
    );
    expect((await run("inputText", { text: "alice" })).result.output).toEqual({
      accepted: true,
      byteLength: 5,
      via: "input",
    });
    const setPw = await run("setElementValue", { target: target({ identifier: "password" }), value: CANARY });
    const argvDuring = processArgvs();
    expect(setPw.result.before.screenshotOmission).toBe("protectedAction");
    const signIn = await run("tapElement", {
      target: target({ role: "Button", text: { value: "sign in", mode: "exact", caseSensitive: false } }),
    });
    expect(signIn.error).toBeUndefined();
    const welcome = await run("waitForElement", {
      selector: sel({ text: { value: "^Welcome, alice!$", mode: "regex" } }),
      condition: "visible",
    });
    expect(welcome.result.output).toEqual(expect.objectContaining({ matched: true, condition: "visible" }));
    expect(phone.phone.runtime().state).toEqual(
      expect.objectContaining({ username: "alice", password: CANARY, user: "alice" }),
    );
    await d.call("session.end");
    expect(await d.close()).toBe(0);

    // The secret went to the phone on a script's stdin only: nowhere on this machine, in no argv,
    // in no command sent over adb. On the phone, the one `input text` the script runs holds it.
    const deviceArgv = JSON.stringify(phone.phone.serviceLog.map((s) => s.command));
    const onPhone = phone.phone.commandLog
      .filter((c) => c.argv.some((a) => a.includes(CANARY)))
      .map((c) => [c.argv[0], c.argv[1]]);
    expect(onPhone).toEqual([["input", "text"]]);
    const places = [
      ["host argv", argvDuring],
      ["daemon stderr", d.stderr],
      ["device argv", deviceArgv],
      ...filesUnder(d.dataDir).map((f) => [f, readFileSync(f).toString("latin1")]),
    ];
    expect(
      places.filter(([, text]) => FORMS.some((f) => (text as string).includes(f))).map(([where]) => where),
    ).toEqual([]);
    expect(phone.phone.serviceLog.filter((s) => s.stdin.includes(CANARY)).length).toBe(1);
  }, 60_000);

  test("a phone plugged in while the daemon runs appears in devices.list and leaves when unplugged", async () => {
    await using d = spawnDaemon({ env: androidEnv() });
    await d.hello();
    const ids = async () => ((await d.call("devices.list")).result.devices as { id: string }[]).map((x) => x.id);
    expect(await ids()).toEqual(["mock-1"]);
    const phone = await startFakeDevice(server(), { scenario: demoScenario });
    const id = `android-adb:${phone.serial}`;
    await pollUntil("the plugged-in phone was not listed", ids, (listed) => listed.includes(id), 5_000);
    expect(await ids()).toEqual([id]);
    await phone.unplug();
    await pollUntil("the unplugged phone was still listed", ids, (listed) => !listed.includes(id), 5_000);
    expect(await ids()).toEqual(["mock-1"]);
  }, 30_000);

  test("DEVICERAIL_ANDROID=required stops start-up with a clear message when no adb server can be reached", async () => {
    await using d = spawnDaemon({
      env: { DEVICERAIL_ANDROID: "required", DEVICERAIL_ADB_PATH: "/nonexistent/adb", ANDROID_ADB_SERVER_PORT: "1" },
    });
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain(
      "DEVICERAIL_ANDROID=required: no adb server on port 1 and /nonexistent/adb could not start one",
    );
  });

  test("DEVICERAIL_ANDROID=auto keeps the daemon serving the Mock when adb is missing", async () => {
    await using d = spawnDaemon({
      env: { DEVICERAIL_ANDROID: "auto", DEVICERAIL_ADB_PATH: "/nonexistent/adb", ANDROID_ADB_SERVER_PORT: "1" },
    });
    await d.hello();
    expect(((await d.call("devices.list")).result.devices as { id: string }[]).map((x) => x.id)).toEqual(["mock-1"]);
  });
});
