/**
 * The simulated Android device behind FakeAdbd: properties, files, screen, installed apps with
 * scriptable screens, a command registry run through a small `sh`, logs for assertions, and
 * fault switches. It knows nothing about the transport beyond the AdbdDevice interface.
 */
import type { AdbdDevice, ServiceKind, ServiceRequest, TcpListener } from "./adbd-services.ts";
import { activityCommands } from "./commands-activity.ts";
import { screenCommands } from "./commands-screen.ts";
import { shellCommands } from "./commands-shell.ts";
import { type CommandFn, type CommandIo, delay, hang, StdinBuffer, text } from "./command-io.ts";
import { type FakeDisplay, singleDisplay } from "./displays.ts";
import { PhoneFiles } from "./phone-files.ts";
import { type Scenario, ScenarioRuntime, type SnapshotNode, type View } from "./scenario.ts";
import { blackScreen, installPowerCommands, keyguardSnapshot, type LockKind, PhonePower } from "./phone-power.ts";
import { ScreenRenderer } from "./screen-png.ts";
import { parseScript, runScript, ShellSyntaxError } from "./sh.ts";
import { processCommands } from "./commands-process.ts";
import { ADBD_PID, ProcessTable, SIGNAL_STATUS, type Signal } from "./processes.ts";
import { type AppInfo, BROWSER, LAUNCHER, launcherScenario, plainAppScenario, SETTINGS } from "./system-apps.ts";
import { ALL_ROTATIONS } from "./rotation.ts";
import { compressTree, toUiautomatorXml } from "./uiautomator-xml.ts";
import { appopsCommand, PackageState } from "./packages.ts";
import { ImeService } from "./ime.ts";
import { AppiumSettingsState, type PhoneLocation, type PostedNotification } from "./appium-settings.ts";
import { SETTINGS_APP_PACKAGE } from "./apk-catalog.ts";
import { Uia2Server, type Uia2Options } from "./uia2-server.ts";

export const DEFAULT_PROPS: Readonly<Record<string, string>> = {
  "ro.product.model": "Fake_Pixel",
  "ro.product.name": "fake_pixel",
  "ro.product.device": "fakepixel",
  "ro.product.brand": "devicerail",
  "ro.product.manufacturer": "DeviceRail",
  "ro.build.version.release": "10",
  "ro.build.version.sdk": "29",
  "ro.build.type": "user",
  "ro.serialno": "FAKE0001",
  "ro.product.cpu.abi": "arm64-v8a",
  "sys.boot_completed": "1",
};

