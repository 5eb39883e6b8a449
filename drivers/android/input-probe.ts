/**
 * Whether the phone accepts input from adb, and what one `input` invocation costs there.
 *
 * Xiaomi/Redmi/POCO (MIUI, HyperOS), OPPO/realme/OnePlus (ColorOS) and HONOR phones refuse input
 * injection from the shell user until a developer option is set and the phone rebooted
 * (Genymobile/scrcpy FAQ "Mouse and keyboard do not work", #1865, #3824; appium/appium#13802).
 * Every `input` then prints a SecurityException naming INJECT_EVENTS, in either of two texts
 * (Android 11 and older / 12 and later), which is what is matched here.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { AndroidShell } from "./android-shell.ts";
import type { PhoneCheck } from "./phone-checks.ts";

/** Both refusal texts name the permission; nothing else `input` prints does. */
const INJECTION_DENIED = /SecurityException[^\n]*INJECT_EVENTS/;
/** A harmless injection: KEYCODE_UNKNOWN reaches the permission check and does nothing. */
export const PROBE_COMMAND = "input keyevent 0";
/** ViewConfiguration.DOUBLE_TAP_TIMEOUT: the second tap must come within this of the first. */
export const DOUBLE_TAP_TIMEOUT_MS = 300;

export const isInjectionDenied = (out: string): boolean => INJECTION_DENIED.test(out);

const XIAOMI = new Set(["xiaomi", "redmi", "poco"]);
const OPPO = new Set(["oppo", "realme", "oneplus"]);
const XIAOMI_FIX = 'turn on Developer options › "USB debugging (Security settings)", then reboot the phone';
const OPPO_FIX = 'turn on Developer options › "Disable permission monitoring", then reboot the phone';

/** The setting that lets adb inject input on a phone of this manufacturer (`ro.product.manufacturer`). */
export function injectionFix(manufacturer: string | null | undefined): string {
  const m = (manufacturer ?? "").trim().toLowerCase();
  if (XIAOMI.has(m)) return `on this ${manufacturer} phone (MIUI/HyperOS) ${XIAOMI_FIX}`;
  if (OPPO.has(m)) return `on this ${manufacturer} phone (ColorOS) ${OPPO_FIX}`;
  return (
    'on Xiaomi/Redmi/POCO turn on Developer options › "USB debugging (Security settings)"; on OPPO/realme/OnePlus turn on ' +
    'Developer options › "Disable permission monitoring"; on other brands (e.g. HONOR) the similar developer option; then reboot the phone'
  );
}

/** The typed refusal: not retryable, since nothing changes until the user sets the option and reboots. */
export function inputNotPermitted(manufacturer: string | null | undefined): DriverError {
  return new DriverError("platform_error", {
    platformCode: "android_input_not_permitted",
    retryable: false,
    message: `the phone refuses taps, keys and text from adb (SecurityException: INJECT_EVENTS permission): ${injectionFix(manufacturer)}`,
  });
}

/**
 * Runs the harmless injection once: throws android_input_not_permitted when the phone refuses
 * it, else returns how long the call took on the host (milliseconds).
 */
export async function probeInput(shell: AndroidShell, serial: string, ctx: CallContext): Promise<number> {
  const started = performance.now();
  const { out } = await shell.exec(serial, PROBE_COMMAND, ctx);
  const ms = performance.now() - started;
  if (isInjectionDenied(out)) throw inputNotPermitted(shell.manufacturers.get(serial));
  return ms;
}

/**
 * Whether a double tap made of two `input tap` invocations lands inside the double-tap window:
 * two invocations (the second one's start-up sits between the taps, with margin for jitter) in
 * DOUBLE_TAP_TIMEOUT_MS. `perInvocationMs` is the probe's time minus a plain shell round trip.
 */
export const doubleTapFits = (perInvocationMs: number): boolean => 2 * perInvocationMs <= DOUBLE_TAP_TIMEOUT_MS;

export function doubleTapUnsupported(perInvocationMs: number): DriverError {
  return new DriverError("platform_error", {
    platformCode: "android_double_tap_unsupported",
    retryable: false,
    message:
      `doubleTap is not offered on this phone: one \`input\` invocation takes about ${Math.round(perInvocationMs)} ms ` +
      `(Android 11 and older start a VM per call), so two taps cannot land within Android's ${DOUBLE_TAP_TIMEOUT_MS} ms double-tap window`,
  });
}

/** doctor: may devicerail inject input on this phone? */
export async function checkInputPermission(shell: AndroidShell, serial: string, ctx: CallContext): Promise<PhoneCheck> {
  const name = "input permission";
  const manufacturer = (await shell.exec(serial, "getprop ro.product.manufacturer", ctx)).out.trim();
  const { out } = await shell.exec(serial, PROBE_COMMAND, ctx);
  if (isInjectionDenied(out))
    return {
      name,
      status: "fail",
      detail: "the phone refuses input injection from adb (SecurityException: INJECT_EVENTS)",
      fix: injectionFix(manufacturer),
    };
  return { name, status: "ok", detail: "the phone accepts taps, keys and text from adb", fix: null };
}
