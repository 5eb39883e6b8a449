/**
 * Android's shell: one adb shell command with the exit-code trailer, quoting and the stdin-fed
 * secret script, kept together because each depends on the others' framing.
 */
import { type CallContext, abortable } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pngStart } from "../../src/driver/png.ts";
import { type AdbkitPort, platformError } from "./adbkit-port.ts";
import { inputNotPermitted, isInjectionDenied } from "./input-probe.ts";
import { KEYCODES } from "./parse/keys.ts";
import { parseAmStartWait, parseComponentName, parseQueryActivities, parseResolveActivity } from "./parse/launch.ts";
import { exitTrailer, inputTextChunks, isAsciiTypable, quote, splitExit } from "./parse/shell.ts";
import { type DumpedTree, DUMP_ATTEMPT_MS, UiDumper } from "./ui-dump.ts";

const MARKER = "__devicerail_exit_";
export { DUMP_ATTEMPT_MS };
/** Keep one adb shell command well under old adbd's 4 KiB service-name limit. */
const MAX_COMMAND_BYTES = 3_000;
const IEND = [0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];
/**
 * Reads one line from stdin and types it: the secret is never part of a command line sent over
 * adb. On the phone it is necessarily an argument of the `input` process the script starts
 * (stock Android has no input command that reads stdin).
 */
const SECRET_SCRIPT = 'IFS= read -r v && input text "$v"';
/** What Android's `cmd` prints when a service has no shell command (Binder's default). */
const NO_SHELL_COMMAND = /No shell command implementation|Can't find service|Unknown command/i;

/**
 * Non-ASCII text goes through the clipboard where `cmd clipboard` answers. On stock Android it
 * never does: ClipboardService has no shell command on any release up to 16 (Binder's default
 * prints "No shell command implementation." and exits 0; callstack/agent-device PR #2676, #1645),
 * and `input text` takes ASCII only, so only an on-device helper can type it.
 */
const TEXT_UNSUPPORTED_MESSAGE =
  "stock Android offers no shell path for non-ASCII text: `input text` types ASCII only and the clipboard service has no shell command on any Android release " +
  '(`cmd clipboard` answers "No shell command implementation."). Appium\'s io.appium.settings types any text through its Unicode IME: install it with ' +
  "`devicerail android helper install` (and leave DEVICERAIL_ANDROID_HELPER at use or install); without it, type ASCII text only (printable ASCII, newline and tab)";

const textUnsupported = () =>
  new DriverError("platform_error", {
    platformCode: "android_text_unsupported",
    retryable: false,
    message: TEXT_UNSUPPORTED_MESSAGE,
  });

/** The component of the platform's "open with" chooser (AOSP ResolverActivity, in package `android`). */
const RESOLVER_ACTIVITY = "com.android.internal.app.ResolverActivity";

const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const remoteError = (what: string, out: string) =>
  platformError("android_mutation_remote_error", false, `${what}: ${out.slice(0, 500)}`);
const launchInvalid = (what: string, r: { out: string; code: number }) =>
  platformError("android_app_launch_invalid_result", true, `${what} exited ${r.code}: ${r.out.slice(0, 500)}`);

/**
 * Shell commands on one device with the checks every caller needs: arguments quoted, an exit
 * status trailer (legacy shell has none), a missing trailer read as a device that went away,
 * and UI dumps serialised per device (uiautomator cannot run twice at once).
 */
export class AndroidShell {
  private readonly dumps = new Map<string, Promise<unknown>>();
  /** `ro.product.manufacturer` per serial, read at connect: an input refusal names its setting. */
  readonly manufacturers = new Map<string, string>();
  private readonly dumper: UiDumper;

  constructor(
    private readonly port: AdbkitPort,
    private readonly whyUnusable: (serial: string) => DriverError | null,
    dumpAttemptMs = DUMP_ATTEMPT_MS,
    nullRootBackoffMs?: readonly number[],
  ) {
    this.dumper = new UiDumper(this, dumpAttemptMs, nullRootBackoffMs);
  }