export interface FakePhoneOptions {
  /** Merged over DEFAULT_PROPS; ro.product.name/model/device also go into the adb banner. */
  props?: Record<string, string>;
  screen?: { width?: number; height?: number; density?: number };
  /** Installed, and in the foreground at boot unless `foreground` says otherwise. */
  scenario?: Scenario;
  /** Package in the foreground at boot (default: the scenario's, else the launcher). */
  foreground?: string;
  files?: Record<string, string | Uint8Array>;
  /** Default true: an unknown command exits 127 and is added to `problems`. False: it exits 0 silently. */
  strict?: boolean;
  /**
   * Default false, as on every stock Android: AOSP's ClipboardService has no shell command (none
   * up to Android 16), so `cmd clipboard …` gets Binder's default onShellCommand, which prints
   * `No shell command implementation.` on stderr and exits 0 (callstack/agent-device PR #2676 for
   * API 36, PR #1645; research note android-real-phones.md §2.5). True is hypothetical: a phone
   * whose clipboard does answer `cmd clipboard set text <text>` (as an on-device helper would
   * provide), for the tests of the driver's paste path.
   */
  clipboardShell?: boolean;
  /** The battery level `dumpsys battery` reports (default 100); settable later through `battery`. */
  battery?: number;
  /**
   * Input injection refused, as Xiaomi/Redmi/POCO (MIUI, HyperOS), OPPO/realme/OnePlus (ColorOS)
   * and HONOR phones refuse it by default: every `input` prints a SecurityException (the Android
   * 11-and-older or the 12-and-later text, by `ro.build.version.sdk`) and fails
   * (Genymobile/scrcpy#1865, #3824; openatx/uiautomator2#520; DeviceFarmer/STFService.apk#144;
   * droidrun/mobilerun-portal#5). See input-command.ts for the exact output.
   */
  inputDenied?: boolean;
  /**
   * Each `input` invocation first waits this long, as on Android 11 and older where `input`
   * starts an ART VM (`app_process`) per call. `true` is the measured real figure, SLOW_INPUT_MS
   * (about 1 s: Genymobile/scrcpy#231 "almost 1 second", readest/readest PR #4921 0.9–1.05 s).
   */
  slowInput?: boolean | number;
  /** The screen is off at boot (as after a screen timeout). */
  asleep?: boolean;
  /**
   * A screen lock: `swipe` (no credential) or `pin` (a credential). The keyguard shows at boot
   * and whenever the screen goes off; `wm dismiss-keyguard` dismisses only the swipe one.
   */
  lock?: LockKind;
  /**
   * The first N characters of the first `input text` after a field gains focus are lost, as when
   * typing starts while the field's input connection is still coming up
   * (software-mansion/argent#562: "display" arrived as "splay").
   */
  focusDropChars?: number;
  /**
   * The physical displays (default: one built-in panel of `screen`'s size). Several make a
   * foldable or multi-display phone, as on a Pixel Fold or Galaxy Z Fold: `dumpsys SurfaceFlinger
   * --display-id` and `cmd display get-displays` list them, `screencap -d <id>` captures one (a
   * panel that is off captures black), and on Android 14+ (`ro.build.version.sdk` 34 or more)
   * `screencap` without `-d` prints the multi-display warning on stderr before the PNG of the
   * first display (AOSP cmds/screencap/screencap.cpp; see displays.ts for every source).
   * FOLDABLE_DISPLAYS / FOLDED_DISPLAYS in displays.ts are a Pixel 9 Pro Fold.
   */
  displays?: readonly FakeDisplay[];
  /**
   * An ANR happened (within the last two hours) while this app was in front: full `dumpsys
   * window` then starts with the frozen `WINDOW MANAGER LAST ANR (dumpsys window lastanr)` section
   * naming it as focused (WindowManagerService dumpLastANRLocked, kept
   * LAST_ANR_LIFETIME_DURATION_MSECS = two hours). Also settable later through `lastAnr`.
   */
  lastAnr?: LastAnr;
  /**
   * How long `uiautomator dump` waits for the screen to go idle before it gives up (with
   * `faults.uiautomatorAnimating`). Default 10 000 ms, the real `waitForIdle(1000, 1000 * 10)` of
   * AOSP DumpCommand.java (frameworks/base cmds/uiautomator); tests shorten it.
   */
  uiautomatorIdleTimeoutMs?: number;
  /**
   * Default false, as on real phones: adbd sends no hang-up to a legacy `shell:` command when the
   * host closes the stream (no shell protocol: AOSP system/core adb/daemon/shell_service.cpp,
   * `PassDataStreams` returns at once without a protocol fd and SIGHUP goes only through it), so
   * a command that writes nothing (a hung or waiting `uiautomator`) runs on; one that writes after
   * the close dies of SIGPIPE. True: the old simulation, where closing the stream ends the command.
   * `exec:` and shell v2 always end the command on close here.
   */
  legacyShellHangup?: boolean;
  /**
   * `settings put` (and `delete`) refused as on MIUI/ColorOS phones without the vendor's security
   * option: the SecurityException on stderr and exit status 255 (see rotation.ts for the sources).
   * `settings get` still answers.
   */
  settingsDenied?: boolean;
  /**
   * The rotations (Surface.ROTATION_*, 0–3) the display turns to when asked through
   * `user_rotation` with auto-rotate off (default all four). `[0]`: the app in front is locked to
   * portrait; `[0, 1, 3]`: a phone that never turns upside down. Asked for another, the display
   * stays where it is and `settings` still succeeds, as on real phones. `dumpsys input` reports it.
   */
  rotations?: readonly number[];
  /**
   * Every `pm install` fails with `Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by
   * user]`, as on Xiaomi/Redmi/POCO (MIUI, HyperOS) with "Install via USB" off (rom1v/sndcpy#64,
   * RikkaApps/Shizuku#252). Also settable later through `packages.installRefused`.
   */
  installRefused?: boolean;
  /** The simulated UiAutomator2 server's latency and faults (uia2-server.ts); also settable later on `uia2`. */
  uia2?: Uia2Options;
}

