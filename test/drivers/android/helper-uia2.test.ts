/**
 * The Android driver with Appium's UiAutomator2 server (issue 27): started at connect with
 * `am instrument -w`, reached over `adb forward`; UI trees from its page source with the shell
 * dump's node ids, input through its routes, secrets only in request bodies, a fallback to the
 * shell when it fails (reported in the observation), a restart after a crash, and cleanup of the
 * instrumentation and the forward at disconnect and stop. Over the real adb server.
 */
import { expect, test } from "bun:test";
import { adbServerForFile, DEMO_PACKAGE, describeWithAdb } from "../../support/adb-device/index.ts";
import { PINNED_APKS, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "../../support/adb-device/apk-catalog.ts";
import { installApk } from "../../support/adb-device/packages.ts";
import {
  type Attached,
  attach,
  clearLogs,
  ctx,
  demo,
  exec,
  recordingLogger,
  until,
} from "../../support/adb-device/driver-harness.ts";
import type { FakePhone } from "../../support/adb-device/fake-phone.ts";

const adb = adbServerForFile();
const SECRET = "Canary-7q!Zx_secret";

function installServer(phone: FakePhone): void {
  for (const apk of Object.values(PINNED_APKS))
    if (apk.package === UIA2_SERVER_PACKAGE || apk.package === UIA2_TEST_PACKAGE) installApk(phone, apk, false);
}

/** A phone with the server's two packages, connected with the helpers in `use` mode. */
async function withServer(options: Parameters<typeof attach>[1] = {}): Promise<Attached> {
  const a = await attach(adb.server(), { helper: "use", connect: false, ...options });
  installServer(a.phone);
  await a.driver.connect(a.id, ctx());
  clearLogs(a.phone);
  return a;
}

const argvs = (phone: FakePhone) => phone.commandLog.map((r) => r.argv);
const observeTree = (a: Attached) => a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
const forwards = async (a: Attached) => (await adb.server().adb(["forward", "--list"])).stdout.trim();

describeWithAdb("the UiAutomator2 server through the Android driver", () => {
  test("connect starts it; trees come from its page source with the node ids of the shell's dump; no uiautomator runs", async () => {
    await using a = await withServer();
    expect(a.phone.uia2.running).toBe(true);
    const fast = await observeTree(a);
    expect(fast.metadata?.androidHelper).toEqual({ path: "uiautomator2", fallbacks: 0 });
    expect(argvs(a.phone).some((argv) => argv[0] === "uiautomator")).toBe(false);
    expect(a.phone.uia2.requests.some((r) => r.method === "GET" && r.path.endsWith("/source"))).toBe(true);
    // The same screen through the stock shell on another phone: the same nodes and ids.
    await using plain = await attach(adb.server(), { helper: "off" });
    const slow = await observeTree(plain);
    const shape = (o: typeof fast) =>
      o.uiTree?.nodes.map((n) => [n.stableNodeId, n.role, n.text ?? null, n.identifier ?? null]);
    expect(shape(fast)).toEqual(shape(slow));
    expect(fast.uiTree?.nodes.length).toBeGreaterThan(3);
  });

  test("tap, long press, swipe, key and text go through its routes, not `input`", async () => {
    await using a = await withServer();
    await exec(a, "tap", { x: 540, y: 440 });
    await exec(a, "inputText", { text: "carol 東京" });
    await exec(a, "keyPress", { key: "enter" });
    await exec(a, "swipe", { startX: 500, startY: 1500, endX: 500, endY: 600, durationMs: 200 });
    await exec(a, "longPress", { x: 540, y: 440, durationMs: 600 });
    expect(demo(a.phone).username).toBe("carol 東京");
    expect(argvs(a.phone).some((argv) => argv[0] === "input" || argv[0] === "uiautomator")).toBe(false);
    const paths = a.phone.uia2.requests.map((r) => `${r.method} ${r.path.replace(/^\/session\/[^/]+/, "")}`);
    for (const p of [
      "POST /appium/gestures/click",
      "POST /keys",
      "POST /appium/device/press_keycode",
      "POST /actions",
      "POST /appium/gestures/long_click",
    ])
      expect(paths).toContain(p);
  });

  test("a protected value travels only in a request body: never in an argv on either side, nor in logs", async () => {
    const lines: unknown[] = [];
    await using a = await withServer({ log: recordingLogger(lines) });
    await exec(a, "tap", { x: 540, y: 600 });
    const r = await a.driver.execute(a.id, { name: "inputSecret", arguments: { secret: SECRET } }, ctx());
    expect(r.output).toEqual({ accepted: true });
    expect(demo(a.phone).password).toBe(SECRET);
    expect(JSON.stringify(a.phone.commandLog)).not.toContain(SECRET);
    expect(JSON.stringify(a.phone.serviceLog)).not.toContain(SECRET);
    expect(JSON.stringify(a.phone.uia2.requests)).not.toContain(SECRET);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  test("a crash falls back to the shell once, says so in the observation, and the server comes back", async () => {
    await using a = await withServer();
    a.phone.uia2.crash();
    await until("the crash", () => !a.phone.uia2.running);
    const after = await observeTree(a);
    expect(after.metadata?.androidHelper).toMatchObject({ path: "shell" });
    expect(after.uiTree?.nodes.length).toBeGreaterThan(3);
    // The restart after its back-off (1 s), in the background; then trees come from it again.
    await until("the restart", () => a.phone.uia2.running, 10_000);
    let path = "";
    for (let i = 0; i < 50 && path !== "uiautomator2"; i++) {
      path = String((((await observeTree(a)).metadata?.androidHelper ?? {}) as { path?: string }).path);
      if (path !== "uiautomator2") await Bun.sleep(100);
    }
    expect(path).toBe("uiautomator2");
  });

  test("a crash in the middle of a tap falls back to `input` for that tap, counted", async () => {
    await using a = await withServer();
    a.phone.uia2.latencyMs = { ...a.phone.uia2.latencyMs, tap: 300 };
    const tap = exec(a, "tap", { x: 540, y: 440 });
    await Bun.sleep(100);
    a.phone.uia2.crash();
    await tap;
    expect(argvs(a.phone).some((argv) => argv[0] === "input" && argv[1] === "tap")).toBe(true);
    const o = await observeTree(a);
    expect((o.metadata?.androidHelper as { fallbacks: number }).fallbacks).toBeGreaterThanOrEqual(1);
  });

  test("a server that never starts leaves the shell serving, with a warning", async () => {
    const lines: unknown[] = [];
    await using a = await attach(adb.server(), {
      helper: "use",
      connect: false,
      log: recordingLogger(lines),
      helperStartMs: 1_500,
    });
    installServer(a.phone);
    a.phone.uia2.refuseStart = true;
    await a.driver.connect(a.id, ctx());
    expect(JSON.stringify(lines)).toContain("did not start");
    const o = await observeTree(a);
    expect(o.metadata?.androidHelper).toMatchObject({ path: "shell" });
    expect(o.uiTree?.nodes.length).toBeGreaterThan(3);
  });

  test("disconnect and the driver's stop end the instrumentation and remove the forward", async () => {
    await using a = await withServer();
    expect(await forwards(a)).toContain("tcp:6790");
    await a.driver.disconnect(a.id, ctx());
    expect(a.phone.uia2.running).toBe(false);
    expect(await forwards(a)).not.toContain(a.device.serial);
    await a.driver.connect(a.id, ctx());
    expect(a.phone.uia2.running).toBe(true);
    await a.driver.stop();
    expect(a.phone.uia2.running).toBe(false);
    expect(await forwards(a)).not.toContain(a.device.serial);
    void DEMO_PACKAGE;
  });
});
