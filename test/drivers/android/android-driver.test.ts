/**
 * AndroidDriver through the Driver port, over the real adb server and a simulated phone:
 * discovery and hot-plug, observation, uiautomator faults, and device faults mid-call.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import type { DeviceChange, Driver } from "../../../src/driver/driver.ts";
import type { DeviceInfo } from "../../../src/protocol/types/device.ts";
import type { UiNode } from "../../../src/protocol/types/ui.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import {
  ADB_PATH,
  type AdbServer,
  type CommandFn,
  describeWithAdb,
  FakePhone,
  type Scenario,
  startAdbServer,
  startFakeDevice,
} from "../../support/adb-device/index.ts";
import { attach, ctx, driverError, platformError, until } from "../../support/adb-device/driver-harness.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const BULLETS = "\u2022\u2022\u2022\u2022";
const TREE_APP: Scenario = {
  package: "com.example.tree",
  activity: "com.example.tree.MainActivity",
  initial: "main",
  state: {},
  screens: {
    main: (_s, view) => ({
      className: "android.widget.FrameLayout",
      bounds: [0, 0, view.width, view.height],
      children: [
        {
          className: "android.widget.TextView",
          resourceId: "com.example.tree:id/title",
          text: "Hello & <world>",
          bounds: [0, 100, 1080, 200],
        },
        // A password node whose dump carries the plain text: the driver must mask it itself.
        {
          className: "android.widget.EditText",
          resourceId: "com.example.tree:id/pin",
          text: "1234",
          password: true,
          clickable: true,
          bounds: [0, 200, 1080, 300],
        },
        {
          className: "android.widget.CheckBox",
          text: "Agree",
          checkable: true,
          checked: true,
          clickable: true,
          bounds: [0, 300, 540, 400],
        },
        {
          className: "android.widget.Button",
          contentDesc: "Send",
          clickable: true,
          enabled: false,
          bounds: [540, 300, 1080, 400],
        },
        {
          className: "android.widget.ScrollView",
          scrollable: true,
          bounds: [0, 400, 1080, 2400],
          children: [
            { className: "android.widget.TextView", text: "row", longClickable: true, bounds: [0, 400, 1080, 500] },
          ],
        },
      ],
    }),
  },
};

const DEFAULT_ANDROID = {
  orientation: "portrait",
  scaleFactor: 2.625,
  densityDpi: 420,
  physicalSize: { width: 1080, height: 2400 },
  overrideSize: null,
  effectiveSize: { width: 1080, height: 2400 },
  physicalDensityDpi: 420,
  overrideDensityDpi: null,
};

const uiautomatorRuns = (phone: FakePhone) => phone.commandLog.filter((r) => r.argv[0] === "uiautomator").length;

describeWithAdb("AndroidDriver discovery", () => {
  test("reports the phone present named by its model when plugged in after start, and gone when unplugged", async () => {
    const driver: Driver = new AndroidDriver({ adbPath: ADB_PATH, serverPort: server.port, log: silentLogger });
    const changes: DeviceChange[] = [];
    await driver.start((c) => changes.push(c), ctx());
    try {
      await using device = await startFakeDevice(server, {
        props: { "ro.product.model": "Pixel_7_Pro", "ro.build.version.release": "14" },
      });
      const id = `android-adb:${device.serial}`;
      const mine = () => changes.filter((c) => (c.type === "present" ? c.device.id : c.deviceId) === id);
      const present: DeviceInfo = {
        id,
        name: "Pixel 7 Pro",
        platform: { kind: "android" },
        osVersion: "14",
        connected: false,
      };
      await until("the phone reported present", () => {
        const last = mine().at(-1);
        return last?.type === "present" && last.device.name === "Pixel 7 Pro";
      });
      expect(mine().at(-1)).toEqual({ type: "present", device: present });
      expect(await driver.connect(id, ctx())).toEqual({ ...present, osVersion: "14", connected: true });
      await driver.health(id, ctx());

      await device.unplug();
      await until("the phone reported gone", () => mine().at(-1)?.type === "gone");
      expect(mine().at(-1)).toEqual({ type: "gone", deviceId: id });
      expect(await driverError(driver.connect(id, ctx()))).toEqual(platformError("android_device_missing", true));
      expect(await driverError(driver.observe(id, { screenshot: true, uiTree: false }, ctx()))).toEqual(
        platformError("android_device_missing", true),
      );
    } finally {
      await driver.stop();
    }
  });

  test("lists the phone with a suffix and fails connect and health with the USB debugging hint when it is unauthorized", async () => {
    await using a = await attach(server, { auth: "never", connect: false });
    const serial = a.device.serial;
    expect(a.changes.filter((c) => c.type === "present" && c.device.id === a.id).at(-1)).toEqual({
      type: "present",
      device: {
        id: a.id,
        name: `Android (${serial}) (unauthorized)`,
        platform: { kind: "android" },
        osVersion: null,
        connected: false,
      },
    });
    const unauthorized = platformError(
      "android_device_unauthorized",
      true,
      `device ${serial} is unauthorized: accept the USB debugging prompt on the phone (and tick 'Always allow'), then try again`,
    );
    expect(await driverError(a.driver.connect(a.id, ctx()))).toEqual(unauthorized);
    expect(await driverError(a.driver.health(a.id, ctx()))).toEqual(unauthorized);
    expect(a.phone.serviceLog).toEqual([]);
  });
});

describeWithAdb("AndroidDriver.battery", () => {
  test("reads the level from dumpsys battery, connected or not, and follows it as it changes", async () => {
    await using a = await attach(server, { battery: 57, connect: false });
    expect(await a.driver.battery?.(a.id, ctx())).toBe(57);
    a.phone.battery = 9;
    expect(await a.driver.battery?.(a.id, ctx())).toBe(9);
    expect(a.phone.serviceLog.map((s) => s.command).filter((c) => c.startsWith("dumpsys battery"))).toHaveLength(2);
  });
});

describeWithAdb("AndroidDriver.observe", () => {
  test("returns the PNG the phone rendered, its size as viewport and density/160 as scale, running screencap and the dump when both are asked", async () => {
    await using a = await attach(server);
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(obs.screenshot).toEqual(a.phone.screenshot());
    expect([
      obs.viewport,
      obs.metadata.android,
      (obs.metadata.foreground as { packageName: string }).packageName,
    ]).toEqual([{ width: 1080, height: 2400, scaleFactor: 2.625 }, DEFAULT_ANDROID, "com.example.app"]);
    // Foreground metadata may add a dumpsys (in the background); the capture itself is these two.
    expect(
      a.phone.serviceLog
        .map((s) => [s.kind, s.command])
        .filter((e) => !(e[1] as string).startsWith("dumpsys "))
        .sort(),
    ).toEqual([
      ["exec", "screencap -p 2>/dev/null"],
      // The dump runs in a shell that writes its pid first, so a cut-off dump can be killed by it.
      [
        "shell",
        expect.stringMatching(
          /^rm -f (\/data\/local\/tmp\/devicerail-ui-\d+-\d+)\.xml \1\.pid; sh -c 'echo \$\$ > \1\.pid; exec uiautomator dump \1\.xml' 2>&1; cat \1\.xml 2>\/dev\/null; rm -f \1\.xml \1\.pid; echo "\n__\w+\$\?"$/,
        ),
      ],
    ]);
    // The dump file is removed again.
    expect(a.phone.files.list("/data/local/tmp")?.map((e) => e.name) ?? []).toEqual([]);
  });

  test("reports the foreground package and activity from dumpsys window when only a screenshot is asked", async () => {
    await using a = await attach(server);
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(obs.metadata).toEqual({
      android: DEFAULT_ANDROID,
      foreground: { packageName: "com.example.app", activity: "com.example.app.LoginActivity" },
    });
  });

  test("never reports the previous activity as foreground after the app moved to another activity", async () => {
    await using a = await attach(server);
    await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    // Sign in: the demo app replaces LoginActivity with HomeActivity, same package.
    a.phone.runtime().state.user = "ann";
    a.phone.runtime().context().goto("home", { replace: true });
    expect(a.phone.focusedActivity).toBe("com.example.app.HomeActivity");
    const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    const foreground = obs.metadata.foreground as { packageName: string; activity: string | null };
    expect([
      { packageName: "com.example.app", activity: "com.example.app.HomeActivity" },
      { packageName: "com.example.app", activity: null },
    ]).toContainEqual(foreground);
  });

  test("captures the screenshot and the UI tree concurrently when both are asked", async () => {
    await using a = await attach(server);
    a.phone.faults.slow.set("screencap", 400);
    const first = Promise.race([
      a.phone.waitForCommand("uiautomator").then(() => "uiautomator started"),
      a.phone.waitForCommand("screencap", "end").then(() => "screencap ended"),
    ]);
    const obs = a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(await first).toBe("uiautomator started");
    expect((await obs).screenshot).toEqual(a.phone.screenshot());
  });

  test("normalizes every node of the dump, masking password text, when a UI tree is asked", async () => {
    await using a = await attach(server, { scenario: TREE_APP });
    const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    const n = (
      stableNodeId: string,
      parentStableNodeId: string | null,
      role: string,
      fields: Partial<UiNode>,
    ): UiNode => ({
      stableNodeId,
      parentStableNodeId,
      role,
      name: null,
      value: null,
      identifier: null,
      text: null,
      enabled: true,
      hittable: false,
      bounds: null,
      ...fields,
    });
    expect(obs).toEqual({
      viewport: { width: 1080, height: 2400, scaleFactor: 2.625 },
      screenshot: null,
      uiTree: {
        context: {
          contextKind: "native",
          contextId: "com.example.tree",
          documentEpoch: expect.stringMatching(/^\d+-[0-9a-f]{16}$/),
        },
        nodes: [
          n("0", null, "android.widget.FrameLayout", { bounds: { x: 0, y: 0, width: 1080, height: 2400 } }),
          n("0.0", "0", "android.widget.TextView", {
            identifier: "com.example.tree:id/title",
            text: "Hello & <world>",
            bounds: { x: 0, y: 100, width: 1080, height: 100 },
          }),
          n("0.1", "0", "android.widget.EditText", {
            identifier: "com.example.tree:id/pin",
            text: BULLETS,
            value: BULLETS,
            hittable: true,
            bounds: { x: 0, y: 200, width: 1080, height: 100 },
          }),
          n("0.2", "0", "android.widget.CheckBox", {
            text: "Agree",
            value: "checked",
            hittable: true,
            bounds: { x: 0, y: 300, width: 540, height: 100 },
          }),
          n("0.3", "0", "android.widget.Button", {
            name: "Send",
            enabled: false,
            hittable: true,
            bounds: { x: 540, y: 300, width: 540, height: 100 },
          }),
          n("0.4", "0", "android.widget.ScrollView", { bounds: { x: 0, y: 400, width: 1080, height: 2000 } }),
          n("0.4.0", "0.4", "android.widget.TextView", {
            text: "row",
            hittable: true,
            bounds: { x: 0, y: 400, width: 1080, height: 100 },
          }),
        ],
      },
      metadata: {
        android: DEFAULT_ANDROID,
        foreground: expect.objectContaining({ packageName: "com.example.tree" }),
        uiStates: { "0.1": ["password"], "0.2": ["checked"] },
      },
    });
    expect(JSON.stringify(obs)).not.toContain("1234");
  });

  test("uses the wm size and density overrides for viewport, scale and the bounds check when they are in force", async () => {
    const phone = new FakePhone();
    phone.sizeOverride = { width: 720, height: 1600 };
    phone.densityOverride = 320;
    await using a = await attach(server, { phone });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect([obs.viewport, obs.metadata.android]).toEqual([
      { width: 720, height: 1600, scaleFactor: 2 },
      {
        orientation: "portrait",
        scaleFactor: 2,
        densityDpi: 320,
        physicalSize: { width: 1080, height: 2400 },
        overrideSize: { width: 720, height: 1600 },
        effectiveSize: { width: 720, height: 1600 },
        physicalDensityDpi: 420,
        overrideDensityDpi: 320,
      },
    ]);
    expect((await driverError(a.driver.execute(a.id, { name: "tap", arguments: { x: 720, y: 10 } }, ctx()))).code).toBe(
      "invalid_arguments",
    );
    expect(await a.driver.execute(a.id, { name: "tap", arguments: { x: 719, y: 1599 } }, ctx())).toEqual({
      output: { accepted: true, x: 719, y: 1599 },
    });
  });
});

describeWithAdb("AndroidDriver.observe with uiautomator faults", () => {
  test("retries once and returns the tree when the first dump cannot get the idle state", async () => {
    await using a = await attach(server);
    a.phone.faults.uiautomatorIdleErrors = 1;
    const obs = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
    expect([
      obs.uiTree?.nodes.find((node) => node.identifier === "com.example.app:id/sign_in")?.text,
      uiautomatorRuns(a.phone),
    ]).toEqual(["SIGN IN", 2]);
  });

  // Was: the observation failed with android_ui_dump_failed and lost its screenshot. Now the
  // retry is `--compressed` and the screenshot survives a tree failure (issue 24).
  test("gives the screenshot and android_ui_dump_idle_timeout after a plain and a --compressed dump when the idle state never comes", async () => {
    await using a = await attach(server);
    a.phone.faults.uiautomatorIdleErrors = 2;
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([obs.screenshot, obs.uiTree, obs.uiTreeError?.error.data]).toEqual([
      a.phone.screenshot(),
      null,
      expect.objectContaining({ retryable: true, details: { platformCode: "android_ui_dump_idle_timeout" } }),
    ]);
    expect(
      a.phone.commandLog.filter((r) => r.argv[0] === "uiautomator").map((r) => r.argv.includes("--compressed")),
    ).toEqual([false, true]);
  });

  // Was: one retry only. Real phones need several (mobile-mcp retries up to 10 times).
  test("retries a null root with back-off and reports android_ui_dump_failed with the screenshot when it never ends", async () => {
    await using a = await attach(server, { nullRootBackoffMs: [10, 10, 10] });
    a.phone.faults.uiautomatorNullRoot = 3;
    expect((await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx())).uiTree?.nodes.length).toBe(6);
    a.phone.faults.uiautomatorNullRoot = 4;
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([obs.uiTree, obs.uiTreeError?.error.data.details, obs.screenshot === null]).toEqual([
      null,
      { platformCode: "android_ui_dump_failed" },
      false,
    ]);
    expect(uiautomatorRuns(a.phone)).toBe(8);
  });

  // Was: the hung uiautomator saw its stream close (as after SIGHUP). Real adbd sends no hang-up
  // to a legacy shell command, so the driver now kills it by pid.
  test("reports android_ui_dump_timeout after one attempt and kills the hung uiautomator on the phone", async () => {
    await using a = await attach(server, { dumpAttemptMs: 300 });
    a.phone.faults.uiautomatorHang = true;
    const ended = a.phone.waitForCommand("uiautomator", "end");
    const t0 = performance.now();
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const elapsed = performance.now() - t0;
    expect(obs.uiTreeError?.error.data.details).toEqual({ platformCode: "android_ui_dump_timeout" });
    expect(elapsed >= 290 && elapsed < 2_500 ? "about dumpAttemptMs" : `${elapsed} ms`).toBe("about dumpAttemptMs");
    // SIGTERM from `kill <pid>`: 128 + 15.
    expect([(await ended).exitCode, uiautomatorRuns(a.phone), a.phone.processes.byName("uiautomator")]).toEqual([
      143,
      1,
      [],
    ]);
  });
});

describeWithAdb("AndroidDriver.observe when one half fails", () => {
  // Was: the dump's failure aborted the screencap and failed the observation. Now the halves are independent.
  test("returns the screenshot with the dump's error when the UI dump fails while the screencap runs", async () => {
    await using a = await attach(server);
    a.phone.faults.uiautomatorIdleErrors = 2;
    const screencap = a.phone.commands.get("screencap") as CommandFn;
    let dumpsDone = 0;
    const dumped = a.phone
      .waitForCommand("uiautomator", "end")
      .then(() => a.phone.waitForCommand("uiautomator", "end"))
      .then(() => void dumpsDone++);
    // The screenshot finishes only after the dump failed.
    a.phone.commands.set("screencap", async (argv, io) => {
      await dumped;
      return screencap(argv, io);
    });
    const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([dumpsDone, obs.screenshot, obs.uiTree, obs.uiTreeError?.error.data.details]).toEqual([
      1,
      a.phone.screenshot(),
      null,
      { platformCode: "android_ui_dump_idle_timeout" },
    ]);
  });

  // Was: the screencap's failure aborted the dump (leaving it running on a real phone).
  test("fails with the screenshot's error only once the dump has finished, leaving no uiautomator running", async () => {
    await using a = await attach(server);
    const uiautomator = a.phone.commands.get("uiautomator") as CommandFn;
    let release = () => {};
    const slowDump = new Promise<void>((r) => (release = r));
    a.phone.commands.set("uiautomator", async (argv, io) => {
      await slowDump;
      return uiautomator(argv, io);
    });
    const dumping = a.phone.waitForCommand("uiautomator");
    a.phone.commands.set("screencap", async (_argv, io) => {
      await dumping;
      io.out("not a PNG");
      setTimeout(release, 100);
      return 0;
    });
    expect(await driverError(a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx()))).toEqual(
      platformError("android_adb_malformed_png", true),
    );
    const dump = a.phone.commandLog.find((r) => r.argv[0] === "uiautomator");
    expect([dump?.exitCode, a.phone.processes.byName("uiautomator")]).toEqual([0, []]);
  });
});

describeWithAdb("AndroidDriver faults", () => {
  test("execute fails with android_device_offline within seconds when the phone is unplugged mid-action", async () => {
    await using a = await attach(server);
    a.phone.faults.unplugOn = "input";
    const t0 = performance.now();
    const err = await driverError(a.driver.execute(a.id, { name: "tap", arguments: { x: 540, y: 440 } }, ctx()));
    // The adb server keeps a TCP transport that dropped listed as `offline` (it will try to
    // reconnect), so the driver's check after the cut-off output finds it offline, not missing.
    expect([err, performance.now() - t0 < 5_000]).toEqual([platformError("android_device_offline", true), true]);
    expect(a.phone.commandLog).toEqual([
      { argv: ["input", "tap", "540", "440"], origin: "command-line", exitCode: null },
    ]);
  });

  test("observe fails with a typed error instead of hanging when the phone vanishes during a screencap", async () => {
    await using a = await attach(server);
    a.phone.faults.screencapHang = true;
    const started = a.phone.waitForCommand("screencap");
    const obs = driverError(a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx()));
    await started;
    const t0 = performance.now();
    await a.device.vanish();
    expect([await obs, performance.now() - t0 < 5_000]).toEqual([platformError("android_device_offline", true), true]);
  });

  test("a call with a hung screencap rejects with driver_cancelled at once and closes the device stream when aborted", async () => {
    await using a = await attach(server);
    a.phone.faults.screencapHang = true;
    const started = a.phone.waitForCommand("screencap");
    const ended = a.phone.waitForCommand("screencap", "end");
    const abort = new AbortController();
    const obs = driverError(a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx(abort.signal)));
    await started;
    const t0 = performance.now();
    abort.abort();
    const err = await obs;
    const elapsed = performance.now() - t0;
    expect([err, elapsed < 200 ? "at once" : `${elapsed} ms`]).toEqual([
      {
        code: "driver_cancelled",
        data: { code: "driver_cancelled", message: "driver operation was cancelled", retryable: false, details: null },
      },
      "at once",
    ]);
    expect((await ended).exitCode).toBe(130);
    const service = await until("the screencap service to end", () =>
      a.phone.serviceLog.find((s) => s.command === "screencap -p 2>/dev/null" && s.exitCode !== null),
    );
    expect([service.kind, service.exitCode]).toEqual(["exec", 130]);
  });
});