/** The focus WindowManagerService froze when an app stopped responding. */
export interface LastAnr {
  package: string;
  /** Fully qualified. */
  activity: string;
}

/** What one `input` invocation costs on Android 11 and older (see FakePhoneOptions.slowInput). */
export const SLOW_INPUT_MS = 1_000;

/** Where a command's text came from: the service's command line (visible in `ps` on the host), a script on stdin, or a script file. */
export type CommandOrigin = "command-line" | "stdin" | "file";

export interface CommandRecord {
  argv: string[];
  origin: CommandOrigin;
  /** null while running, or when the command never finished (hang, unplug). */
  exitCode: number | null;
}

export interface ServiceRecord {
  kind: ServiceKind;
  command: string;
  /** Every byte the host sent on stdin, decoded as UTF-8. */
  stdin: string;
  exitCode: number | null;
}

export type InputRecord =
  | { kind: "tap"; x: number; y: number; target: string | null }
  | {
      kind: "swipe" | "draganddrop";
      x1: number;
      y1: number;
      x2: number;
      y2: number;
      durationMs: number | null;
      target: string | null;
    }
  | { kind: "text"; text: string; target: string | null }
  | { kind: "keyevent"; keyCode: number; longpress: boolean; target: string | null };

export interface Faults {
  /**
   * The next N dumps print `ERROR: could not get idle state.` (stderr, exit 0) and write nothing,
   * at once (a phone prints it only after its 10 s idle wait: `uiautomatorAnimating` models that),
   * `--compressed` or not.
   */
  uiautomatorIdleErrors: number;
  /** The next N dumps print `ERROR: null root node returned by UiTestAutomationBridge.` */
  uiautomatorNullRoot: number;
  /** `uiautomator` never finishes until its stream is closed. */
  uiautomatorHang: boolean;
  screencapHang: boolean;
  /** Command name → milliseconds it waits before running. */
  slow: Map<string, number>;
  /** Command name that, when it starts, drops the transport abruptly (the phone is unplugged). */
  unplugOn: string | null;
  /** The next N `am start -W` report `Status: timeout`; the activity still comes up, too late. */
  launchTimeouts: number;
  /**
   * The foreground app animates (video, shimmer, Lottie…) and never goes idle: a plain
   * `uiautomator dump` waits `uiautomatorIdleTimeoutMs`, then prints `ERROR: could not get idle
   * state.` (exit 0, no file), while `uiautomator dump --compressed` dumps (openatx/uiautomator2#818,
   * #116; mobile-next/mobilewright#117, where `--compressed` made the dump work).
   */
  uiautomatorAnimating: boolean;
  /**
   * Another UiAutomation client holds the accessibility bridge; the value is its process name as
   * `ps -A` shows it (e.g. `io.appium.uiautomator2.server`, `com.github.uiautomator`,
   * `dev.mobile.maestro`, `com.android.commands.monkey`). Every dump then fails with
   * `java.lang.IllegalStateException: UiAutomationService …already registered!` until the holder
   * is killed (`kill <pid>` clears this switch). See commands-screen.ts for the sources.
   */
  uiautomationHolder: string | null;
  /** Dumps contain real-world odd nodes (inverted bounds, `&#0;`, a lone surrogate); see uiautomator-xml.ts oddNodesXml. */
  uiautomatorOddNodes: boolean;
  /**
   * The screen holds a character KXmlSerializer refuses: every dump dies with
   * `java.lang.IllegalArgumentException: Illegal character (U+0)` (a NUL, Maestro#288) or
   * `Illegal character (d83d)` (a lone surrogate, openatx/uiautomator2#135, #506).
   */
  uiautomatorIllegalChar: "U+0" | "d83d" | null;
}

