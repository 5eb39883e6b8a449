/**
 * Screen power and keyguard of the simulated phone, as real phones show them after a screen
 * timeout: `dumpsys power` wakefulness, `dumpsys window policy`'s KeyguardServiceDelegate block,
 * KEYCODE_WAKEUP / POWER / SLEEP, `wm dismiss-keyguard`, a black screencap and no UI tree while the
 * screen is off. The commands are wrapped around the registered `dumpsys`, `wm` and `uiautomator`,
 * so their other subcommands stay where they are.
 */
import { renderPng } from "../../../drivers/mock/render-png.ts";
import type { CommandFn } from "./command-io.ts";
import { NULL_ROOT_ERROR } from "./commands-screen.ts";
import type { FakePhone } from "./fake-phone.ts";
import type { SnapshotNode, View } from "./scenario.ts";

/** A lock the user set: none, swipe (no credential) or PIN (a credential). */
export type LockKind = "none" | "swipe" | "pin";

export const KEYGUARD_PACKAGE = "com.android.systemui";

/** What the screen of a real phone is doing. */
export class PhonePower {
  awake: boolean;
  /** The keyguard is up (it comes back whenever the screen goes off and a lock is set). */
  keyguardShowing: boolean;

  constructor(
    readonly lock: LockKind,
    options: { asleep?: boolean },
  ) {
    this.awake = !options.asleep;
    this.keyguardShowing = lock !== "none";
  }

  sleep(): void {
    this.awake = false;
    if (this.lock !== "none") this.keyguardShowing = true;
  }

  wake(): void {
    this.awake = true;
  }

  /**
   * `wm dismiss-keyguard` / a swipe up on the lock screen: a keyguard without a credential goes;
   * one with a PIN stays (the phone shows its bouncer and waits for the PIN).
   */
  dismiss(): void {
    if (this.awake && this.lock !== "pin") this.keyguardShowing = false;
  }

  /** Whether input reaches the foreground app: the screen is on and no keyguard covers it. */
  get appReachable(): boolean {
    return this.awake && !this.keyguardShowing;
  }
}

/**
 * The keyguard's window in place of the app's: only its package (System UI owns the lock screen)
 * is modelled; a real lock screen's nodes (clock, notifications, unlock area) are not simulated.
 */
export function keyguardSnapshot(view: View): SnapshotNode {
  return {
    index: 0,
    text: "",
    resourceId: "",
    className: "android.widget.FrameLayout",
    package: KEYGUARD_PACKAGE,
    contentDesc: "",
    checkable: false,
    checked: false,
    clickable: false,
    enabled: true,
    focusable: false,
    focused: false,
    scrollable: false,
    longClickable: false,
    password: false,
    selected: false,
    bounds: [0, 0, view.width, view.height],
    children: [],
    source: {},
  };
}

const blacks = new Map<string, Uint8Array>();

/** All-black pixels of the screen's size: what `screencap -p` gives while the display is off. */
export function blackScreen(view: View): Uint8Array {
  const key = `${view.width}x${view.height}`;
  let png = blacks.get(key);
  if (!png) blacks.set(key, (png = renderPng(view.width, view.height, [0, 0, 0], [])));
  return png;
}

/**
 * `dumpsys power`, reduced to the lines drivers read. The line shapes are from public real-device
 * output: `Power Manager State:` then `  mWakefulness=Asleep` (a test fixture of a project
 * reading real phones, index id 71080836914; appium/appium-adb lib/tools/lockmgmt.ts reads
 * `mWakefulness=` too), `  mWakeLockSummary=0x0` (a note of `dumpsys power` on a real phone, id
 * 61716869264). A real dump has many more lines; they are not simulated.
 */
export function dumpsysPower(power: PhonePower): string {
  return `Power Manager State:\n  mWakefulness=${power.awake ? "Awake" : "Asleep"}\n  mWakeLockSummary=0x0\n`;
}

/**
 * `dumpsys window policy`, reduced to its KeyguardServiceDelegate block, laid out as the real
 * lines in appium/appium-adb test/unit/lockmgmt.spec.ts (`showing=`, `secure=`, `screenState=
 * SCREEN_STATE_OFF`, `interactiveState=INTERACTIVE_STATE_SLEEP`, `KeyguardStateMonitor` with
 * `mIsShowing=` / `mInputRestricted=`). `secure` is whether the lock has a credential. The
 * header is WindowManagerService's section title, as for `dumpsys window windows`. The rest of
 * the policy dump is not simulated.
 */
export function dumpsysWindowPolicy(power: PhonePower): string {
  const showing = power.keyguardShowing;
  return [
    "WINDOW MANAGER POLICY STATE (dumpsys window policy)",
    "    KeyguardServiceDelegate",
    `      showing=${showing}`,
    `      showingAndNotOccluded=${showing}`,
    `      inputRestricted=${showing}`,
    "      occluded=false",
    `      secure=${power.lock === "pin"}`,
    "      dreaming=false",
    "      systemIsReady=true",
    `      deviceHasKeyguard=true`,
    "      enabled=true",
    "      offReason=OFF_BECAUSE_OF_USER",
    "      currentUser=-10000",
    "      bootCompleted=true",
    `      screenState=${power.awake ? "SCREEN_STATE_ON" : "SCREEN_STATE_OFF"}`,
    `      interactiveState=${power.awake ? "INTERACTIVE_STATE_AWAKE" : "INTERACTIVE_STATE_SLEEP"}`,
    "      KeyguardStateMonitor",
    `        mIsShowing=${showing}`,
    "        mSimSecure=false",
    `        mInputRestricted=${showing}`,
    "        mTrusted=false",
    "        mCurrentUserId=0",
    "",
  ].join("\n");
}

/** Wraps the phone's registered commands with the screen-power behaviour. */
export function installPowerCommands(phone: FakePhone): void {
  const wrap = (name: string, make: (inner: CommandFn) => CommandFn) => {
    const inner = phone.commands.get(name);
    if (inner) phone.commands.set(name, make(inner));
  };
  wrap("dumpsys", (inner) => (argv, io) => {
    if (argv[1] === "power" && argv.length === 2) return (io.out(dumpsysPower(phone.power)), 0);
    if (argv[1] === "window" && argv[2] === "policy" && argv.length === 3)
      return (io.out(dumpsysWindowPolicy(phone.power)), 0);
    return inner(argv, io);
  });
  // WindowManagerShellCommand's dismiss-keyguard prints nothing and exits 0 (AOSP; appium-adb
  // lockmgmt.ts runs it without reading any output).
  wrap("wm", (inner) => (argv, io) => {
    if (argv[1] === "dismiss-keyguard" && argv.length === 2) return (phone.power.dismiss(), 0);
    return inner(argv, io);
  });
  // With the display off there is no active window: DumpCommand prints the null-root error and
  // still exits 0 (fb cmds/uiautomator DumpCommand.java; the research note §2.9).
  wrap("uiautomator", (inner) => (argv, io) => {
    if (argv[1] === "dump" && !phone.power.awake) return (io.err(`${NULL_ROOT_ERROR}\n`), 0);
    return inner(argv, io);
  });
}