  /** Runs `command`, returning its output and exit status. */
  async exec(
    serial: string,
    command: string,
    ctx: CallContext,
    opts: { stdin?: string; ceilingMs?: number } = {},
  ): Promise<{ out: string; code: number }> {
    const raw = decode(await this.port.shell(serial, `${command}${exitTrailer(MARKER)}`, ctx, opts));
    const split = splitExit(raw, MARKER);
    if (!split) throw await this.lost(serial, ctx);
    return { out: split.body, code: split.exitCode };
  }

  /** Output of a command that must exit 0. */
  async run(serial: string, command: string, ctx: CallContext, opts: { ceilingMs?: number } = {}): Promise<string> {
    const { out, code } = await this.exec(serial, command, ctx, opts);
    if (code !== 0) throw remoteError(`${command.split(" ")[0]} exited ${code}`, out);
    return out;
  }

  /** The typed reason output stopped early: the device is gone, offline, or the stream broke. */
  private async lost(serial: string, ctx: CallContext): Promise<DriverError> {
    if (ctx.signal.aborted) return new DriverError("driver_cancelled");
    try {
      const entry = (await this.port.listDevices({ ...ctx, deadline: Date.now() + 3_000 })).find(
        (e) => e.serial === serial,
      );
      if (!entry) return platformError("android_device_missing", true, `${serial} disappeared during a command`);
      if (entry.state !== "device")
        return platformError(
          entry.state === "offline" ? "android_device_offline" : "android_device_state_unsupported",
          true,
          `${serial} is ${entry.state}`,
        );
    } catch {}
    return (
      this.whyUnusable(serial) ??
      platformError("android_adb_read_failed", true, `the output of a command on ${serial} ended early`)
    );
  }

  /** One `input` command; it prints nothing when it worked. */
  input(serial: string, args: string[], ctx: CallContext): Promise<void> {
    return this.inputAll(serial, [args], ctx);
  }

  async inputAll(serial: string, calls: string[][], ctx: CallContext): Promise<void> {
    const command = calls.map((args) => ["input", ...args].map(quote).join(" ")).join(" && ");
    const { out, code } = await this.exec(serial, command, ctx);
    if (isInjectionDenied(out)) throw inputNotPermitted(this.manufacturers.get(serial));
    if (code !== 0 || /error|exception|usage:/i.test(out)) throw remoteError("input failed", out);
  }

  async checked(serial: string, argv: string[], ctx: CallContext): Promise<string> {
    return this.checkedAll(serial, [argv], ctx);
  }

  async checkedAll(serial: string, calls: string[][], ctx: CallContext): Promise<string> {
    return this.run(serial, calls.map((argv) => argv.map(quote).join(" ")).join(" && "), ctx);
  }

  /**
   * `screencap -p` (of `displayId` on a phone with several displays); a PNG that stops before IEND
   * means the device went away mid-transfer. Text in front of the image (what a ROM prints on
   * stdout) is dropped: the image starts at the PNG signature.
   */
  async screenshot(serial: string, ctx: CallContext, displayId: string | null = null): Promise<Uint8Array> {
    const raw = await this.port.screencap(serial, ctx, displayId);
    const start = pngStart(raw);
    const png = start > 0 ? raw.subarray(start) : raw;
    const tail = png.subarray(png.length - IEND.length);
    if (png.length < 45 || !IEND.every((b, i) => tail[i] === b)) {
      const why = await this.lost(serial, ctx);
      throw why.platformCode === "android_adb_read_failed"
        ? platformError("android_adb_malformed_png", true, `screencap gave ${png.length} bytes without a complete PNG`)
        : why;
    }
    return png;
  }

  /**
   * The UI tree (ui-dump.ts: per-attempt deadline, the retries real phones need, a cut-off dump
   * killed on the phone), one dump at a time per device: uiautomator cannot run twice at once.
   */
  dumpUi(serial: string, ctx: CallContext): Promise<DumpedTree> {
    const previous = this.dumps.get(serial) ?? Promise.resolve();
    // The queue moves on only when a dump has really ended (and a cut-off one was killed); a
    // caller that aborts while it waits its turn is answered at once (its turn then opens no stream).
    const next = previous.catch(() => {}).then(() => this.dumper.dump(serial, ctx));
    this.dumps.set(serial, next);
    const done = next.finally(() => {
      if (this.dumps.get(serial) === next) this.dumps.delete(serial);
    });
    return abortable(done, ctx);
  }

