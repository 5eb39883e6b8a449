import type { CallContext } from "../../src/driver/driver.ts";
import { AXE_INPUT_CEILING_MS, DESCRIBE_UI_CEILING_MS } from "./action-timings.ts";
import { platformError, runTool } from "./tool-process.ts";

/** The lowest AXe with `batch` and `type --stdin`; older ones are treated as absent. */
export const MIN_AXE_VERSION = [1, 5, 0] as const;
/**
 * The first AXe with `tap --tap-style` (CHANGELOG v1.7.0, PR #46): `physical` is a touch down, a
 * 0.1 s hold and a touch up (`HIDInteractor.performPhysicalTap`), which flips UISwitch and SwiftUI
 * Toggle controls that AXe's default simulator `tapAt` leaves alone (research note F5).
 */
export const TAP_STYLE_VERSION = [1, 7, 0] as const;

const newer = (v: number[], min: readonly number[]) => {
  for (let i = 0; i < min.length; i++) if ((v[i] ?? 0) !== min[i]) return (v[i] ?? 0) > (min[i] as number);
  return true;
};

/**
 * AXe (cameroncooke/AXe) for the UI tree and HID input. All coordinates are in points. Exit 64
 * is a usage error, exit 1 a runtime error with `Error: …` on stderr.
 */
export class AxePort {
  /** The version `usable()` read, as numbers; null before (or when it was unusable). */
  private version: number[] | null = null;

  constructor(readonly path: string) {}

  private async run(args: string[], ctx: CallContext, opts: { stdin?: string; ceilingMs?: number } = {}): Promise<string> {
    const r = await runTool([this.path, ...args], ctx, { ceilingMs: opts.ceilingMs ?? AXE_INPUT_CEILING_MS, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}) });
    const stdout = new TextDecoder().decode(r.stdout);
    if (r.code === 0) return stdout;
    const message = /Error: (.*)/.exec(r.stderr)?.[1]?.trim() ?? r.stderr.trim().slice(0, 300);
    if (/is not booted/.test(message)) throw platformError("ios_device_not_booted", true, message);
    if (/No keycode found for character/.test(message)) throw platformError("ios_text_unsupported", false, message);
    throw platformError(r.code === 64 ? "ios_axe_usage" : "ios_axe_failed", r.code !== 64, message);
  }

  /** The version when it is at least MIN_AXE_VERSION, else null (so the device falls back). */
  async usable(ctx: CallContext): Promise<string | null> {
    try {
      const out = await this.run(["--version"], ctx, { ceilingMs: 5_000 });
      const m = /(\d+)\.(\d+)\.(\d+)/.exec(out);
      const v = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
      this.version = v && newer(v, MIN_AXE_VERSION) ? v : null;
      return this.version ? `${m?.[1]}.${m?.[2]}.${m?.[3]}` : null;
    } catch {
      return null;
    }
  }

  describeUi(udid: string, ctx: CallContext): Promise<string> {
    return this.run(["describe-ui", "--udid", udid], ctx, { ceilingMs: DESCRIBE_UI_CEILING_MS });
  }

  /**
   * A physical tap, so switches flip too: `--tap-style physical` from 1.7.0 on; before that the
   * same touch down, 0.1 s hold and touch up through `touch` (the workaround of a public "Agent
   * Notes for AXe": `touch --down --up --delay 0.1`), since those versions reject the option.
   */
  async tap(udid: string, x: number, y: number, ctx: CallContext): Promise<void> {
    if (this.version && newer(this.version, TAP_STYLE_VERSION)) await this.run(["tap", "-x", String(x), "-y", String(y), "--tap-style", "physical", "--udid", udid], ctx);
    else await this.run(["touch", "-x", String(x), "-y", String(y), "--down", "--up", "--delay", "0.1", "--udid", udid], ctx);
  }

  async longPress(udid: string, x: number, y: number, seconds: number, ctx: CallContext): Promise<void> {
    await this.run(["touch", "-x", String(x), "-y", String(y), "--down", "--up", "--delay", String(seconds), "--udid", udid], ctx, { ceilingMs: AXE_INPUT_CEILING_MS + seconds * 1000 });
  }

  async swipe(udid: string, from: { x: number; y: number }, to: { x: number; y: number }, seconds: number, ctx: CallContext): Promise<void> {
    const args = ["swipe", "--start-x", String(from.x), "--start-y", String(from.y), "--end-x", String(to.x), "--end-y", String(to.y), "--duration", String(seconds), "--udid", udid];
    await this.run(args, ctx, { ceilingMs: AXE_INPUT_CEILING_MS + seconds * 1000 });
  }

  /** Types US-keyboard text, always through stdin: no text, secret or not, is put in an argv. */
  async type(udid: string, text: string, ctx: CallContext): Promise<void> {
    await this.run(["type", "--stdin", "--udid", udid], ctx, { stdin: text });
  }

  async key(udid: string, hidCode: number, ctx: CallContext): Promise<void> {
    await this.run(["key", String(hidCode), "--udid", udid], ctx);
  }

  async keyCombo(udid: string, modifiers: number[], key: number, ctx: CallContext): Promise<void> {
    await this.run(["key-combo", "--modifiers", modifiers.join(","), "--key", String(key), "--udid", udid], ctx);
  }

  async button(udid: string, name: "home" | "lock" | "side-button" | "siri", ctx: CallContext): Promise<void> {
    await this.run(["button", name, "--udid", udid], ctx);
  }
}