export class FakePhone implements AdbdDevice {
  readonly props: Map<string, string>;
  readonly files: PhoneFiles;
  readonly physical: { width: number; height: number; density: number };
  sizeOverride: { width: number; height: number } | null = null;
  densityOverride: number | null = null;
  /** Percent, as `dumpsys battery` reports it. */
  battery: number;
  readonly settings = new Map<string, string>();
  readonly commands = new Map<string, CommandFn>();
  readonly apps = new Map<string, AppInfo & { scenario: Scenario; runtime: ScenarioRuntime | null }>();
  foreground: string;
  strict: boolean;
  clipboardShell: boolean;
  /** The primary clip's text; KEYCODE_PASTE types it into the focused field. */
  clipboard: string | null = null;
  /** Physical displays; `on` may be flipped to fold or unfold the phone. */
  readonly displays: FakeDisplay[];
  /** The frozen focus of the last ANR, printed first by full `dumpsys window`; null: no ANR since boot. */
  lastAnr: LastAnr | null;
  inputDenied: boolean;
  settingsDenied: boolean;
  /** The rotations the display may take (FakePhoneOptions.rotations). */
  allowedRotations: readonly number[];
  /** The display's rotation now (Surface.ROTATION_*), as `dumpsys input` says it. */
  rotation = 0;
  /** Milliseconds each `input` invocation waits before it runs (0: instant). */
  inputStartupMs: number;
  readonly power: PhonePower;
  focusDropChars: number;
  /** The field that already received an `input text` since it gained focus (focusDropChars). */
  textSinceFocus: string | null = null;
  readonly faults: Faults = {
    uiautomatorIdleErrors: 0,
    uiautomatorNullRoot: 0,
    uiautomatorHang: false,
    screencapHang: false,
    slow: new Map(),
    unplugOn: null,
    launchTimeouts: 0,
    uiautomatorAnimating: false,
    uiautomationHolder: null,
    uiautomatorOddNodes: false,
    uiautomatorIllegalChar: null,
  };
  /** Every shell and command running on the phone, for `ps -A` and `kill`. */
  readonly processes = new ProcessTable();
  /** The pid of the `uiautomator` that has the accessibility bridge registered now, if any. */
  uiAutomationPid: number | null = null;
  readonly uiautomatorIdleTimeoutMs: number;
  readonly legacyShellHangup: boolean;
  /** APKs installed with `pm install`, their grants and app ops (packages.ts). */
  readonly packages = new PackageState();
  /** Enabled and selected input methods (`ime`), kept in the secure settings (ime.ts). */
  readonly ime: ImeService;
  /** io.appium.settings' location, LocationService and notification buffer (appium-settings.ts). */
  readonly appiumSettings = new AppiumSettingsState();
  /** Appium's UiAutomator2 server, started by `am instrument` (uia2-server.ts). */
  readonly uia2: Uia2Server;

  readonly commandLog: CommandRecord[] = [];
  readonly serviceLog: ServiceRecord[] = [];
  readonly inputLog: InputRecord[] = [];
  readonly appLog: { tag: string; message: string }[] = [];
  /** Unknown commands, unsupported shell syntax and commands that threw: a strict test expects this empty. */
  readonly problems: string[] = [];
  readonly renderer = new ScreenRenderer();
  private readonly watchers = new Set<(record: CommandRecord, phase: "start" | "end") => void>();

