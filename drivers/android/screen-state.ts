/**
 * Screen on and keyguard gone before devicerail taps or looks. A real phone turns its screen off
 * after 15 s to 2 min and shows a keyguard: taps then do nothing, screenshots are black and dumps
 * say `null root node` (research note §2.9). The state comes from `dumpsys power` (wakefulness)
 * and `dumpsys window policy` (KeyguardServiceDelegate `showing=` / `secure=`), the lines
 * appium/appium-adb lib/tools/lockmgmt.ts reads; KEYCODE_WAKEUP wakes the screen and
 * `wm dismiss-keyguard` removes a keyguard without a credential.
 */
import { type CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";
import type { AndroidShell } from "./android-shell.ts";
import type { PhoneCheck } from "./phone-checks.ts";

/** KeyEvent.KEYCODE_WAKEUP: wakes the screen, does nothing when it is on (appium-adb uses it from API 20). */
const KEYCODE_WAKEUP = 224;

export const SCREEN_STATE_COMMAND = "dumpsys power; dumpsys window policy";

export interface ScreenState {
  /** `Awake`, `Asleep`, `Dozing`, `Dreaming`; null when the dump has no wakefulness line. */
  wakefulness: string | null;
  /** Whether a keyguard is up; null when the policy dump does not say. */
  keyguard: boolean | null;
  /** Whether the lock has a credential (PIN, pattern, password); null when not said. */
  secure: boolean | null;
}

/** Reads both dumps; unknown formats give nulls, which count as "fine" (never a made-up lock). */
export function parseScreenState(out: string): ScreenState {
  // Some builds print `getWakefulnessLocked()=Dozing` instead (appium-adb lockmgmt.ts).
  const wake = /^\s*(?:mWakefulness|getWakefulnessLocked\(\))=(\w+)\s*$/m.exec(out);
  const delegate = /^\s*KeyguardServiceDelegate\s*$([\s\S]*)/m.exec(out)?.[1] ?? "";
  const flag = (src: string, key: string) => {
    const m = new RegExp(`^\\s*${key}=(true|false)\\s*$`, "m").exec(src);
    return m ? m[1] === "true" : null;
  };
  // Older policy dumps (PhoneWindowManager) say mShowingLockscreen=true on one line with others.
  const legacy = /\bmShowingLockscreen=(true|false)\b/.exec(out);
  const monitor = flag(delegate, "mIsShowing");
  const showing = flag(delegate, "showing") ?? monitor ?? (legacy ? legacy[1] === "true" : null);
  return {
    wakefulness: wake?.[1] ?? null,
    // An occluded keyguard (an app shown over the lock screen) leaves input to that app.
    keyguard: showing === true && flag(delegate, "occluded") === true ? false : showing,
    secure: flag(delegate, "secure"),
  };
}

/** Both dumps in one round trip. */
export async function readScreenState(shell: AndroidShell, serial: string, ctx: CallContext): Promise<ScreenState> {
  return parseScreenState((await shell.exec(serial, SCREEN_STATE_COMMAND, ctx, { ceilingMs: 5_000 })).out);
}

const isAwake = (s: ScreenState) => s.wakefulness === null || s.wakefulness === "Awake";

export function deviceLocked(why: string): DriverError {
  return new DriverError("platform_error", {
    platformCode: "android_device_locked",
    retryable: false,
    message:
      `${why}: unlock the phone, or remove its screen lock (Settings › Security › Screen lock: None or Swipe); ` +
      "to keep the screen on while it is plugged in, turn on Developer options › Stay awake, or run `adb shell svc power stayon usb`",
  });
}

/** How long after devicerail's own input the screen is known to stay on: screen timeouts are ≥ 15 s and input resets them. */
export const KNOWN_AWAKE_MS = 10_000;
/** Polls after a wake or dismiss, for the keyguard's animation. */
const SETTLE_POLLS = 5;
const SETTLE_PAUSE_MS = 200;

/**
 * Makes sure, per phone, that the screen is on and no keyguard covers the app before input and
 * observations. One `dumpsys` round trip per call, except while the phone is known awake: within
 * KNOWN_AWAKE_MS of input devicerail sent to an awake, unlocked screen, no check is made.
 */
export class ScreenGuard {
  private readonly awakeUntil = new Map<string, number>();
  private readonly checkedAwake = new Set<string>();
  private readonly inflight = new Map<string, Promise<void>>();

  constructor(
    private readonly shell: AndroidShell,
    private readonly knownAwakeMs = KNOWN_AWAKE_MS,
  ) {}

  /** Input went through to an awake, unlocked screen: its screen timeout restarts now. */
  noteInput(serial: string): void {
    if (this.checkedAwake.has(serial)) this.awakeUntil.set(serial, Date.now() + this.knownAwakeMs);
  }

  forget(serial: string): void {
    this.awakeUntil.delete(serial);
    this.checkedAwake.delete(serial);
  }

  async ensure(serial: string, ctx: CallContext): Promise<void> {
    if ((this.awakeUntil.get(serial) ?? 0) > Date.now()) return;
    const running = this.inflight.get(serial);
    if (running) return running;
    const work = this.check(serial, ctx).finally(() => this.inflight.delete(serial));
    this.inflight.set(serial, work);
    return work;
  }

  private read(serial: string, ctx: CallContext): Promise<ScreenState> {
    return readScreenState(this.shell, serial, ctx);
  }

  private async check(serial: string, ctx: CallContext): Promise<void> {
    this.checkedAwake.delete(serial);
    let state = await this.read(serial, ctx);
    for (let poll = 0; !(isAwake(state) && state.keyguard !== true); poll++) {
      if (state.keyguard === true && state.secure === true)
        throw deviceLocked("the phone is locked with a PIN, pattern or password");
      if (poll >= SETTLE_POLLS)
        throw deviceLocked(
          isAwake(state)
            ? "the keyguard stays up after `wm dismiss-keyguard`"
            : `the screen stays off (wakefulness ${state.wakefulness}) after KEYCODE_WAKEUP`,
        );
      if (poll > 0) await pause(SETTLE_PAUSE_MS, ctx);
      else if (!isAwake(state)) await this.shell.input(serial, ["keyevent", String(KEYCODE_WAKEUP)], ctx);
      else await this.shell.checked(serial, ["wm", "dismiss-keyguard"], ctx);
      state = await this.read(serial, ctx);
      // Waking may bring up the keyguard: dismiss it too, once.
      if (poll === 0 && isAwake(state) && state.keyguard === true && state.secure !== true) {
        await this.shell.checked(serial, ["wm", "dismiss-keyguard"], ctx);
        state = await this.read(serial, ctx);
      }
    }
    this.checkedAwake.add(serial);
  }
}

/** doctor: is the screen on and unlocked? */
export async function checkScreenState(shell: AndroidShell, serial: string, ctx: CallContext): Promise<PhoneCheck> {
  const name = "screen and lock";
  const s = await readScreenState(shell, serial, ctx);
  const stayAwake =
    "turn on Developer options › Stay awake (or run `adb shell svc power stayon usb`) so the screen stays on while plugged in";
  if (s.keyguard === true && s.secure === true)
    return {
      name,
      status: "fail",
      detail: "a keyguard with a PIN, pattern or password is up; devicerail cannot unlock it",
      fix: `unlock the phone or set Screen lock to None or Swipe; ${stayAwake}`,
    };
  if (!isAwake(s) || s.keyguard === true)
    return {
      name,
      status: "warn",
      detail: `the screen is ${isAwake(s) ? "on behind a keyguard without a credential" : `off (wakefulness ${s.wakefulness})`}; devicerail wakes it and dismisses such a keyguard before each step`,
      fix: stayAwake,
    };
  return { name, status: "ok", detail: "the screen is on and unlocked", fix: null };
}
