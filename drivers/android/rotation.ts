/**
 * `rotate` as real phones take it: devicerail locks the rotation (`accelerometer_rotation 0`) and
 * asks for one (`user_rotation N`), then reads the display's rotation back, because a phone may
 * say nothing and not turn: an app locked to one orientation keeps it, many phones never turn
 * upside down (reverse portrait), and MIUI/ColorOS phones refuse `settings put` from adb without
 * the vendor's security option (research note android-real-phones.md §2.7). The owner's own
 * auto-rotate and rotation settings are read before the first rotate and put back on disconnect.
 */
import { budgetMs, type CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";
import type { ORIENTATIONS } from "./action-contracts.ts";
import { platformError } from "./adbkit-port.ts";
import type { AndroidShell } from "./android-shell.ts";
import { injectionFix } from "./input-probe.ts";
import { isSettingsDenied, parseDisplayRotation } from "./parse/rotation.ts";

export type Orientation = (typeof ORIENTATIONS)[number];

/** Surface.ROTATION_* of each orientation on a phone whose natural orientation is portrait. */
export const ROTATION_OF: Record<Orientation, number> = {
  portrait: 0,
  landscape: 1,
  reversePortrait: 2,
  reverseLandscape: 3,
};
const ORIENTATION_OF = Object.fromEntries(Object.entries(ROTATION_OF).map(([k, v]) => [v, k])) as Record<
  number,
  Orientation
>;

/** How long the display gets to reach the rotation asked for (WindowManager turns it within about a second). */
export const ROTATION_CONFIRM_MS = 3_000;
const POLL_MS = 250;

/** The two settings as the owner had them; `null` where the key did not exist. */
interface Saved {
  accelerometer: string | null;
  user: string | null;
}

const SETTINGS_READ = "settings get system accelerometer_rotation; settings get system user_rotation";

export class Rotations {
  /** Per serial: what to put back on disconnect (set by the first rotate of a connection). */
  private readonly saved = new Map<string, Saved>();

  constructor(
    private readonly shell: AndroidShell,
    private readonly confirmMs = ROTATION_CONFIRM_MS,
  ) {}

  /** Turns the screen to `orientation`, or throws a typed error saying why it did not turn. */
  async rotate(serial: string, orientation: Orientation, ctx: CallContext): Promise<void> {
    const target = ROTATION_OF[orientation];
    const before = await this.read(serial, ctx);
    const first = !this.saved.has(serial);
    if (first) this.saved.set(serial, before);
    await this.put(serial, { accelerometer: "0", user: String(target) }, ctx).catch((err: unknown) => {
      // Refused outright: nothing was written, so there is nothing to put back.
      if (first && err instanceof DriverError && err.platformCode === "android_settings_not_permitted")
        this.saved.delete(serial);
      throw err;
    });
    const reached = await this.await(serial, target, ctx);
    if (reached === target || reached === null) {
      if (reached === null)
        ctx.log.warn({ serial }, "dumpsys input shows no display rotation: rotate is not confirmed");
      return;
    }
    // The phone kept its orientation: leave its settings as they were before this call.
    await this.put(serial, before, ctx).catch(() => {});
    throw new DriverError("platform_error", {
      platformCode: "android_rotation_refused",
      retryable: false,
      message:
        `the screen stayed ${ORIENTATION_OF[reached] ?? `at rotation ${reached}`} after asking for ${orientation}: ` +
        (target === 2
          ? "many phones never turn upside down (reverse portrait), and an app may be locked to one orientation"
          : "the app in front is probably locked to one orientation (its manifest's screenOrientation); try it in another app"),
    });
  }

  /** The phones whose settings are still to be put back. */
  serials(): string[] {
    return [...this.saved.keys()];
  }

  /** Puts the owner's auto-rotate and rotation back after a connection that rotated the screen. */
  async restore(serial: string, ctx: CallContext): Promise<void> {
    const saved = this.saved.get(serial);
    if (!saved) return;
    this.saved.delete(serial);
    await this.put(serial, saved, ctx);
  }

  private async read(serial: string, ctx: CallContext): Promise<Saved> {
    const [accelerometer, user] = (await this.shell.run(serial, SETTINGS_READ, ctx)).split("\n").map((l) => l.trim());
    const value = (v: string | undefined) => (v === undefined || v === "" || v === "null" ? null : v);
    return { accelerometer: value(accelerometer), user: value(user) };
  }

  private async put(serial: string, to: Saved, ctx: CallContext): Promise<void> {
    const one = (key: string, v: string | null) =>
      v === null ? `settings delete system ${key} > /dev/null` : `settings put system ${key} ${v}`;
    // user_rotation first: turning auto-rotate back on last lets the sensor take over from the restored value.
    const { out, code } = await this.shell.exec(
      serial,
      `${one("user_rotation", to.user)} && ${one("accelerometer_rotation", to.accelerometer)}`,
      ctx,
    );
    checkSettingsWrite(this.shell, serial, "rotation", { out, code });
  }

  /** The display's rotation once it equals `target`, else the last one read within the confirm window (null: unreadable). */
  private async await(serial: string, target: number, ctx: CallContext): Promise<number | null> {
    const until = Date.now() + budgetMs(ctx, this.confirmMs);
    for (;;) {
      const rotation = parseDisplayRotation(await this.shell.run(serial, "dumpsys input", ctx));
      if (rotation === target || rotation === null || Date.now() + POLL_MS > until) return rotation;
      await pause(POLL_MS, ctx);
    }
  }
}

/**
 * The answer of a `settings put` run: MIUI/ColorOS refuse it from adb (SecurityException: writing
 * to settings) until the vendor's security option is set, which the error names.
 */
export function checkSettingsWrite(
  shell: AndroidShell,
  serial: string,
  what: string,
  r: { out: string; code: number },
): void {
  if (isSettingsDenied(r.out))
    throw new DriverError("platform_error", {
      platformCode: "android_settings_not_permitted",
      retryable: false,
      message: `the phone refuses to change its ${what} settings from adb (SecurityException: writing to settings): ${injectionFix(shell.manufacturers.get(serial))}`,
    });
  if (r.code !== 0)
    throw platformError(
      "android_mutation_remote_error",
      false,
      `settings exited ${r.code}: ${r.out.trim().slice(0, 300)}`,
    );
}