  constructor(options: FakePhoneOptions = {}) {
    this.battery = options.battery ?? 100;
    this.props = new Map(Object.entries({ ...DEFAULT_PROPS, ...options.props }));
    this.files = new PhoneFiles(options.files);
    this.physical = {
      width: options.screen?.width ?? 1080,
      height: options.screen?.height ?? 2400,
      density: options.screen?.density ?? 420,
    };
    if (!this.props.has("ro.sf.lcd_density")) this.props.set("ro.sf.lcd_density", String(this.physical.density));
    this.strict = options.strict ?? true;
    this.clipboardShell = options.clipboardShell ?? false;
    this.displays = options.displays
      ? options.displays.map((d) => ({ ...d }))
      : singleDisplay(this.physical.width, this.physical.height);
    this.lastAnr = options.lastAnr ?? null;
    this.inputDenied = options.inputDenied ?? false;
    this.settingsDenied = options.settingsDenied ?? false;
    this.allowedRotations = options.rotations ?? ALL_ROTATIONS;
    // As on a phone out of the box: auto-rotate on, the locked rotation portrait.
    this.settings.set("system/accelerometer_rotation", "1");
    this.settings.set("system/user_rotation", "0");
    this.inputStartupMs =
      options.slowInput === true ? SLOW_INPUT_MS : typeof options.slowInput === "number" ? options.slowInput : 0;
    this.power = new PhonePower(options.lock ?? "none", { asleep: options.asleep });
    this.focusDropChars = options.focusDropChars ?? 0;
    this.uiautomatorIdleTimeoutMs = options.uiautomatorIdleTimeoutMs ?? 10_000;
    this.legacyShellHangup = options.legacyShellHangup ?? false;
    this.packages.installRefused = options.installRefused ?? false;
    this.ime = new ImeService(this);
    this.uia2 = new Uia2Server(this, options.uia2);
    this.install(launcherScenario(() => [...this.apps.values()]));
    // Copies: a browser's URL belongs to one phone.
    for (const app of [{ ...SETTINGS }, { ...BROWSER }]) this.install(plainAppScenario(app), app);
    if (options.scenario) this.install(options.scenario);
    this.foreground = options.foreground ?? options.scenario?.package ?? LAUNCHER.package;
    for (const [name, fn] of [
      ...shellCommands(this),
      ...screenCommands(this),
      ...activityCommands(this),
      ...processCommands(this),
    ])
      this.commands.set(name, fn);
    this.commands.set("ime", (argv, io) => this.ime.command(argv, io));
    this.commands.set("appops", (argv, io) => appopsCommand(this, argv, io));
    installPowerCommands(this);
  }

  /** Adds (or replaces) an app; its screens come from `scenario`. `info` is kept and may be mutated (its url). */
  install(scenario: Scenario, info?: AppInfo): void {
    const app = info ?? {
      package: scenario.package,
      activity: scenario.activity,
      label: scenario.label ?? scenario.package,
      launcher: scenario.launcher ?? true,
    };
    this.apps.set(scenario.package, Object.assign(app, { scenario, runtime: null }));
  }

  /** The screen size apps see: `wm size` override, else the physical size. */
  get view(): View {
    return this.sizeOverride ?? { width: this.physical.width, height: this.physical.height };
  }

  /** The running state of an app's screens, started on first use. */
  runtime(pkg = this.foreground): ScenarioRuntime {
    const app = this.apps.get(pkg);
    if (!app) throw new Error(`fake phone: ${pkg} is not installed`);
    app.runtime ??= new ScenarioRuntime(app.scenario, {
      log: (tag, message) => this.appLog.push({ tag, message }),
      launch: (p) => this.launch(p),
      background: () => (this.foreground = LAUNCHER.package),
    });
    return app.runtime;
  }

  /** Brings `pkg` to the front, resuming its current screen. */
  launch(pkg: string): void {
    this.runtime(pkg);
    this.foreground = pkg;
  }

