/**
 * Input on phones as they really behave (issue 24): vendor ROMs that refuse injection, screens
 * that are off or locked, `input` that costs a VM start per call, and `input text` that loses
 * characters. Through the Driver port, over the real adb server, against the simulated phone.
 */
import { describe, expect, test } from "bun:test";
import { AdbkitPort } from "../../../drivers/android/adbkit-port.ts";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { coreHarness } from "../../support/core-harness.ts";
import { ALL_FEATURES } from "../../support/hello.ts";
import { AndroidShell } from "../../../drivers/android/android-shell.ts";
import { checkInputPermission } from "../../../drivers/android/input-probe.ts";
import { checkScreenState } from "../../../drivers/android/screen-state.ts";
import { demoScenario } from "../../support/adb-device/demo-scenario.ts";
import {
  ADB_PATH,
  type CommandFn,
  DEMO_PACKAGE,
  describeWithAdb,
  type FakePhone,
  type FakePhoneOptions,
  startFakeDevice,
  adbServerForFile,
} from "../../support/adb-device/index.ts";
import {
  type Attached,
  attach,
  clearLogs,
  ctx,
  driverError,
  dumpsIn,
  ran,
  TRAILER,
  withoutDumps,
  exec,
  demo,
} from "../../support/adb-device/driver-harness.ts";
import { blackScreen } from "../../support/adb-device/phone-power.ts";

const adb = adbServerForFile();

const typed = (code: string, message: RegExp | string) => ({
  code: "platform_error",
  data: expect.objectContaining({
    retryable: false,
    details: { platformCode: code },
    message: typeof message === "string" ? expect.stringContaining(message) : expect.stringMatching(message),
  }),
});
const XIAOMI_SETTING = 'Developer options › "USB debugging (Security settings)", then reboot the phone';
const OPPO_SETTING = 'Developer options › "Disable permission monitoring", then reboot the phone';
const shellOf = () => new AndroidShell(new AdbkitPort({ port: adb.server().port, bin: ADB_PATH }), () => null);