  /**
   * Any Unicode text into the focused field. Printable ASCII goes through `input text` (quoted,
   * spaces as %s); newline and tab as key events; anything else through the clipboard and a
   * paste key, where the device's clipboard service has a shell command. Otherwise a typed error
   * says why, rather than letting `input` drop or garble characters.
   */
  async typeText(serial: string, text: string, ctx: CallContext): Promise<"input" | "clipboard" | "mixed"> {
    // Before anything is typed: a refusal must not leave half of the text in the field.
    if (!isAsciiTypable(text.replace(/[\n\t]/g, ""))) await this.checkClipboard(serial, ctx);
    const commands: string[] = [];
    let usedClipboard = false;
    let usedInput = false;
    for (const run of text.match(/[\u0020-\u007e]+|\n|\t|[^\u0020-\u007e\n\t]+/gu) ?? []) {
      if (run === "\n") commands.push(`input keyevent ${KEYCODES.enter}`);
      else if (run === "\t") commands.push(`input keyevent ${KEYCODES.tab}`);
      else if (isAsciiTypable(run)) {
        usedInput = true;
        for (const chunk of inputTextChunks(run)) commands.push(`input text ${quote(chunk)}`);
      } else {
        usedClipboard = true;
        const points = [...run];
        for (let i = 0; i < points.length; i += 500)
          commands.push(
            `cmd clipboard set text ${quote(points.slice(i, i + 500).join(""))}`,
            `input keyevent ${KEYCODES.paste}`,
          );
      }
    }
    for (const batch of batches(commands)) {
      const { out, code } = await this.exec(serial, batch.join(" && "), ctx);
      if (NO_SHELL_COMMAND.test(out)) throw textUnsupported();
      if (isInjectionDenied(out)) throw inputNotPermitted(this.manufacturers.get(serial));
      if (code !== 0 || /error|exception/i.test(out)) throw remoteError("typing failed", out);
    }
    return usedClipboard ? (usedInput ? "mixed" : "clipboard") : "input";
  }

  private readonly clipboard = new Map<string, boolean>();

  /** Whether `cmd clipboard` works on this device, asked once per device. */
  private async checkClipboard(serial: string, ctx: CallContext): Promise<void> {
    let ok = this.clipboard.get(serial);
    if (ok === undefined) {
      const { out, code } = await this.exec(serial, "cmd clipboard set text ''", ctx);
      ok = code === 0 && !NO_SHELL_COMMAND.test(out);
      this.clipboard.set(serial, ok);
    }
    if (!ok) throw textUnsupported();
  }

  /** A protected value: only on the stdin of the fixed SECRET_SCRIPT; its output is never logged. */
  async typeSecret(serial: string, secret: string, ctx: CallContext): Promise<void> {
    if (!/^[\u0020-\u007e]{1,1024}$/.test(secret) || secret.includes("%s"))
      throw new DriverError("platform_error", {
        platformCode: "android_secret_unsupported",
        retryable: false,
        message: "a protected value on Android must be 1 to 1024 printable ASCII characters without %s",
      });
    const { out, code } = await this.exec(serial, SECRET_SCRIPT, ctx, { stdin: `${secret}\n` });
    // The refusal's text names no argument, so matching it shows nothing of the secret.
    if (isInjectionDenied(out)) throw inputNotPermitted(this.manufacturers.get(serial));
    if (code !== 0) throw platformError("android_adb_protected_operation_failed", true, `secret script exited ${code}`);
  }

  /** Moves to the end of the field and deletes backwards, a little more than its known length. */
  async clearFocused(serial: string, length: number, ctx: CallContext): Promise<void> {
    const count = Math.min(4096, length > 0 ? length + 4 : 64);
    const dels = Array.from({ length: count }, () => String(KEYCODES.delete));
    await this.inputAll(
      serial,
      [
        ["keyevent", String(KEYCODES.moveEnd)],
        ["keyevent", ...dels],
      ],
      ctx,
    );
  }