  /** `am force-stop`: the app's state is discarded; the launcher shows if it was in front. */
  forceStop(pkg: string): void {
    this.uia2.forceStopped(pkg);
    const app = this.apps.get(pkg);
    if (!app || pkg === LAUNCHER.package) return;
    app.runtime = null;
    if (pkg === SETTINGS_APP_PACKAGE) this.appiumSettings.locationService = false;
    if (this.foreground === pkg) this.foreground = LAUNCHER.package;
  }

  /** The location apps get (io.appium.settings' LocationInfoReceiver reports it); null: no fix. Set by LocationService's mock. */
  get location(): PhoneLocation | null {
    return this.appiumSettings.location;
  }

  set location(value: PhoneLocation | null) {
    this.appiumSettings.location = value;
  }

  /**
   * A notification posted (or, with `isRemoved`, removed) that io.appium.settings' NLService
   * buffers: newest first, at most 100 (NLService.MAX_BUFFER_SIZE). `postTime` defaults to now.
   */
  postNotification(n: PostedNotification): void {
    const list = this.appiumSettings.notifications;
    list.unshift({ postTime: Date.now(), ...n });
    list.splice(100);
  }

  /** The foreground activity (fully qualified), for dumpsys. */
  get focusedActivity(): string {
    return this.runtime().activity;
  }

  tree(): SnapshotNode {
    if (this.power.keyguardShowing) return keyguardSnapshot(this.view);
    return this.runtime().snapshot(this.view);
  }

  /** With `compressed`, what `uiautomator dump --compressed` writes (see compressTree). */
  dumpXml(opts: { compressed?: boolean } = {}): string {
    return toUiautomatorXml(opts.compressed ? compressTree(this.tree()) : this.tree());
  }

  screenshot(): Uint8Array {
    if (!this.power.awake) return blackScreen(this.view);
    const tree = this.tree();
    return this.renderer.png(tree, toUiautomatorXml(tree), this.view);
  }

  bannerProps(): Record<string, string> {
    const p = (k: string) => this.props.get(k) ?? "";
    return {
      "ro.product.name": p("ro.product.name"),
      "ro.product.model": p("ro.product.model"),
      "ro.product.device": p("ro.product.device"),
    };
  }

  /** Device ports something listens on: the UiAutomator2 server's while it runs. */
  tcpListener(port: number): TcpListener | null {
    return this.uia2.tcpListener(port);
  }

  get fs(): PhoneFiles {
    return this.files;
  }

  async runCommand(request: ServiceRequest, io: CommandIo, stdin: StdinBuffer): Promise<number> {
    const record: ServiceRecord = { kind: request.kind, command: request.command, stdin: "", exitCode: null };
    this.serviceLog.push(record);
    // An empty legacy shell is interactive: it reads its commands from stdin.
    let status: number;
    if (request.command.trim() === "") status = await this.exec(["sh"], io, "command-line");
    else {
      // adbd runs `sh -c <command>`: the shell is a process of its own, its pid is `$$`.
      const shell = this.processes.spawn("sh", ADBD_PID, { follow: io.signal });
      status = await this.runScriptText(
        request.command,
        { ...io, signal: shell.controller.signal, pid: shell.pid },
        "command-line",
      );
      status = signalStatus(shell.controller.signal) ?? status;
      this.processes.exit(shell);
    }
    record.stdin = text(stdin.receivedBytes());
    record.exitCode = status;
    return status;
  }

  /**
   * Runs `src` as `sh -c` would, with an empty stdin, for tests of what the driver's scripts do on
   * the phone: stdout, stderr, and both in the order they were written (what `2>&1` would give).
   */
  async runForText(src: string): Promise<{ out: string; err: string; both: string; status: number }> {
    const out: string[] = [];
    const err: string[] = [];
    const both: string[] = [];
    const stdin = new StdinBuffer();
    stdin.end();
    const write = (to: string[]) => (d: string | Uint8Array) => {
      const t = typeof d === "string" ? d : text(d);
      to.push(t);
      both.push(t);
    };
    const status = await this.runScriptText(
      src,
      { stdin, out: write(out), err: write(err), signal: new AbortController().signal, unplug: () => {} },
      "command-line",
    );
    return { out: out.join(""), err: err.join(""), both: both.join(""), status };
  }

