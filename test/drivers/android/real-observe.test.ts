/**
 * Observations on phones as they really behave (issue 24; research note android-real-phones.md
 * §2.3, §4 #3, #5, #6): animating screens, a busy or orphaned accessibility bridge, repeated null
 * roots, odd nodes and characters uiautomator cannot write. Through the real adb server against
 * the simulated phone, through the Driver port.
 */
import { expect, test } from "bun:test";
import { AdbkitPort } from "../../../drivers/android/adbkit-port.ts";
import { AndroidShell } from "../../../drivers/android/android-shell.ts";
import { checkUiAutomationBridge } from "../../../drivers/android/ui-bridge.ts";
import { ADB_PATH, describeWithAdb, type FakePhone, adbServerForFile } from "../../support/adb-device/index.ts";
import { attach, ctx, driverError, until } from "../../support/adb-device/driver-harness.ts";

const adb = adbServerForFile();

const dumps = (phone: FakePhone) => phone.commandLog.filter((r) => r.argv[0] === "uiautomator");
const treeError = (obs: { uiTreeError?: { error: { data: unknown } } | null }) =>
  obs.uiTreeError?.error.data as { message: string; retryable: boolean; details: { platformCode: string } } | undefined;

describeWithAdb("an animating screen", () => {
  test("gives the --compressed tree, marked so in metadata, after the plain dump could not get the idle state", async () => {
    await using a = await attach(adb.server(), { uiautomatorIdleTimeoutMs: 300 });
    a.phone.faults.uiautomatorAnimating = true;
    const t0 = performance.now();
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([
      obs.screenshot === null,
      obs.uiTree?.nodes.some((n) => n.identifier === "com.example.app:id/sign_in"),
      obs.metadata.uiTreeCompressed,
      obs.uiTreeError ?? null,
    ]).toEqual([false, true, { reason: "idleTimeout" }, null]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(dumps(a.phone).map((r) => [r.argv.includes("--compressed"), r.exitCode])).toEqual([
      [false, 0],
      [true, 0],
    ]);
  });

  test("starts the next dump with --compressed instead of waiting out the idle timeout again", async () => {
    await using a = await attach(adb.server(), { uiautomatorIdleTimeoutMs: 300 });
    a.phone.faults.uiautomatorAnimating = true;
    await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    const t0 = performance.now();
    const second = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    expect([
      second.metadata.uiTreeCompressed,
      performance.now() - t0 < 290,
      dumps(a.phone).map((r) => r.argv.includes("--compressed")),
    ]).toEqual([{ reason: "idleTimeout" }, true, [false, true, true]]);
  });

  test("waits out uiautomator's real 10 s idle wait within one attempt instead of racing it", async () => {
    // The phone's default: waitForIdle(1000, 1000 * 10). The driver's default attempt deadline.
    await using a = await attach(adb.server());
    a.phone.faults.uiautomatorAnimating = true;
    const t0 = performance.now();
    const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    const elapsed = performance.now() - t0;
    expect([obs.metadata.uiTreeCompressed, obs.uiTreeError ?? null, elapsed >= 10_000 && elapsed < 14_000]).toEqual([
      { reason: "idleTimeout" },
      null,
      true,
    ]);
    expect(dumps(a.phone).map((r) => [r.argv.includes("--compressed"), r.exitCode])).toEqual([
      [false, 0],
      [true, 0],
    ]);
  }, 30_000);
});

describeWithAdb("a null root node", () => {
  test("is retried several times with back-off until the tree comes", async () => {
    await using a = await attach(adb.server(), { nullRootBackoffMs: [20, 40, 80, 80, 80] });
    a.phone.faults.uiautomatorNullRoot = 4;
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([obs.uiTree?.nodes.length, dumps(a.phone).length]).toEqual([6, 5]);
  });

  test("stops retrying before the caller's deadline and gives the screenshot with the tree's error", async () => {
    await using a = await attach(adb.server(), { nullRootBackoffMs: [300, 300, 300, 300, 300] });
    a.phone.faults.uiautomatorNullRoot = 100;
    const t0 = performance.now();
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx(undefined, Date.now() + 2_500));
    const elapsed = performance.now() - t0;
    const err = treeError(obs);
    expect([obs.screenshot === null, err?.details.platformCode, err?.retryable, elapsed < 2_500]).toEqual([
      false,
      "android_ui_dump_failed",
      true,
      true,
    ]);
    expect(err?.message).toContain("null root node");
    expect(dumps(a.phone).length).toBeGreaterThan(1);
  });
});

