/**
 * What `devicerail doctor` checks on each attached phone: settings and states of a real phone
 * that make devicerail fail or slow down, each with the fix. A check only reads; it never
 * changes the phone. Every check runs under its own short deadline, and one that throws or
 * overruns is reported as a failed check, never as a failed doctor.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { AdbkitPort } from "./adbkit-port.ts";
import { AndroidShell } from "./android-shell.ts";
import { checkInputPermission } from "./input-probe.ts";
import { checkScreenState } from "./screen-state.ts";
import { checkUiAutomationBridge } from "./ui-bridge.ts";
import { helpersPhoneCheck } from "./helper/helper-tool.ts";
import { messageOf } from "../../src/protocol/errors.ts";

export interface PhoneCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix: string | null;
}

export type PhoneCheckFn = (shell: AndroidShell, serial: string, ctx: CallContext) => Promise<PhoneCheck>;

/** The three scales Developer options shows as "Window/Transition animation scale" and "Animator duration scale". */
const ANIMATION_SCALES = ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"] as const;

/**
 * Animations on make `uiautomator dump` wait for the screen to go idle (up to 10 s, then
 * "ERROR: could not get idle state."; AOSP DumpCommand), so every observation of a moving screen
 * is slow or has no tree. `settings get` prints `null` for a key never set, which leaves the
 * platform's default scale, 1.
 */
export const animationsCheck: PhoneCheckFn = async (shell, serial, ctx) => {
  const out = await shell.run(serial, ANIMATION_SCALES.map((k) => `settings get global ${k}`).join(" && "), ctx);
  const values = out
    .split("\n")
    .map((l) => l.replace(/\r$/, "").trim())
    .filter((l) => l !== "");
  if (values.length !== ANIMATION_SCALES.length)
    throw new Error(`settings get printed ${JSON.stringify(out.slice(0, 200))}`);
  const on = ANIMATION_SCALES.flatMap((key, i) => {
    const v = values[i] as string;
    if (v !== "null" && Number.isFinite(Number(v)) && Number(v) === 0) return [];
    return [`${key} ${v === "null" ? "unset (default 1)" : v}`];
  });
  if (on.length === 0)
    return {
      name: "animations",
      status: "ok",
      detail: "window, transition and animator animations are off",
      fix: null,
    };
  return {
    name: "animations",
    status: "warn",
    detail: `animations are on (${on.join(", ")}): uiautomator waits up to 10 s for an animated screen to go idle, so observations are slow or come without a UI tree`,
    fix:
      "on the phone: Settings › Developer options › Window animation scale, Transition animation scale and Animator duration scale › Animation off; " +
      `or run: ${ANIMATION_SCALES.map((k) => `adb -s ${serial} shell settings put global ${k} 0`).join("; ")}`,
  };
};

/** Every phone check doctor runs, in the order it prints them. */
export const PHONE_CHECKS: readonly { name: string; run: PhoneCheckFn }[] = [
  { name: "input permission", run: checkInputPermission },
  { name: "screen and lock", run: checkScreenState },
  { name: "animations", run: animationsCheck },
  { name: "UI automation bridge", run: checkUiAutomationBridge },
  { name: "helpers", run: helpersPhoneCheck },
];

/** How long one check may take before doctor reports it failed. */
export const PHONE_CHECK_DEADLINE_MS = 5_000;

/**
 * Runs `checks` one after another on one phone (their commands share its shell), each under its
 * own deadline and abort, so a hanging command is stopped and a throw becomes a failed check.
 */
export async function runPhoneChecks(
  shell: AndroidShell,
  serial: string,
  ctx: CallContext,
  checks: readonly { name: string; run: PhoneCheckFn }[] = PHONE_CHECKS,
  deadlineMs = PHONE_CHECK_DEADLINE_MS,
): Promise<PhoneCheck[]> {
  const results: PhoneCheck[] = [];
  for (const c of checks) {
    const stop = new AbortController();
    const onAbort = () => stop.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        stop.abort("deadline");
        reject(new DriverError("driver_timed_out"));
      }, deadlineMs);
    });
    try {
      const deadline = Math.min(ctx.deadline ?? Number.POSITIVE_INFINITY, Date.now() + deadlineMs);
      results.push(await Promise.race([c.run(shell, serial, { ...ctx, signal: stop.signal, deadline }), overrun]));
    } catch (err) {
      const timedOut =
        err instanceof DriverError &&
        (err.driverCode === "driver_timed_out" ||
          (err.driverCode === "driver_cancelled" && stop.signal.reason === "deadline"));
      results.push({
        name: c.name,
        status: "fail",
        detail: timedOut ? `the check did not finish within ${deadlineMs} ms` : `the check failed: ${reason(err)}`,
        fix: `make sure the phone is awake and responds (adb -s ${serial} shell true), then run devicerail doctor again`,
      });
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }
  return results;
}

const reason = (err: unknown): string => {
  if (err instanceof DriverError) {
    return [err.platformCode ?? err.driverCode, err.detail ?? err.message].filter(Boolean).join(": ").slice(0, 300);
  }
  return messageOf(err).slice(0, 300);
};

/**
 * The phone checks of every serial, through the adb server on `port` (which this never starts:
 * doctor only looks). Phones are checked side by side.
 */
export async function checkPhones(
  adb: { bin: string; port: number },
  serials: readonly string[],
  ctx: CallContext,
): Promise<Map<string, PhoneCheck[]>> {
  const shell = new AndroidShell(new AdbkitPort({ port: adb.port, bin: adb.bin }), () => null);
  const results = await Promise.all(
    serials.map(async (serial) => [serial, await runPhoneChecks(shell, serial, ctx)] as const),
  );
  return new Map(results);
}
