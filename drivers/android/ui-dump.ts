/**
 * One UI tree from `uiautomator dump`, with what real phones need around it (research note
 * android-real-phones.md §2.3, §4 #3, #5, #6):
 *
 * - an attempt deadline above uiautomator's own idle wait (`waitForIdle(1000, 1000 * 10)` in AOSP
 *   DumpCommand.java, plus the VM start), so the phone's "could not get idle state" arrives
 *   before our deadline instead of racing it;
 * - after "could not get idle state" one retry with `--compressed`, which dumps screens that keep
 *   animating (mobile-next/mobilewright#117, openatx/uiautomator2#818); the tree is then the
 *   compressed one (layout-only views left out) and says so;
 * - `null root node` retried several times with back-off within the caller's deadline
 *   (mobile-mcp retries it up to 10 times);
 * - the dump started as `sh -c 'echo $$ > <pidfile>; exec uiautomator dump …'`, so its pid is
 *   known; a dump cut off by our deadline or a cancel is killed by that pid from a fresh shell,
 *   since adbd does not end a legacy `shell:` command when its stream closes and the orphan would
 *   keep the accessibility bridge registered ("already registered!") for the next dump;
 * - a busy bridge (another UiAutomation client) reported as `android_ui_automation_busy`, naming
 *   the holder when `ps -A` shows one; KXmlSerializer's "Illegal character" as a typed error that
 *   is not retried, since that screen can never be dumped by uiautomator.
 */
import { type CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";
import type { AndroidShell } from "./android-shell.ts";
import { platformError } from "./adbkit-port.ts";
import { type AndroidUiTree, dumpFailure, parseUiautomatorDump } from "./parse/uiautomator.ts";
import { holderIn, listProcesses } from "./ui-bridge.ts";

/** One uiautomator attempt: its 10 s idle wait, the VM start (1–3 s on old phones) and the dump itself. */
export const DUMP_ATTEMPT_MS = 15_000;
/** Back-off before each retry of a `null root node` (several, as on real phones ~1 dump in 5 fails). */
export const NULL_ROOT_BACKOFF_MS: readonly number[] = [250, 500, 1_000, 1_000, 1_500];
/** After an animating screen needed `--compressed`, later dumps start with it for this long (no 10 s wait each time). */
const PREFER_COMPRESSED_MS = 60_000;

export interface DumpedTree extends AndroidUiTree {
  /** True when the tree came from `uiautomator dump --compressed` (layout-only views left out). */
  compressed: boolean;
}

/** A typed failure with a message the user can act on (written as literals, so docs/protocol/errors.md lists each code). */
const failure = (o: { platformCode: string; retryable: boolean; message: string }) =>
  new DriverError("platform_error", o);

const IDLE = /ERROR: could not get idle state\./;
const NULL_ROOT = /null root node returned by UiTestAutomationBridge/;
const BUSY = /UiAutomationService \S*already registered!/;
const ILLEGAL = /java\.lang\.IllegalArgumentException: Illegal character \(([^)]{1,12})\)/;

type Attempt =
  | { kind: "tree"; tree: AndroidUiTree }
  | { kind: "idle" | "nullRoot" | "busy" | "transient"; message: string }
  | { kind: "illegal"; char: string };

export class UiDumper {
  private files = 0;
  private readonly preferCompressedUntil = new Map<string, number>();

  constructor(
    private readonly shell: AndroidShell,
    private readonly attemptMs = DUMP_ATTEMPT_MS,
    private readonly backoffMs: readonly number[] = NULL_ROOT_BACKOFF_MS,
  ) {}

  async dump(serial: string, ctx: CallContext): Promise<DumpedTree> {
    // Cancelled while it waited its turn: no stream is opened (nor a kill sent for it).
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    let compressed = (this.preferCompressedUntil.get(serial) ?? 0) > Date.now();
    let nullRoots = 0;
    let transients = 0;
    let busyRetried = false;
    let idleSeen = false;
    for (;;) {
      const a = await this.attempt(serial, compressed, ctx);
      switch (a.kind) {
        case "tree":
          if (compressed && idleSeen) this.preferCompressedUntil.set(serial, Date.now() + PREFER_COMPRESSED_MS);
          return { ...a.tree, compressed };
        case "illegal":
          throw failure({
            platformCode: "android_ui_dump_illegal_character",
            retryable: false,
            message: `uiautomator cannot dump this screen: a text on it holds a character its XML writer refuses (Illegal character (${a.char}): a NUL or half of an emoji), so every uiautomator dump of this screen fails. Leave the screen (or change that text) to get a UI tree; screenshots still work`,
          });
        case "idle":
          idleSeen = true;
          if (!compressed) {
            compressed = true;
            continue;
          }
          this.preferCompressedUntil.delete(serial);
          throw failure({
            platformCode: "android_ui_dump_idle_timeout",
            retryable: true,
            message:
              "uiautomator could not dump the screen: it never went idle for 10 s (an animation, a video or a loading placeholder keeps it busy), even with --compressed. Wait for the screen to settle, or turn the three animation scales off in Developer options, then observe again",
          });
        case "nullRoot": {
          const wait = this.backoffMs[nullRoots];
          // Several retries, but never past the caller's deadline (a last attempt needs about a second).
          if (wait === undefined || (ctx.deadline !== null && Date.now() + wait + 1_000 > ctx.deadline))
            throw failure({
              platformCode: "android_ui_dump_failed",
              retryable: true,
              message: `uiautomator found no active window ${nullRoots + 1} times in a row (null root node): the screen is off, locked or changing. Wake and unlock the phone, then observe again`,
            });
          nullRoots++;
          await pause(wait, ctx);
          continue;
        }
        case "busy":
          // Our own dump from an earlier cut-off call may still hold it: that one we can end.
          if (!busyRetried && (await this.killOrphan(serial, ctx))) {
            busyRetried = true;
            continue;
          }
          throw await this.busy(serial, ctx);
        case "transient":
          if (transients++ >= 1)
            throw failure({
              platformCode: "android_ui_dump_failed",
              retryable: true,
              message: `uiautomator failed twice: ${a.message}`,
            });
      }
    }
  }