  /** Parses and runs `src` in a fresh shell (as `sh -c` would). */
  async runScriptText(src: string, io: CommandIo, origin: CommandOrigin): Promise<number> {
    let script;
    try {
      script = parseScript(src);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      this.problems.push(`${e.message} in: ${src}`);
      io.err(`/system/bin/sh: ${e.message}\n`);
      return 2;
    }
    return runScript(script, io, {
      exec: (argv, sub, replace) => this.exec(argv, sub, origin, replace),
      readFile: (path) => this.files.get(path),
      writeFile: (path, data, append) => this.files.put(path, data, { append }),
    });
  }

  /**
   * Resolves when a command named `name` starts (or ends) from now on: lets a test act while a
   * device command is running (a hang, a slow command) without sleeping.
   */
  waitForCommand(name: string, phase: "start" | "end" = "start"): Promise<CommandRecord> {
    return new Promise((resolve) => {
      const w = (record: CommandRecord, p: "start" | "end") => {
        if (p !== phase || record.argv[0]?.split("/").at(-1) !== name) return;
        this.watchers.delete(w);
        resolve(record);
      };
      this.watchers.add(w);
    });
  }

  private notify(record: CommandRecord, phase: "start" | "end"): void {
    for (const w of [...this.watchers]) w(record, phase);
  }

  /**
   * Runs one command through the registry, applying the fault switches first, in a process of its
   * own (a child of the calling shell), or with `replace` in the calling shell's (`exec`).
   */
  async exec(argv: string[], outer: CommandIo, origin: CommandOrigin, replace = false): Promise<number> {
    const name0 = (argv[0] as string).split("/").at(-1) as string;
    const same = replace && outer.pid !== undefined ? this.processes.running.get(outer.pid) : undefined;
    if (same) same.name = name0;
    const proc = same ?? this.processes.spawn(name0, outer.pid ?? ADBD_PID, { follow: outer.signal });
    const io: CommandIo = { ...outer, signal: proc.controller.signal, pid: proc.pid };
    try {
      const status = await this.execIn(argv, io, origin);
      return signalStatus(proc.controller.signal) ?? status;
    } finally {
      if (!same) this.processes.exit(proc);
    }
  }

  private async execIn(argv: string[], io: CommandIo, origin: CommandOrigin): Promise<number> {
    const record: CommandRecord = { argv, origin, exitCode: null };
    this.commandLog.push(record);
    this.notify(record, "start");
    const name = (argv[0] as string).split("/").at(-1) as string;
    const slow = this.faults.slow.get(name);
    if (slow) await delay(slow, io.signal);
    if (this.faults.unplugOn === name) {
      io.unplug();
      await hang(io.signal);
      this.notify(record, "end");
      return 255;
    }
    const fn = this.commands.get(name);
    let status: number;
    if (!fn) {
      if (this.strict) {
        this.problems.push(`unknown command: ${argv.join(" ")}`);
        io.err(`/system/bin/sh: ${argv[0]}: inaccessible or not found\n`);
      }
      status = this.strict ? 127 : 0;
    } else {
      try {
        status = await fn(argv, io);
      } catch (e) {
        this.problems.push(`${name} threw: ${e instanceof Error ? e.message : String(e)}`);
        io.err(`${name}: ${e instanceof Error ? e.message : String(e)}\n`);
        status = 1;
      }
    }
    record.exitCode = signalStatus(io.signal) ?? status;
    this.notify(record, "end");
    return record.exitCode;
  }
}

/** 128 + n when a signal (kill, SIGPIPE) ended the process; null when it ended by itself or by the stream's close. */
function signalStatus(signal: AbortSignal): number | null {
  return signal.aborted && typeof signal.reason === "string" && signal.reason in SIGNAL_STATUS
    ? SIGNAL_STATUS[signal.reason as Signal]
    : null;
}
