/** The pure parts of the real-phone input handling: screen-state parsing, the text repair, the manufacturer's setting. */
import { describe, expect, test } from "bun:test";
import { doubleTapFits, injectionFix, isInjectionDenied } from "../../../drivers/android/input-probe.ts";
import { parseScreenState } from "../../../drivers/android/screen-state.ts";
import { repairOf } from "../../../drivers/android/text-readback.ts";

/** The KeyguardServiceDelegate block of `dumpsys window policy` as appium/appium-adb test/unit/lockmgmt.spec.ts quotes it. */
const delegate = (showing: boolean, secure: boolean, screen: "ON" | "OFF") => `
    KeyguardServiceDelegate
      showing=${showing}
      showingAndNotOccluded=true
      inputRestricted=false
      occluded=false
      secure=${secure}
      dreaming=false
      systemIsReady=true
      deviceHasKeyguard=true
      enabled=true
      offReason=OFF_BECAUSE_OF_USER
      currentUser=-10000
      bootCompleted=true
      screenState=SCREEN_STATE_${screen}
      interactiveState=INTERACTIVE_STATE_${screen === "ON" ? "AWAKE" : "SLEEP"}
      KeyguardStateMonitor
        mIsShowing=${showing}
        mSimSecure=false
        mInputRestricted=false
        mTrusted=false
        mCurrentUserId=0
`;

describe("parseScreenState", () => {
  test("reads wakefulness from dumpsys power and showing/secure from the KeyguardServiceDelegate block", () => {
    expect(parseScreenState(`Power Manager State:\n  mWakefulness=Asleep\n${delegate(true, true, "OFF")}`)).toEqual({
      wakefulness: "Asleep",
      keyguard: true,
      secure: true,
    });
    expect(parseScreenState(`Power Manager State:\n  mWakefulness=Awake\n${delegate(false, false, "ON")}`)).toEqual({
      wakefulness: "Awake",
      keyguard: false,
      secure: false,
    });
  });

  test("reads the getWakefulnessLocked() variant and the older mShowingLockscreen line", () => {
    expect(
      parseScreenState(
        "  getWakefulnessLocked()=Dozing\nmShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false mTopIsFullscreen=false",
      ),
    ).toEqual({
      wakefulness: "Dozing",
      keyguard: true,
      secure: null,
    });
  });

  test("says nothing rather than guessing when the dumps have an unknown format", () => {
    expect(parseScreenState("mShowingDream=false mTopIsFullscreen=false")).toEqual({
      wakefulness: null,
      keyguard: null,
      secure: null,
    });
  });
});

describe("repairOf", () => {
  test("retypes everything after deleting what arrived when the head was lost, types the rest when the tail was lost", () => {
    expect(repairOf("display", "splay")).toEqual({ deletes: 5, type: "display" });
    expect(repairOf("curtis.layne+test+73kmc@uber.com", "curti")).toEqual({
      deletes: 0,
      type: "s.layne+test+73kmc@uber.com",
    });
  });

  test("repairs nothing when the field holds anything but an exact part of the text", () => {
    expect([
      repairOf("1234567890", "(123) 456-7890"),
      repairOf("display", "xysplay"),
      repairOf("display", ""),
      repairOf("display", "Username"),
    ]).toEqual([null, null, null, null]);
  });
});

describe("input permission", () => {
  test("both refusal texts are recognised and nothing else input prints is", () => {
    expect(
      isInjectionDenied(
        "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission\n",
      ),
    ).toBe(true);
    expect(
      isInjectionDenied(
        "Exception occurred while executing 'tap':\njava.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n",
      ),
    ).toBe(true);
    expect(
      isInjectionDenied("Error: Invalid arguments for command: tap\nUsage: input [<source>] <command> [<arg>...]\n"),
    ).toBe(false);
  });

  test("the setting follows ro.product.manufacturer, case-insensitively", () => {
    expect(
      [injectionFix("XIAOMI"), injectionFix("poco"), injectionFix("OnePlus"), injectionFix("samsung")].map((s) => [
        s.includes("USB debugging (Security settings)"),
        s.includes("Disable permission monitoring"),
      ]),
    ).toEqual([
      [true, false],
      [true, false],
      [false, true],
      [true, true],
    ]);
  });

  test("a double tap fits when two invocations fit in the 300 ms window", () => {
    expect([doubleTapFits(60), doubleTapFits(150), doubleTapFits(151), doubleTapFits(1_000)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
