/**
 * The only file that imports node-simctl. It runs discovery and app lifecycle; what node-simctl
 * lacks (stdin for the pasteboard, a way to stop a screenshot) goes through runTool. Its exec()
 * takes no abort signal, so each call is bounded by a timeout derived from the deadline.
 */
import { Simctl } from "node-simctl";
import { type CallContext, abortable, budgetMs } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";
import { type SimDevice, parseDeviceList, simctlFailure } from "./parse/simctl.ts";
import { XCODE_NOT_SELECTED, xcodeNotSelected } from "./probe.ts";
import { platformError, runTool } from "./tool-process.ts";

const CEILING_MS = 30_000;

/**
 * `simctl io … screenshot` before the Simulator's display is up: "Timeout waiting for screen
 * surfaces", exit 60 (callstack/agent-device retries it, src/platforms/ios/screenshot.ts). Tried
 * twice more after these pauses, then typed.
 */
const SCREEN_SURFACES = /Timeout waiting for screen surfaces/;
const SCREEN_SURFACES_RETRY_MS = [500, 1_000] as const;

/** At least 1 ms: node-simctl reads a timeout of 0 as "none". */
const budget = (ctx: CallContext, ceiling = CEILING_MS) => Math.max(1, budgetMs(ctx, ceiling));

function mapError(err: unknown, udid: string | null): DriverError {
  if (err instanceof DriverError) return err;
  const e = err as { stderr?: string; message?: string; code?: unknown };
  const text = `${e.stderr ?? ""}\n${e.message ?? ""}`;
  if (XCODE_NOT_SELECTED.test(text)) return xcodeNotSelected(e.stderr || text);
  if (/has not been found in PATH|ENOENT/.test(text))
    return platformError(
      "ios_xcrun_not_found",
      false,
      text.trim(),
      "xcrun was not found: install Xcode and its command-line tools (xcode-select --install)",
    );
  if (/timed out|ETIMEDOUT/i.test(text)) return new DriverError("driver_timed_out");
  const f = simctlFailure(e.stderr ?? "");
  if (f.kind === "notBooted")
    return platformError(
      "ios_device_not_booted",
      true,
      f.message,
      `simulator ${udid} is not booted: boot it (xcrun simctl boot ${udid}) or open it in Simulator.app`,
    );
  if (f.kind === "invalidDevice") return platformError("ios_device_missing", true, f.message);
  if (f.kind === "appNotRunning") return platformError("ios_app_not_running", false, f.message);
  return platformError("ios_simctl_failed", true, f.message || text.trim().slice(0, 300));
}

export class SimctlPort {
  private readonly simctl: Simctl;

  constructor(readonly xcrunPath: string | null) {
    this.simctl = new Simctl({ xcrun: { path: xcrunPath }, execTimeout: CEILING_MS, logErrors: false });
  }

  private async exec(subcommand: string, args: string[], ctx: CallContext, opts: { udid?: string } = {}) {
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    try {
      const run = this.simctl.exec(subcommand, { args, timeout: budget(ctx), logErrors: false });
      // The call keeps running after an abort (no signal in node-simctl); its timeout ends it.
      return (await abortable(run, ctx)) as { stdout: string; stderr: string };
    } catch (err) {
      throw mapError(err, opts.udid ?? null);
    }
  }

  /** Every simulator, unavailable ones included, from the raw JSON (not getDevices, which drops them). */
  async list(ctx: CallContext): Promise<SimDevice[]> {
    const { stdout } = await this.exec("list", ["devices", "--json"], ctx);
    try {
      return parseDeviceList(stdout);
    } catch (err) {
      throw platformError("ios_simctl_malformed_output", false, (err as Error).message);
    }
  }

  /**
   * `io <udid> screenshot --type=png -`: PNG bytes on stdout. Spawned by runTool, not node-simctl:
   * the screenshot is killed when its observation fails elsewhere or is cancelled, rather than
   * running on after the call.
   */
  async screenshot(udid: string, ctx: CallContext): Promise<Uint8Array> {
    for (let attempt = 0; ; attempt++) {
      const r = await runTool([this.xcrun(), "simctl", "io", udid, "screenshot", "--type=png", "-"], ctx, {
        ceilingMs: CEILING_MS,
      });
      if (r.code === 0) return r.stdout;
      if (!SCREEN_SURFACES.test(r.stderr)) throw mapError({ stderr: r.stderr }, udid);
      const wait = SCREEN_SURFACES_RETRY_MS[attempt];
      if (wait === undefined || (ctx.deadline !== null && Date.now() + wait >= ctx.deadline))
        throw platformError(
          "ios_screen_surfaces_timeout",
          true,
          r.stderr.trim().slice(0, 300),
          `the simulator's display is not up yet (simctl: Timeout waiting for screen surfaces, ${attempt + 1} tries): wait for the boot to finish or open Simulator.app, then observe again`,
        );
      ctx.log.info({ udid, attempt: attempt + 1 }, "simctl screenshot: Timeout waiting for screen surfaces; retrying");
      await pause(wait, ctx);
    }
  }

  /** `xcrun xcodebuild -version`: which Xcode is selected (probe.ts parses it). */
  async xcodeVersion(ctx: CallContext): Promise<string> {
    const r = await runTool([this.xcrun(), "xcodebuild", "-version"], ctx, { ceilingMs: 10_000 });
    if (r.code !== 0) throw mapError({ stderr: r.stderr }, null);
    return new TextDecoder().decode(r.stdout);
  }

  async launch(udid: string, bundleId: string, ctx: CallContext): Promise<void> {
    await this.exec("launch", [udid, bundleId], ctx, { udid });
  }

  async terminate(udid: string, bundleId: string, ctx: CallContext): Promise<void> {
    try {
      await this.exec("terminate", [udid, bundleId], ctx, { udid });
    } catch (err) {
      // Terminating an app that is not running leaves it not running: done.
      if (!(err instanceof DriverError && err.platformCode === "ios_app_not_running")) throw err;
    }
  }

  async openUrl(udid: string, url: string, ctx: CallContext): Promise<void> {
    await this.exec("openurl", [udid, url], ctx, { udid });
  }

  async setAppearance(udid: string, mode: "light" | "dark", ctx: CallContext): Promise<void> {
    await this.exec("ui", [udid, "appearance", mode], ctx, { udid });
  }

  /**
   * `getenv <udid> <name>`: a variable of the device's launchd environment, or null when it is not
   * set (simctl then exits 0 with stderr, as node-simctl's getEnv reads it).
   */
  async getenv(udid: string, name: string, ctx: CallContext): Promise<string | null> {
    const { stdout, stderr } = await this.exec("getenv", [udid, name], ctx, { udid });
    return stderr.trim() !== "" || stdout.trim() === "" ? null : stdout.trim();
  }

  /** Puts text on the simulator's pasteboard through stdin (node-simctl's setPasteboard would too, but gives no abort). */
  async pbcopy(udid: string, text: string, ctx: CallContext): Promise<void> {
    const r = await runTool([this.xcrun(), "simctl", "pbcopy", udid], ctx, { stdin: text, ceilingMs: 10_000 });
    if (r.code !== 0) throw mapError({ stderr: r.stderr }, udid);
  }

  private xcrun(): string {
    const xcrun = this.xcrunPath ?? Bun.which("xcrun");
    if (!xcrun)
      throw platformError(
        "ios_xcrun_not_found",
        false,
        "xcrun is not on PATH",
        "xcrun was not found: install Xcode and its command-line tools (xcode-select --install)",
      );
    return xcrun;
  }
}
