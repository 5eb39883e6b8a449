import type { CallContext } from "../../src/driver/driver.ts";
import { AXE_INPUT_CEILING_MS, DESCRIBE_UI_CEILING_MS } from "./action-timings.ts";
import { platformError, runTool } from "./tool-process.ts";

/**
 * AXe (cameroncooke/AXe) for the UI tree and HID input. All coordinates are in points. Exit 64
 * is a usage error, exit 1 a runtime error with `Error: …` on stderr.
 */
export class AxePort {
  /** Set at connect to the AXe that probe.ts found. */
  constructor(public path: string) {}

  private async run(
    args: string[],
    ctx: CallContext,
    opts: { stdin?: string; ceilingMs?: number } = {},
  ): Promise<string> {
    const r = await runTool([this.path, ...args], ctx, {
      ceilingMs: opts.ceilingMs ?? AXE_INPUT_CEILING_MS,
      ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
    });
    const stdout = new TextDecoder().decode(r.stdout);
    if (r.code === 0) return stdout;
    const message = /Error: (.*)/.exec(r.stderr)?.[1]?.trim() ?? r.stderr.trim().slice(0, 300);
    if (/is not booted/.test(message)) throw platformError("ios_device_not_booted", true, message);
    if (/No keycode found for character/.test(message)) throw platformError("ios_text_unsupported", false, message);
    throw platformError(r.code === 64 ? "ios_axe_usage" : "ios_axe_failed", r.code !== 64, message);
  }

  /** What `axe --version` prints (probe.ts judges it). */
  version(ctx: CallContext): Promise<string> {
    return this.run(["--version"], ctx, { ceilingMs: 5_000 });
  }

  describeUi(udid: string, ctx: CallContext, ceilingMs = DESCRIBE_UI_CEILING_MS): Promise<string> {
    return this.run(["describe-ui", "--udid", udid], ctx, { ceilingMs });
  }

  /**
   * A physical tap, so switches flip too: `--tap-style physical` (AXe 1.7.0, PR #46) is a touch
   * down, a 0.1 s hold and a touch up (`HIDInteractor.performPhysicalTap`), which flips UISwitch and
   * SwiftUI Toggle controls that AXe's default simulator `tapAt` leaves alone (research note F5).
   * probe.ts uses no AXe older than 1.7.0 (MIN_AXE_VERSION), so every AXe here has the option.
   */
  async tap(udid: string, x: number, y: number, ctx: CallContext): Promise<void> {
    await this.run(["tap", "-x", String(x), "-y", String(y), "--tap-style", "physical", "--udid", udid], ctx);
  }

  async longPress(udid: string, x: number, y: number, seconds: number, ctx: CallContext): Promise<void> {
    await this.run(
      ["touch", "-x", String(x), "-y", String(y), "--down", "--up", "--delay", String(seconds), "--udid", udid],
      ctx,
      { ceilingMs: AXE_INPUT_CEILING_MS + seconds * 1000 },
    );
  }

  async swipe(
    udid: string,
    from: { x: number; y: number },
    to: { x: number; y: number },
    seconds: number,
    ctx: CallContext,
  ): Promise<void> {
    const args = [
      "swipe",
      "--start-x",
      String(from.x),
      "--start-y",
      String(from.y),
      "--end-x",
      String(to.x),
      "--end-y",
      String(to.y),
      "--duration",
      String(seconds),
      "--udid",
      udid,
    ];
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