describeWithAdb("real phones: input", () => {
  describe("vendor ROMs that refuse input injection", () => {
    test("connect fails with android_input_not_permitted naming the Xiaomi setting when a Xiaomi phone on Android 10 refuses input", async () => {
      await using a = await attach(adb.server(), {
        connect: false,
        inputDenied: true,
        props: { "ro.product.manufacturer": "Xiaomi", "ro.build.version.sdk": "29", "ro.build.version.release": "10" },
      });
      expect(await driverError(a.driver.connect(a.id, ctx()))).toEqual(
        typed("android_input_not_permitted", `on this Xiaomi phone (MIUI/HyperOS) turn on ${XIAOMI_SETTING}`),
      );
      expect(ran(a.phone)).toContainEqual(["input", "keyevent", "0"]);
    });

    test("connect names ColorOS's setting when an OPPO, realme or OnePlus phone on Android 13 refuses input, whatever the case of the manufacturer", async () => {
      for (const manufacturer of ["OPPO", "realme", "ONEPLUS"]) {
        await using a = await attach(adb.server(), {
          connect: false,
          inputDenied: true,
          props: {
            "ro.product.manufacturer": manufacturer,
            "ro.build.version.sdk": "33",
            "ro.build.version.release": "13",
          },
        });
        expect(await driverError(a.driver.connect(a.id, ctx()))).toEqual(
          typed("android_input_not_permitted", OPPO_SETTING),
        );
      }
    });

    test("connect names both settings when a phone of another manufacturer refuses input", async () => {
      await using a = await attach(adb.server(), {
        connect: false,
        inputDenied: true,
        props: { "ro.product.manufacturer": "HONOR", "ro.build.version.sdk": "30" },
      });
      const err = await driverError(a.driver.connect(a.id, ctx()));
      expect(err).toEqual(typed("android_input_not_permitted", "USB debugging (Security settings)"));
      expect(err.data.message).toContain("Disable permission monitoring");
    });

    test("a later connect probes again and succeeds when the user has set the option", async () => {
      await using a = await attach(adb.server(), {
        connect: false,
        inputDenied: true,
        props: { "ro.product.manufacturer": "Redmi" },
      });
      expect(await driverError(a.driver.connect(a.id, ctx()))).toEqual(
        typed("android_input_not_permitted", XIAOMI_SETTING),
      );
      a.phone.inputDenied = false;
      expect((await a.driver.connect(a.id, ctx())).connected).toBe(true);
      expect(
        ran(a.phone).filter((c) => c !== TRAILER && (c as string[]).join(" ") === "input keyevent 0"),
      ).toHaveLength(2);
    });

    test("every input path fails with android_input_not_permitted when the phone starts refusing after connect, on Android 11 and on 12+", async () => {
      for (const sdk of ["30", "31"]) {
        await using a = await attach(adb.server(), {
          props: { "ro.product.manufacturer": "POCO", "ro.build.version.sdk": sdk },
        });
        a.phone.inputDenied = true;
        const refused = typed("android_input_not_permitted", XIAOMI_SETTING);
        for (const [name, args] of [
          ["tap", { x: 540, y: 440 }],
          ["swipe", { startX: 540, startY: 1800, endX: 540, endY: 600, durationMs: 300 }],
          ["keyPress", { key: "enter" }],
          ["back", {}],
          ["inputText", { text: "abc" }],
          ["inputSecret", { secret: "pw 1" }],
        ] as const)
          expect([name, await driverError(exec(a, name, args))]).toEqual([name, refused]);
        expect(await driverError(a.driver.elements.clearFocused(a.id, ctx(), { length: 3 }))).toEqual(refused);
        expect(await driverError(a.driver.elements.tapPoint(a.id, { x: 540, y: 440 }, ctx()))).toEqual(refused);
        expect(a.phone.inputLog).toEqual([]);
      }
    });

    test("the doctor check fails with the manufacturer's fix when input is refused, and passes when it is not", async () => {
      await using a = await attach(adb.server(), {
        connect: false,
        inputDenied: true,
        props: { "ro.product.manufacturer": "Xiaomi" },
      });
      const serial = a.device.serial;
      expect(await checkInputPermission(shellOf(), serial, ctx())).toEqual({
        name: "input permission",
        status: "fail",
        detail: "the phone refuses input injection from adb (SecurityException: INJECT_EVENTS)",
        fix: `on this Xiaomi phone (MIUI/HyperOS) turn on ${XIAOMI_SETTING}`,
      });
      a.phone.inputDenied = false;
      expect(await checkInputPermission(shellOf(), serial, ctx())).toEqual({
        name: "input permission",
        status: "ok",
        detail: "the phone accepts taps, keys and text from adb",
        fix: null,
      });
    });
  });

  describe("screen off and keyguard", () => {
    const isBlack = (a: Attached, png: Uint8Array | null) =>
      png !== null && Buffer.from(png).equals(Buffer.from(blackScreen(a.phone.view)));

    test("connect wakes a phone whose screen is off, so the first observation shows the app and not a black screen", async () => {
      await using a = await attach(adb.server(), { connect: false, asleep: true });
      await a.driver.connect(a.id, ctx());
      expect(ran(a.phone)).toContainEqual(["input", "keyevent", "224"]);
      const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
      expect([isBlack(a, obs.screenshot), obs.uiTree?.context.contextId]).toEqual([false, DEMO_PACKAGE]);
    });

    test("observe wakes the screen first when it went off after connect", async () => {
      await using a = await attach(adb.server(), { knownAwakeMs: 0 });
      a.phone.power.sleep();
      const obs = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
      expect([isBlack(a, obs.screenshot), obs.uiTree?.context.contextId, a.phone.power.awake]).toEqual([
        false,
        DEMO_PACKAGE,
        true,
      ]);
      expect(ran(a.phone).slice(0, 4)).toEqual([
        ["dumpsys", "power"],
        ["dumpsys", "window", "policy"],
        TRAILER,
        ["input", "keyevent", "224"],
      ]);
    });

    test("a tap wakes the screen and dismisses a keyguard without a credential before it lands on the app", async () => {
      await using a = await attach(adb.server(), { knownAwakeMs: 0, lock: "swipe" });
      a.phone.power.sleep();
      await exec(a, "tap", { x: 540, y: 440 });
      expect(ran(a.phone).filter((c) => c !== TRAILER && c[0] !== "dumpsys")).toEqual([
        ["input", "keyevent", "224"],
        ["wm", "dismiss-keyguard"],
        ["input", "tap", "540", "440"],
      ]);
      expect(a.phone.inputLog.at(-1)).toEqual({ kind: "tap", x: 540, y: 440, target: "com.example.app:id/username" });
    });

    test("observe and every action fail with android_device_locked, sending no input to the app, when a PIN keyguard is up", async () => {
      await using a = await attach(adb.server(), { knownAwakeMs: 0, lock: "pin" });
      a.phone.power.sleep();
      const locked = typed(
        "android_device_locked",
        /PIN.*unlock the phone, or remove its screen lock.*Stay awake.*svc power stayon usb/,
      );
      expect(await driverError(a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx()))).toEqual(locked);
      expect(await driverError(exec(a, "tap", { x: 540, y: 440 }))).toEqual(locked);
      expect(await driverError(a.driver.elements.typeText(a.id, "abc", { secret: false }, ctx()))).toEqual(locked);
      expect(a.phone.inputLog.filter((r) => r.kind !== "keyevent" || r.keyCode !== 224)).toEqual([]);
      expect(
        ran(a.phone).filter((c) => c !== TRAILER && ["screencap", "uiautomator", "wm"].includes(c[0] as string)),
      ).toEqual([]);
    });

    test("connect still succeeds on a phone locked with a PIN, and the first step then says so", async () => {
      await using a = await attach(adb.server(), { connect: false, lock: "pin" });
      expect((await a.driver.connect(a.id, ctx())).connected).toBe(true);
      expect((await driverError(exec(a, "back"))).data.details).toEqual({ platformCode: "android_device_locked" });
    });

    test("no check runs while devicerail's own input keeps the screen on, one round trip per step otherwise", async () => {
      await using a = await attach(adb.server());
      for (let i = 0; i < 3; i++) {
        await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
        await exec(a, "back");
      }
      expect(ran(a.phone).filter((c) => c !== TRAILER && c[0] === "dumpsys" && c[1] === "power")).toEqual([]);
      await using b = await attach(adb.server(), { knownAwakeMs: 0 });
      await b.driver.observe(b.id, { screenshot: true, uiTree: false }, ctx());
      await exec(b, "back");
      expect(ran(b.phone).filter((c) => c !== TRAILER && c[0] === "dumpsys" && c[1] === "power")).toHaveLength(2);
    });

    test("the doctor check fails for a PIN keyguard, warns for a dark screen, and passes for an unlocked one", async () => {
      await using a = await attach(adb.server(), { connect: false, lock: "pin", asleep: true });
      const check = () => checkScreenState(shellOf(), a.device.serial, ctx());
      expect(await check()).toEqual(
        expect.objectContaining({
          name: "screen and lock",
          status: "fail",
          fix: expect.stringContaining("svc power stayon usb"),
        }),
      );
      a.phone.power.wake();
      a.phone.power.keyguardShowing = false;
      a.phone.power.sleep();
      a.phone.power.keyguardShowing = false;
      expect(await check()).toEqual(
        expect.objectContaining({ status: "warn", detail: expect.stringContaining("off (wakefulness Asleep)") }),
      );
      a.phone.power.wake();
      expect(await check()).toEqual({
        name: "screen and lock",
        status: "ok",
        detail: "the screen is on and unlocked",
        fix: null,
      });
    });
  });

  describe("slow input on Android 11 and older", () => {
    test("doubleTap is neither advertised nor run, and fails with a typed refusal, when one input invocation takes too long", async () => {
      // 400 ms keeps the test short; the switch's real default is SLOW_INPUT_MS (about 1 s).
      await using a = await attach(adb.server(), { slowInput: 400 });
      expect((await a.driver.actions(a.id, ctx())).map((d) => d.name)).not.toContain("doubleTap");
      expect(await driverError(exec(a, "doubleTap", { x: 540, y: 440 }))).toEqual(
        typed("android_double_tap_unsupported", /about \d{3} ms.*300 ms double-tap window/),
      );
      expect(ran(a.phone).filter((c) => c !== TRAILER && c[0] === "input")).toEqual([]);
    });

    test("doubleTap is advertised and runs when input is fast", async () => {
      await using a = await attach(adb.server());
      expect((await a.driver.actions(a.id, ctx())).map((d) => d.name)).toContain("doubleTap");
      expect(await exec(a, "doubleTap", { x: 540, y: 440 })).toEqual({ output: { accepted: true, x: 540, y: 440 } });
    });
  });

  describe("typed text that arrives incomplete", () => {
    const focusUsername = async (a: Attached) => {
      await exec(a, "tap", { x: 540, y: 440 });
      clearLogs(a.phone);
    };

    test("inputText retypes the text once when the first characters after focus were lost, and the field then holds it all", async () => {
      await using a = await attach(adb.server(), { focusDropChars: 2 });
      await focusUsername(a);
      expect(await exec(a, "inputText", { text: "display" })).toEqual({
        output: { accepted: true, byteLength: 7, via: "input" },
      });
      expect([demo(a.phone).username, withoutDumps(ran(a.phone)), dumpsIn(ran(a.phone))]).toEqual([
        "display",
        [
          ["input", "text", "display"],
          TRAILER,
          ["input", "keyevent", "67", "67", "67", "67", "67"],
          TRAILER,
          ["input", "text", "display"],
          TRAILER,
        ],
        2,
      ]);
    });

    test("setElementValue's typing (ElementInput.typeText) reads the field back the same way", async () => {
      await using a = await attach(adb.server(), { focusDropChars: 3 });
      await a.driver.elements.tapPoint(a.id, { x: 540, y: 440 }, ctx());
      await a.driver.elements.clearFocused(a.id, ctx(), { length: 0 });
      await a.driver.elements.typeText(a.id, "display", { secret: false }, ctx());
      expect(demo(a.phone).username).toBe("display");
    });

    test("inputText fails with android_text_incomplete, showing what arrived, when the field keeps only part of the text", async () => {
      // A WebView field that keeps the first 5 characters of each `input text` (callstack/agent-device#140: "curti").
      await using a = await attach(adb.server());
      const input = a.phone.commands.get("input") as CommandFn;
      a.phone.commands.set("input", (argv, io) =>
        input(argv[1] === "text" ? ["input", "text", (argv[2] as string).slice(0, 5)] : argv, io),
      );
      await focusUsername(a);
      const text = "curtis.layne+test+73kmc@uber.com";
      const err = await driverError(exec(a, "inputText", { text }));
      expect(err).toEqual(
        typed(
          "android_text_incomplete",
          `typed 32 characters but the focused field com.example.app:id/username shows "curtis.lay" (10 characters) after one retry`,
        ),
      );
      expect(withoutDumps(ran(a.phone))).toEqual([
        ["input", "text", "curtis.layne+test+73kmc@uber.com"],
        TRAILER,
        ["input", "text", "s.layne+test+73kmc@uber.com"],
        TRAILER,
      ]);
    });

    test("inputSecret into a plain field is read back and repaired through the stdin script only", async () => {
      await using a = await attach(adb.server(), { focusDropChars: 2 });
      await focusUsername(a);
      expect(await exec(a, "inputSecret", { secret: "display" })).toEqual({ output: { accepted: true } });
      expect([
        demo(a.phone).username,
        a.phone.serviceLog.filter((s) => s.command.includes("display")),
        a.phone.serviceLog.filter((s) => s.stdin === "display\n").length,
      ]).toEqual(["display", [], 2]);
    });

    test("a password field is not read back and its text never appears in an error", async () => {
      await using a = await attach(adb.server(), { focusDropChars: 2 });
      await exec(a, "tap", { x: 540, y: 600 });
      clearLogs(a.phone);
      expect(await exec(a, "inputText", { text: "hunter22" })).toEqual({
        output: { accepted: true, byteLength: 8, via: "input" },
      });
      expect(withoutDumps(ran(a.phone))).toEqual([["input", "text", "hunter22"], TRAILER]);
    });
  });
  describe("through core (device.execute)", () => {
    /** A core over an AndroidDriver with one simulated phone, connected, with a Session. */
    async function withCore(
      options: FakePhoneOptions,
      run: (execute: (name: string, args: unknown) => Promise<any>, phone: FakePhone) => Promise<void>,
    ) {
      const device = await startFakeDevice(adb.server(), { scenario: demoScenario, ...options });
      const driver = new AndroidDriver({ adbPath: ADB_PATH, serverPort: adb.server().port, log: silentLogger });
      const h = await coreHarness({ driver });
      try {
        const c = await h.connect(ALL_FEATURES);
        await c.ask("device.select", { deviceId: `android-adb:${device.serial}` });
        await c.ask("device.connect");
        await c.ask("session.start");
        await run(
          (name, args) =>
            c.ask("device.execute", { id: crypto.randomUUID(), name, arguments: args }, { timeoutMs: 20_000 }),
          device.phone,
        );
        await c.close();
      } finally {
        await driver.stop();
        h.cleanup();
        await device[Symbol.asyncDispose]();
      }
    }
    const username = { kind: "selector", selector: { identifier: "username" } };

    test("setElementValue leaves the whole value in the field when the first characters after focus were lost", async () => {
      await withCore({ focusDropChars: 2 }, async (execute, phone) => {
        const r = await execute("setElementValue", { target: username, value: "display" });
        expect([r.error, demo(phone).username]).toEqual([undefined, "display"]);
      });
    });

    test("setElementValue fails with android_text_incomplete when the field keeps only part of the value", async () => {
      await withCore({}, async (execute, phone) => {
        const input = phone.commands.get("input") as CommandFn;
        phone.commands.set("input", (argv, io) =>
          input(argv[1] === "text" ? ["input", "text", (argv[2] as string).slice(0, 5)] : argv, io),
        );
        const r = await execute("setElementValue", { target: username, value: "curtis.layne" });
        expect(r.error).toEqual(
          expect.objectContaining({
            data: expect.objectContaining({ retryable: false, details: { platformCode: "android_text_incomplete" } }),
          }),
        );
        // setElementValue's value is protected: neither it nor what arrived is quoted.
        expect([r.error.message.includes("curti"), r.error.message.includes("protected value")]).toEqual([false, true]);
      });
    });

    test("inputText's after observation takes the tree that confirmed the text instead of dumping the same screen again", async () => {
      await withCore({}, async (execute, phone) => {
        expect((await execute("tapElement", { target: username })).error).toBeUndefined();
        const dumps = () => phone.commandLog.filter((r) => r.argv[0] === "uiautomator").length;
        const before = dumps();
        const r = await execute("inputText", { text: "alice" });
        expect(r.error).toBeUndefined();
        // The before observation's dump and the read-back: none more for the after observation.
        expect(dumps() - before).toBe(2);
        expect(r.result.after.uiSnapshot).toEqual(expect.objectContaining({ nodeCount: expect.any(Number) }));
        expect(demo(phone).username).toBe("alice");
        // The next observation dumps afresh: the kept tree served one observation only.
        const next = dumps();
        expect((await execute("back", {})).error).toBeUndefined();
        expect(dumps() - next).toBe(2);
      });
    });

    test("doubleTap is refused with android_double_tap_unsupported and taps nothing when input is slow", async () => {
      await withCore({ slowInput: 400 }, async (execute, phone) => {
        const r = await execute("doubleTap", { x: 540, y: 440 });
        expect([
          r.error?.data?.details,
          r.error?.data?.retryable,
          phone.inputLog.filter((i) => i.kind === "tap"),
        ]).toEqual([{ platformCode: "android_double_tap_unsupported" }, false, []]);
      });
    });
  });
});