describeWithAdb("a busy accessibility bridge", () => {
  test("is reported as retryable android_ui_automation_busy naming the holder from ps, with the screenshot", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.uiautomationHolder = "io.appium.uiautomator2.server";
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const err = treeError(obs);
    expect([obs.screenshot === null, obs.uiTree, err?.details.platformCode, err?.retryable]).toEqual([
      false,
      null,
      "android_ui_automation_busy",
      true,
    ]);
    expect(err?.message).toContain("held by Appium (UiAutomator2 driver) (process io.appium.uiautomator2.server");
    expect(err?.message).toContain(
      "Stop Appium (UiAutomator2 driver) (or run: adb shell am force-stop io.appium.uiautomator2.server)",
    );
    expect(a.phone.commandLog.some((r) => r.argv.join(" ") === "ps -A")).toBe(true);
  });

  test("works again once the holder is gone", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.uiautomationHolder = "com.android.commands.monkey";
    const busy = treeError(await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx()));
    expect(busy?.message).toContain("monkey (or Fastbot)");
    const [holder] = a.phone.processes.byName("com.android.commands.monkey");
    a.phone.processes.kill(holder?.pid ?? -1);
    expect((await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx())).uiTree?.nodes.length).toBe(6);
  });

  test("fails a semantic action's tree with the busy error rather than a generic one", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.uiautomationHolder = "dev.mobile.maestro";
    // What core's needTree does with an observation without a tree: throws its uiTreeError.
    const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    expect(await driverError(Promise.reject(obs.uiTreeError))).toEqual({
      code: "platform_error",
      data: expect.objectContaining({ retryable: true, details: { platformCode: "android_ui_automation_busy" } }),
    });
  });

  test("is found by the doctor check from ps -A alone, without dumping", async () => {
    await using a = await attach(adb.server());
    const shell = new AndroidShell(new AdbkitPort({ port: adb.server().port, bin: ADB_PATH }), () => null);
    const serial = a.device.serial;
    expect(await checkUiAutomationBridge(shell, serial, ctx())).toEqual({
      name: "UI automation bridge",
      status: "ok",
      detail: "no other UiAutomation client is running",
      fix: null,
    });
    a.phone.faults.uiautomationHolder = "com.github.uiautomator";
    const check = await checkUiAutomationBridge(shell, serial, ctx());
    const [holder] = a.phone.processes.byName("com.github.uiautomator");
    expect(check).toEqual({
      name: "UI automation bridge",
      status: "fail",
      detail: `uiautomator2 / ATX (weditor) (process com.github.uiautomator, pid ${holder?.pid}) holds the accessibility bridge: UI trees cannot be read while it runs`,
      fix: `stop uiautomator2 / ATX (weditor), or run: adb -s ${serial} shell am force-stop com.github.uiautomator`,
    });
    expect(dumps(a.phone)).toEqual([]);
  });
});

describeWithAdb("a dump that survives its connection", () => {
  test("is killed by pid when the attempt deadline cuts it, so the next dump succeeds", async () => {
    await using a = await attach(adb.server(), { dumpAttemptMs: 400 });
    a.phone.faults.uiautomatorHang = true;
    const first = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(treeError(first)?.details.platformCode).toBe("android_ui_dump_timeout");
    expect(a.phone.processes.byName("uiautomator")).toEqual([]);
    a.phone.faults.uiautomatorHang = false;
    const second = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([second.uiTree?.nodes.length, dumps(a.phone).map((r) => r.exitCode)]).toEqual([6, [143, 0]]);
    expect(a.phone.commandLog.some((r) => r.argv[0] === "kill")).toBe(true);
  });

  test("is killed by pid when the call is cancelled mid-dump", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.uiautomatorHang = true;
    const started = a.phone.waitForCommand("uiautomator");
    const abort = new AbortController();
    const obs = driverError(a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx(abort.signal)));
    await started;
    abort.abort();
    expect((await obs).code).toBe("driver_cancelled");
    await until(
      "the cut-off dump to be killed",
      () => a.phone.processes.byName("uiautomator").length === 0 || undefined,
    );
    a.phone.faults.uiautomatorHang = false;
    expect((await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx())).uiTree?.nodes.length).toBe(6);
    expect(dumps(a.phone).map((r) => r.exitCode)).toEqual([143, 0]);
  });
});

describeWithAdb("odd nodes and characters", () => {
  test("keep the tree: inverted bounds are zero-size and not hittable, bad characters U+FFFD, and the repairs are counted", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.uiautomatorOddNodes = true;
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const odd = obs.uiTree?.nodes.slice(-3).map((n) => [n.text, n.name, n.bounds, n.hittable]);
    expect(odd).toEqual([
      ["Below the fold", null, { x: 66, y: 1777, width: 948, height: 0 }, false],
      [null, null, { x: 906, y: 0, width: 168, height: 0 }, false],
      ["a\uFFFDb", "smile \uFFFD", { x: 60, y: 400, width: 960, height: 60 }, false],
    ]);
    expect([obs.uiTree?.nodes.length, obs.metadata.uiTreeRepaired]).toEqual([9, { nodes: 3 }]);
  });

  for (const [char, shown] of [
    ["U+0", "Illegal character (U+0)"],
    ["d83d", "Illegal character (d83d)"],
  ] as const) {
    test(`KXmlSerializer's ${shown} is a typed non-retryable error, not retried, with the screenshot`, async () => {
      await using a = await attach(adb.server());
      a.phone.faults.uiautomatorIllegalChar = char;
      const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
      const err = treeError(obs);
      expect([obs.screenshot === null, err?.details.platformCode, err?.retryable, dumps(a.phone).length]).toEqual([
        false,
        "android_ui_dump_illegal_character",
        false,
        1,
      ]);
      expect(err?.message).toContain(
        `uiautomator cannot dump this screen: a text on it holds a character its XML writer refuses (${shown}`,
      );
    });
  }
});