  /**
   * Starts the package's MAIN/LAUNCHER activity for the current user (or `activity`, when the
   * caller names one) and returns only once `am start -W` reports the launch complete, so an
   * observation taken next shows the app. The component, from the device or the caller, is
   * checked against the name patterns before it goes into a command line (quoted, like every
   * argument).
   */
  async launch(serial: string, packageName: string, ctx: CallContext, activity?: string): Promise<void> {
    let component: { packageName: string; activity: string } | null;
    if (activity !== undefined) {
      component = parseComponentName(`${packageName}/${activity}`);
      if (!component)
        throw platformError("android_app_launch_error", false, `${activity} is not an activity name of ${packageName}`);
    } else component = await this.launcherOf(serial, packageName, ctx);
    const started = await this.exec(
      serial,
      ["am", "start", "-W", "--user", "current", "-n", `${component.packageName}/${component.activity}`]
        .map(quote)
        .join(" "),
      ctx,
    );
    const report = parseAmStartWait(started.out);
    if (!report) throw launchInvalid("am start -W", started);
    if (report.kind === "error")
      throw platformError("android_app_launch_error", false, `am start: ${report.message.slice(0, 500)}`);
    if (report.kind === "timeout")
      throw platformError(
        "android_app_launch_timeout",
        true,
        `${packageName} did not finish launching after ${report.waitTimeMs} ms`,
      );
  }

  /** The package's one launcher activity; several without a default are a typed error listing them. */
  private async launcherOf(
    serial: string,
    packageName: string,
    ctx: CallContext,
  ): Promise<{ packageName: string; activity: string }> {
    const intent = [
      "--user",
      "current",
      "-a",
      "android.intent.action.MAIN",
      "-c",
      "android.intent.category.LAUNCHER",
      packageName,
    ];
    const resolved = await this.exec(
      serial,
      ["cmd", "package", "resolve-activity", "--brief", ...intent].map(quote).join(" "),
      ctx,
    );
    const found = parseResolveActivity(resolved.out);
    if (!found) throw launchInvalid("resolve-activity", resolved);
    if (found.kind === "none")
      throw platformError(
        "android_app_launch_error",
        false,
        `${packageName} is not installed for the current user or has no launcher activity`,
      );
    if (found.packageName === packageName) return found;
    // The platform's chooser: several launcher activities and no default among them
    // (appium/appium#17128). Which one is meant is the caller's choice, so list them.
    if (found.packageName === "android" && found.activity === RESOLVER_ACTIVITY) {
      const listed = await this.exec(
        serial,
        ["cmd", "package", "query-activities", "--brief", "--components", ...intent].map(quote).join(" "),
        ctx,
      );
      const all = parseQueryActivities(listed.out);
      if (!all) throw launchInvalid("query-activities", listed);
      const own = all.filter((c) => c.packageName === packageName);
      if (own.length === 1) return own[0] as { packageName: string; activity: string };
      if (own.length > 1)
        throw new DriverError("platform_error", {
          platformCode: "android_app_launch_ambiguous",
          retryable: false,
          message:
            `${packageName} has ${own.length} launcher activities and no default among them: ${own.map((c) => c.activity).join(", ")}. ` +
            `Launch one by name with the launch action's activity argument, e.g. {"packageName":"${packageName}","activity":"${own[0]?.activity}"} (CLI: devicerail launch ${packageName} --activity ${own[0]?.activity})`,
        });
    }
    throw platformError(
      "android_app_launch_error",
      false,
      `${packageName} resolves to ${found.packageName}/${found.activity}`,
    );
  }

  async openUrl(serial: string, url: string, ctx: CallContext): Promise<void> {
    const { out, code } = await this.exec(
      serial,
      ["am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url].map(quote).join(" "),
      ctx,
    );
    if (/^Error|unable to resolve Intent/im.test(out))
      throw platformError("android_app_launch_error", false, "no app handles this URL");
    if (code !== 0) throw platformError("android_app_launch_invalid_result", true, out.slice(0, 500));
  }
}

/** Groups commands so that no single adb shell command line grows too long. */
function batches(commands: string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const c of commands) {
    const bytes = new TextEncoder().encode(c).length + 4;
    if (current.length > 0 && size + bytes > MAX_COMMAND_BYTES) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(c);
    size += bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}
