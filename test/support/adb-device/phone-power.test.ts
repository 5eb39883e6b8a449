/** The simulated phone's real-phone input switches: vendor refusal, slow input, screen off and keyguard, dropped text. */
import { describe, expect, test } from "bun:test";
import { pngSize } from "../../../drivers/android/parse/display.ts";
import { NULL_ROOT_ERROR } from "./commands-screen.ts";
import { demoScenario } from "./demo-scenario.ts";
import { FakePhone, type FakePhoneOptions, SLOW_INPUT_MS } from "./fake-phone.ts";
import { DENIED, LEGACY_DENIED } from "./input-refusal.ts";
import { blackScreen } from "./phone-power.ts";

const phoneWith = (o: FakePhoneOptions = {}) => new FakePhone({ scenario: demoScenario, ...o });
const run = (phone: FakePhone, src: string) => phone.runForText(src);

describe("inputDenied", () => {
  test("input prints Android 11's SecurityException with the reported stack and exits 1 when the sdk is 30 or lower", async () => {
    const phone = phoneWith({ inputDenied: true, props: { "ro.build.version.sdk": "29" } });
    const r = await run(phone, "input keyevent KEYCODE_APP_SWITCH");
    const lines = r.err.split("\n");
    expect([r.status, r.out, lines[0], lines[1], lines.at(-3), lines.at(-2), lines.at(-1)]).toEqual([
      1,
      "",
      LEGACY_DENIED,
      "\tat android.os.Parcel.createException(Parcel.java:2075)",
      "\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:380)",
      "Caused by: android.os.RemoteException: Remote stack trace:",
      "",
    ]);
    expect(phone.inputLog).toEqual([]);
  });

  test("input prints the 12+ header and SecurityException and exits 255 when the sdk is 31 or higher", async () => {
    const phone = phoneWith({ inputDenied: true, props: { "ro.build.version.sdk": "33" } });
    const swipe = await run(phone, "input swipe 1 2 3 4");
    expect([swipe.status, swipe.err.split("\n").slice(0, 4)]).toEqual([
      255,
      [
        "",
        "Exception occurred while executing 'swipe':",
        DENIED,
        "\tat com.android.server.input.InputManagerService.injectInputEventToTarget(InputManagerService.java:911)",
      ],
    ]);
    const text = await run(phone, "input text abc");
    expect(text).toEqual({
      out: "",
      err: `\nException occurred while executing 'text':\n${DENIED}\n`,
      both: `\nException occurred while executing 'text':\n${DENIED}\n`,
      status: 255,
    });
    expect(phone.runtime().state.username).toBe("");
  });
});

describe("slowInput", () => {
  test("true models the measured ~1 s per invocation, a number that many milliseconds, and the default none", async () => {
    expect([
      phoneWith({ slowInput: true }).inputStartupMs,
      phoneWith({ slowInput: 120 }).inputStartupMs,
      phoneWith().inputStartupMs,
    ]).toEqual([SLOW_INPUT_MS, 120, 0]);
    expect(SLOW_INPUT_MS).toBe(1_000);
    const phone = phoneWith({ slowInput: 120 });
    const started = performance.now();
    await run(phone, "input keyevent 0 && input keyevent 0");
    expect(performance.now() - started).toBeGreaterThanOrEqual(235);
  });
});

describe("screen off and keyguard", () => {
  test("a phone asleep reports Asleep, gives a black screenshot of its size and no tree, and ignores taps until KEYCODE_WAKEUP", async () => {
    const phone = phoneWith({ asleep: true });
    expect((await run(phone, "dumpsys power")).out).toBe(
      "Power Manager State:\n  mWakefulness=Asleep\n  mWakeLockSummary=0x0\n",
    );
    expect((await run(phone, "dumpsys window policy")).out).toContain(
      "      screenState=SCREEN_STATE_OFF\n      interactiveState=INTERACTIVE_STATE_SLEEP\n",
    );
    const png = phone.screenshot();
    expect([Buffer.from(png).equals(Buffer.from(blackScreen(phone.view))), pngSize(png)]).toEqual([
      true,
      { width: 1080, height: 2400 },
    ]);
    expect(await run(phone, "uiautomator dump /data/local/tmp/x.xml")).toEqual({
      out: "",
      err: `${NULL_ROOT_ERROR}\n`,
      both: `${NULL_ROOT_ERROR}\n`,
      status: 0,
    });
    await run(phone, "input tap 540 440");
    expect(phone.inputLog).toEqual([{ kind: "tap", x: 540, y: 440, target: null }]);
    await run(phone, "input keyevent 224");
    expect([phone.power.awake, (await run(phone, "dumpsys power")).out]).toEqual([
      true,
      "Power Manager State:\n  mWakefulness=Awake\n  mWakeLockSummary=0x0\n",
    ]);
  });

  test("wm dismiss-keyguard removes a swipe keyguard but not a PIN one, and the policy dump says which is secure", async () => {
    const swipe = phoneWith({ lock: "swipe" });
    expect((await run(swipe, "dumpsys window policy")).out).toContain("      showing=true\n");
    expect(swipe.tree().package).toBe("com.android.systemui");
    expect(await run(swipe, "wm dismiss-keyguard")).toEqual({ out: "", err: "", both: "", status: 0 });
    expect([swipe.power.keyguardShowing, swipe.tree().package]).toEqual([false, "com.example.app"]);
    const pin = phoneWith({ lock: "pin" });
    await run(pin, "wm dismiss-keyguard");
    const policy = (await run(pin, "dumpsys window policy")).out;
    expect([
      pin.power.keyguardShowing,
      policy.includes("      secure=true\n"),
      policy.includes("        mIsShowing=true\n"),
    ]).toEqual([true, true, true]);
  });

  test("the keyguard comes back when the screen goes off, and an upward swipe dismisses a swipe keyguard", async () => {
    const phone = phoneWith({ lock: "swipe" });
    await run(phone, "wm dismiss-keyguard");
    await run(phone, "input keyevent 26");
    expect([phone.power.awake, phone.power.keyguardShowing]).toEqual([false, true]);
    await run(phone, "input keyevent 26");
    await run(phone, "input swipe 540 2000 540 600");
    expect([phone.power.awake, phone.power.keyguardShowing]).toEqual([true, false]);
  });
});

describe("focusDropChars", () => {
  test("the first input text after a field gains focus loses its first N characters, the next ones arrive whole", async () => {
    const phone = phoneWith({ focusDropChars: 2 });
    await run(phone, "input tap 540 440");
    await run(phone, "input text display && input text abc");
    expect(phone.runtime().state.username).toBe("splayabc");
    await run(phone, "input tap 540 440");
    await run(phone, "input text xyz");
    expect(phone.runtime().state.username).toBe("splayabcz");
  });
});
