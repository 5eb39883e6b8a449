/**
 * What io.appium.settings adds, through its documented intents (io.appium.settings README
 * "Mock location", "Clipboard"), plus the animation scales, which are plain global settings
 * (appium-adb's setAnimationScale writes the same three keys). Each answer is checked: a receiver
 * answers `result=-1` (Activity.RESULT_OK) with its data in `data="…"`.
 */
import type { CallContext } from "../../../src/driver/driver.ts";
import { platformError } from "../adbkit-port.ts";
import type { AndroidShell } from "../android-shell.ts";
import { checkSettingsWrite } from "../rotation.ts";
import { quote } from "../parse/shell.ts";

const APPIUM_IME = "io.appium.settings/.AppiumIME";
export const ANIMATION_KEYS = [
  "animator_duration_scale",
  "transition_animation_scale",
  "window_animation_scale",
] as const;

const helperFailed = (what: string, out: string) =>
  platformError("android_helper_failed", true, `${what}: ${out.trim().slice(0, 300)}`);

/** Starts (or moves) the mock location of io.appium.settings' LocationService. */
export async function setLocation(
  shell: AndroidShell,
  serial: string,
  sdk: number,
  to: { latitude: number; longitude: number; altitude?: number },
  ctx: CallContext,
): Promise<void> {
  // The app becomes the phone's mock location app (Developer options › Select mock location app).
  const allow = await shell.exec(serial, "appops set io.appium.settings android:mock_location allow", ctx);
  if (allow.code !== 0 || /exception|error/i.test(allow.out))
    throw helperFailed("appops refused mock locations", allow.out);
  const extras = [
    ["latitude", to.latitude],
    ["longitude", to.longitude],
    ...(to.altitude !== undefined ? [["altitude", to.altitude] as const] : []),
  ].flatMap(([k, v]) => ["--es", String(k), String(v)]);
  // A foreground service from Android 8 (API 26) on; startservice before.
  const verb = sdk >= 26 ? "start-foreground-service" : "startservice";
  const argv = ["am", verb, "--user", "0", "-n", "io.appium.settings/.LocationService", ...extras];
  const { out, code } = await shell.exec(serial, argv.map(quote).join(" "), ctx);
  if (code !== 0 || /^Error|exception/im.test(out)) throw helperFailed("the mock location service did not start", out);
}

/** Stops the mock location (at disconnect): the phone's own location comes back. */
export async function stopLocation(shell: AndroidShell, serial: string, ctx: CallContext): Promise<void> {
  await shell.exec(serial, "am stopservice io.appium.settings/.LocationService", ctx);
}

/**
 * The clipboard's text. Since Android 10 only the selected IME may read the clipboard, so the
 * app's own IME is selected for the broadcast and the user's put back afterwards.
 */
export async function clipboardText(
  shell: AndroidShell,
  serial: string,
  sdk: number,
  ctx: CallContext,
): Promise<string> {
  const previous = (await shell.run(serial, "settings get secure default_input_method", ctx)).trim();
  const switchIme = sdk >= 29 && previous !== APPIUM_IME;
  const read = "am broadcast -n io.appium.settings/.receivers.ClipboardReceiver -a io.appium.settings.clipboard.get";
  const restore = previous && previous !== "null" ? `; ime set ${quote(previous)} > /dev/null` : "";
  const command = switchIme
    ? `ime enable ${APPIUM_IME} > /dev/null && ime set ${APPIUM_IME} > /dev/null && ${read}${restore}`
    : read;
  const { out } = await shell.exec(serial, command, ctx);
  const m = /result=-1, data="([A-Za-z0-9+/=]*)"/.exec(out) ?? (/result=-1\s*$/m.test(out) ? ["", ""] : null);
  if (!m) throw helperFailed("io.appium.settings did not answer the clipboard request", out);
  return Buffer.from(m[1] ?? "", "base64").toString("utf8");
}

/**
 * The three animation scales (0 off, 1 on), with the owner's values read before the first change,
 * so disconnect can put them back.
 */
export class Animations {
  private readonly saved = new Map<string, (string | null)[]>();

  constructor(private readonly shell: AndroidShell) {}

  async set(serial: string, enabled: boolean, ctx: CallContext): Promise<void> {
    if (!this.saved.has(serial)) {
      const out = await this.shell.run(serial, ANIMATION_KEYS.map((k) => `settings get global ${k}`).join("; "), ctx);
      const values = out
        .split(/\r?\n/)
        .slice(0, 3)
        .map((v) => (v.trim() && v.trim() !== "null" ? v.trim() : null));
      this.saved.set(serial, values);
    }
    await this.put(
      serial,
      ANIMATION_KEYS.map(() => (enabled ? "1" : "0")),
      ctx,
    );
  }

  /** The owner's scales back (a key that did not exist is deleted again). */
  async restore(serial: string, ctx: CallContext): Promise<void> {
    const saved = this.saved.get(serial);
    if (!saved) return;
    this.saved.delete(serial);
    await this.put(serial, saved, ctx);
  }

  serials(): string[] {
    return [...this.saved.keys()];
  }

  private async put(serial: string, values: readonly (string | null)[], ctx: CallContext): Promise<void> {
    const command = ANIMATION_KEYS.map((k, i) =>
      values[i] === null || values[i] === undefined
        ? `settings delete global ${k} > /dev/null`
        : `settings put global ${k} ${quote(values[i] as string)}`,
    ).join(" && ");
    checkSettingsWrite(this.shell, serial, "animation", await this.shell.exec(serial, command, ctx));
  }
}