  /** The pid file of the dump that was cut off last, per device: killed before the next dump runs. */
  private readonly orphans = new Map<string, string>();

  private async attempt(serial: string, compressed: boolean, ctx: CallContext): Promise<Attempt> {
    const base = `/data/local/tmp/devicerail-ui-${process.pid}-${++this.files}`;
    const file = `${base}.xml`;
    const pidFile = `${base}.pid`;
    const inner = `echo $$ > ${pidFile}; exec uiautomator dump${compressed ? " --compressed" : ""} ${file}`;
    const command = `rm -f ${file} ${pidFile}; sh -c '${inner}' 2>&1; cat ${file} 2>/dev/null; rm -f ${file} ${pidFile}`;
    const deadline = Math.min(ctx.deadline ?? Number.POSITIVE_INFINITY, Date.now() + this.attemptMs);
    let out: string;
    try {
      out = (await this.shell.exec(serial, command, { ...ctx, deadline })).out;
    } catch (err) {
      const cut =
        err instanceof DriverError && (err.driverCode === "driver_timed_out" || err.driverCode === "driver_cancelled");
      let stopped = false;
      if (cut) {
        // The phone keeps running it (no hang-up on a legacy shell): end it before anything else dumps.
        this.orphans.set(serial, pidFile);
        stopped = await this.killOrphan(serial, ctx);
      }
      // Our own attempt deadline, not the caller's: uiautomator hung.
      if (
        err instanceof DriverError &&
        err.driverCode === "driver_timed_out" &&
        (ctx.deadline === null || Date.now() < ctx.deadline)
      )
        throw failure({
          platformCode: "android_ui_dump_timeout",
          retryable: true,
          message: `uiautomator gave no tree within ${this.attemptMs} ms; ${stopped ? "devicerail stopped that dump on the phone" : "that dump may still be running on the phone and hold the accessibility bridge for a while"}. Observe again`,
        });
      throw err;
    }
    return classify(out);
  }

  /** Kills the cut-off dump by the pid it wrote, from a fresh shell; true when one was there. */
  private async killOrphan(serial: string, ctx: CallContext): Promise<boolean> {
    const pidFile = this.orphans.get(serial);
    if (!pidFile) return false;
    // Not under the caller's signal: a cancelled call must still end what it left running.
    const own: CallContext = { signal: new AbortController().signal, deadline: Date.now() + 5_000, log: ctx.log };
    for (let tries = 0; ; tries++) {
      const r = await this.shell
        .exec(serial, `read p < ${pidFile} && kill $p && rm -f ${pidFile}`, own)
        .catch(() => null);
      if (r?.code === 0) {
        this.orphans.delete(serial);
        ctx.log.debug({ serial }, "stopped a cut-off uiautomator dump on the phone");
        return true;
      }
      // Cut off at once, the shell may not have written its pid yet: look once more. (Or the
      // dump ended by itself and took its pid file along: then there is nothing to stop.)
      if (tries === 1) return false;
      await pause(300, own);
    }
  }

  private async busy(serial: string, ctx: CallContext): Promise<DriverError> {
    const ps = await listProcesses(this.shell, serial, {
      ...ctx,
      deadline: Math.min(ctx.deadline ?? Number.POSITIVE_INFINITY, Date.now() + 5_000),
    }).catch(() => null);
    const holder = ps === null ? null : holderIn(ps);
    return failure({
      platformCode: "android_ui_automation_busy",
      retryable: true,
      message: holder
        ? `the phone's accessibility bridge (UiAutomation) is held by ${holder.tool} (process ${holder.name}, pid ${holder.pid}); only one client can use it at a time. Stop ${holder.tool} (or run: ${holder.stop}), then observe again`
        : "the phone's accessibility bridge (UiAutomation) is held by another tool (Appium UiAutomator2, Maestro, uiautomator2/ATX, monkey or a uiautomator run); only one client can use it at a time. Stop that tool, then observe again",
    });
  }
}

function classify(out: string): Attempt {
  const problem = dumpFailure(out);
  if (!problem) {
    try {
      return { kind: "tree", tree: parseUiautomatorDump(out) };
    } catch (err) {
      throw platformError("android_adb_malformed_observation", false, `uiautomator output: ${(err as Error).message}`);
    }
  }
  // What uiautomator printed, not what the screen says: only the text before any XML.
  const xml = out.indexOf("<?xml");
  const printed = xml < 0 ? out : out.slice(0, xml);
  const illegal = ILLEGAL.exec(printed);
  if (illegal) return { kind: "illegal", char: illegal[1] as string };
  if (BUSY.test(printed)) return { kind: "busy", message: problem.message };
  if (IDLE.test(printed)) return { kind: "idle", message: problem.message };
  if (NULL_ROOT.test(printed)) return { kind: "nullRoot", message: problem.message };
  if (!problem.transient)
    throw failure({
      platformCode: "android_ui_dump_failed",
      retryable: true,
      message: `uiautomator: ${problem.message}`,
    });
  return { kind: "transient", message: problem.message };
}
