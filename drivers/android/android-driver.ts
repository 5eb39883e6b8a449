/**
 * The Android driver's Driver implementation: its parts (shell, input, ui-dump, rotation, screen
 * state, the helpers, and which path each step takes: steps.ts) live in their own files; what is
 * left here is the port's methods and the per-device state they share.
 */
import {
  type CallContext,
  type DeviceChange,
  type Driver,
  type ElementInput,
  type ObserveOptions,
  type Point,
  type Protection,
  type RawObservation,
} from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo, Viewport } from "../../src/protocol/types/device.ts";
import type { Logger } from "../../src/driver/driver.ts";
import { ANDROID_ACTIONS, type Call, pointsOf, scrollGesture, toCall } from "./actions.ts";
import { SETTINGS_APP_ACTIONS } from "./action-contracts.ts";
import { AdbkitPort, platformError } from "./adbkit-port.ts";
import { AndroidShell } from "./android-shell.ts";
import { Discovery, ID_PREFIX, idOf } from "./discovery.ts";
import { type Display, readCaptureDisplay, readDisplay, effectiveSize } from "./display.ts";
import { parseBatteryPercent } from "./parse/battery.ts";
import { KEYCODES } from "./parse/keys.ts";
import { orientationOf, pngSize } from "./parse/display.ts";
import { stateProblem } from "./parse/devices.ts";
import { parseForeground } from "./parse/foreground.ts";
import { doubleTapFits, doubleTapUnsupported, probeInput } from "./input-probe.ts";
import { Rotations } from "./rotation.ts";
import { ScreenGuard } from "./screen-state.ts";
import type { DumpedTree } from "./ui-dump.ts";
import { DeviceHelpers, failureText, type HelperMode } from "./helper/device-helpers.ts";
import { Animations, clipboardText, setLocation, stopLocation } from "./helper/settings-app.ts";
import { IME_SETTLE_MS } from "./helper/unicode-ime.ts";
import { AndroidSteps } from "./steps.ts";

export interface AndroidOptions {
  /** The adb executable (DEVICERAIL_ADB_PATH), used to start a server when none is running. */
  adbPath: string;
  /** The adb server port (ANDROID_ADB_SERVER_PORT, default 5037). */
  serverPort: number;
  serverHost?: string;
  log: Logger;
  /** Deadline of one uiautomator attempt (default DUMP_ATTEMPT_MS); tests shorten it. */
  dumpAttemptMs?: number;
  /** How long after its own input the screen counts as on without a check (default KNOWN_AWAKE_MS); tests shorten it. */
  knownAwakeMs?: number;
  /** Back-off before each `null root node` retry (default NULL_ROOT_BACKOFF_MS); tests shorten it. */
  nullRootBackoffMs?: readonly number[];
  /** How long a rotation gets to show in `dumpsys input` (default ROTATION_CONFIRM_MS); tests shorten it. */
  rotationConfirmMs?: number;
  /** Appium's on-device helpers (DEVICERAIL_ANDROID_HELPER; default `use`). */
  helper?: HelperMode;
  /** The wait after selecting the Unicode IME (default IME_SETTLE_MS); tests shorten it. */
  imeSettleMs?: number;
  /** How long the UiAutomator2 server gets to answer /status (default UIA2_START_MS); tests shorten it. */
  helperStartMs?: number;
}

interface Connected {
  generation: number;
  display: Display;
  /** `ro.build.version.sdk`, read at connect. */
  sdk: number;
  /** The physical display screenshots capture (`screencap -d`), chosen at connect; null: screencap's default. */
  captureDisplay: string | null;
  /** The viewport of the newest screenshot: taps are checked against it. */
  viewport: Viewport | null;
  focus: { packageName: string; activity: string | null } | null;
  focusAtMs: number;
  /** The tree fingerprint the remembered focus belongs to (null: read without a tree). */
  focusFingerprint: string | null;
  refreshingFocus: boolean;
  /**
   * The tree that just confirmed typed text, read after the typing ended: the observation that
   * follows at once (core's `after`) uses it instead of a second dump of the same screen. Cleared
   * by anything else the driver is asked to do; never kept for a protected value.
   */
  settled: { tree: DumpedTree; atMs: number } | null;
}

/** Calls that inject input, which restarts the phone's screen timeout. */
const INPUT_KINDS = new Set<Call["kind"]>([
  "tap",
  "doubleTap",
  "longPress",
  "swipe",
  "scroll",
  "key",
  "text",
  "secret",
]);

/** How old a tree read right after typing may be to stand in for the next observation's dump. */
const SETTLED_TREE_MS = 1_000;

/** How old the remembered foreground activity may get before a tree observation refreshes it. */
const FOCUS_REFRESH_MS = 2_000;

/**
 * Android phones through the user's adb server (adbkit). Devices are `android-adb:<serial>`;
 * screenshots are `screencap -p`, UI trees `uiautomator dump` normalized into UiNodes; input is
 * `input` with every argument quoted, secrets travel on the stdin of a fixed remote script.
 */
export class AndroidDriver implements Driver {
  readonly name = "android";
  readonly uiTrees = true;
  readonly elements: ElementInput;
  private readonly port: AdbkitPort;
  private readonly shell: AndroidShell;
  private discovery: Discovery | null = null;
  private readonly connected = new Map<string, Connected>();
  /** Phones that accepted the input probe while attached, with what one `input` invocation costs there beyond a shell round trip (ms). */
  private readonly inputAccepted = new Map<string, number>();
  private generations = 0;
  /** Aborts background work (the foreground refresh) when the driver stops. */
  private stopping = new AbortController();
  private readonly screen: ScreenGuard;
  private readonly rotations: Rotations;
  private readonly animations: Animations;
  /** The helpers of each connected phone (helper/device-helpers.ts). */
  private readonly helpers = new Map<string, DeviceHelpers>();
  /** Phones whose mock location this daemon started: stopped at disconnect. */
  private readonly locations = new Set<string>();
  private readonly steps: AndroidSteps;

  constructor(private readonly opts: AndroidOptions) {
    this.port = new AdbkitPort({ host: opts.serverHost, port: opts.serverPort, bin: opts.adbPath });
    this.shell = new AndroidShell(
      this.port,
      (serial) => this.whyUnusable(serial),
      opts.dumpAttemptMs,
      opts.nullRootBackoffMs,
    );
    this.screen = new ScreenGuard(this.shell, opts.knownAwakeMs);
    this.rotations = new Rotations(this.shell, opts.rotationConfirmMs);
    this.animations = new Animations(this.shell);
    this.steps = new AndroidSteps(this.shell, this.helpers, opts.imeSettleMs ?? IME_SETTLE_MS);
    this.elements = {
      tapPoint: (deviceId, p: Point, ctx) => this.run(deviceId, ctx, (serial) => this.steps.tap(serial, p, ctx)),
      clearFocused: (deviceId, ctx, hint) =>
        this.run(deviceId, ctx, (serial) => this.shell.clearFocused(serial, hint?.length ?? 0, ctx)),
      typeText: (deviceId, text, o, ctx) =>
        this.run(deviceId, ctx, async (serial) => {
          if (o.secret) await this.steps.typeSecret(serial, text, ctx);
          else this.settle(serial, (await this.steps.typeText(serial, text, ctx)).tree);
        }),
    };
  }

  async start(onChange: (change: DeviceChange) => void, _ctx: CallContext): Promise<void> {
    const discovery = new Discovery(
      this.port,
      (c) => {
        if (c.type === "gone") {
          const serial = c.deviceId.slice(ID_PREFIX.length);
          this.connected.delete(serial);
          this.inputAccepted.delete(serial);
          // Its server went with it; a phone that comes back starts a new one at its connect.
          const helpers = this.helpers.get(serial);
          this.helpers.delete(serial);
          void helpers?.stop();
        }
        onChange(c);
      },
      this.opts.log,
    );
    this.discovery = discovery;
    await discovery.start();
  }

  async stop(): Promise<void> {
    // A daemon that stops leaves each phone it rotated with the owner's rotation settings, and
    // each phone's UiAutomator2 server stopped with its forward removed.
    await Promise.all(this.rotations.serials().map((serial) => this.restoreRotation(serial)));
    await Promise.all([...this.helpers.keys()].map((serial) => this.releaseHelpers(serial)));
    this.stopping.abort("stop");
    this.stopping = new AbortController();
    await this.discovery?.stop();
    this.discovery = null;
    this.connected.clear();
    this.inputAccepted.clear();
  }

  /** The phone's helpers stopped, its mock location ended and its animation scales put back. */
  private async releaseHelpers(serial: string, outer?: CallContext): Promise<void> {
    const ctx: CallContext = {
      signal: outer?.signal ?? this.stopping.signal,
      deadline: Date.now() + 5_000,
      log: this.opts.log,
    };
    const helpers = this.helpers.get(serial);
    this.helpers.delete(serial);
    await helpers?.stop();
    if (this.locations.delete(serial)) await stopLocation(this.shell, serial, ctx).catch(() => {});
    await this.animations
      .restore(serial, ctx)
      .catch((err) =>
        this.opts.log.warn({ serial, err: String(err) }, "could not restore the phone's animation scales"),
      );
  }

  private async restoreRotation(serial: string, outer?: CallContext): Promise<void> {
    const ctx: CallContext = {
      signal: outer?.signal ?? this.stopping.signal,
      deadline: Date.now() + 5_000,
      log: this.opts.log,
    };
    await this.rotations
      .restore(serial, ctx)
      .catch((err) =>
        this.opts.log.warn({ serial, err: String(err) }, "could not restore the phone's rotation settings"),
      );
  }

  private serialOf(deviceId: string): string {
    if (!deviceId.startsWith(ID_PREFIX))
      throw new DriverError("protocol_error", { detail: `not an Android device id: ${deviceId}` });
    return deviceId.slice(ID_PREFIX.length);
  }

  /** The typed reason a device cannot be used now, or null when it is attached and authorized. */
  private whyUnusable(serial: string): DriverError | null {
    const known = this.discovery?.devices.get(serial);
    if (!known) return platformError("android_device_missing", true, `${serial} is not attached`);
    const problem = stateProblem(known.state);
    return problem
      ? new DriverError("platform_error", {
          platformCode: problem.platformCode,
          retryable: problem.retryable,
          message: `device ${serial} is ${known.state}: ${problem.hint}`,
        })
      : null;
  }

  private usable(deviceId: string): string {
    const serial = this.serialOf(deviceId);
    const why = this.whyUnusable(serial);
    if (why) throw why;
    return serial;
  }

  private session(deviceId: string, ctx: CallContext): { serial: string; c: Connected } {
    const serial = this.serialOf(deviceId);
    const c = this.connected.get(serial);
    if (!c) {
      if (!this.discovery?.devices.has(serial))
        throw platformError("android_device_missing", true, `${serial} is not attached`);
      throw new DriverError("device_not_connected", { deviceId });
    }
    const why = this.whyUnusable(serial);
    if (why) throw why;
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    return { serial, c };
  }

  /** What one `input` invocation costs on a connected phone (its connect probed it). */
  private inputMsOf(serial: string): number {
    return this.inputAccepted.get(serial) ?? 0;
  }

  /** Keeps the tree that confirmed typed text for the observation that follows (see Connected.settled). */
  private settle(serial: string, tree: DumpedTree | null): void {
    const c = this.connected.get(serial);
    if (c) c.settled = tree ? { tree, atMs: Date.now() } : null;
  }

  private async run(
    deviceId: string,
    ctx: CallContext,
    fn: (serial: string, c: Connected) => Promise<void>,
  ): Promise<void> {
    const { serial, c } = this.session(deviceId, ctx);
    c.settled = null;
    await this.screen.ensure(serial, ctx);
    await fn(serial, c);
    this.screen.noteInput(serial);
  }

  async connect(deviceId: string, ctx: CallContext): Promise<DeviceInfo> {
    const serial = this.usable(deviceId);
    const propsStarted = performance.now();
    const props = await this.port.properties(serial, ctx);
    const roundTripMs = performance.now() - propsStarted;
    this.shell.manufacturers.set(serial, props["ro.product.manufacturer"] ?? "");
    const display = await readDisplay(this.shell, serial, ctx);
    const sdk = Number(props["ro.build.version.sdk"]) || 0;
    const captureDisplay = await readCaptureDisplay(this.shell, serial, sdk, ctx);
    // Before any test step: a phone that refuses input fails here, with the setting to change.
    // Asked once while the phone stays attached (the fix needs a reboot, which detaches it); a
    // refusal is asked again at the next connect.
    const probed = !this.inputAccepted.has(serial);
    if (probed) this.inputAccepted.set(serial, Math.max(0, (await probeInput(this.shell, serial, ctx)) - roundTripMs));
    const known = this.connected.get(serial);
    if (!known)
      this.connected.set(serial, {
        generation: ++this.generations,
        display,
        sdk,
        captureDisplay,
        viewport: null,
        focus: null,
        focusAtMs: 0,
        focusFingerprint: null,
        refreshingFocus: false,
        settled: null,
      });
    else Object.assign(known, { display, sdk, captureDisplay });
    // Wake the screen now; a phone locked with a PIN may still be unlocked before the first step,
    // which then reports it. The probe was input (KEYCODE_UNKNOWN is dispatched, which restarts
    // the screen timeout), so a screen found on stays on for a while.
    this.screen.forget(serial);
    try {
      await this.screen.ensure(serial, ctx);
      if (probed) this.screen.noteInput(serial);
    } catch (err) {
      if (!(err instanceof DriverError && err.platformCode === "android_device_locked")) throw err;
    }
    await this.connectHelpers(serial, ctx);
    const info = this.discovery?.setConnected(serial, true, props["ro.build.version.release"] || null);
    if (!info) throw platformError("android_device_missing", true, `${serial} went away while connecting`);
    return { ...info };
  }

  /**
   * The phone's helpers, as DEVICERAIL_ANDROID_HELPER allows: read (installed first in `install`
   * mode) and the UiAutomator2 server started. A helper that fails leaves the shell path serving.
   */
  private async connectHelpers(serial: string, ctx: CallContext): Promise<void> {
    const mode = this.opts.helper ?? "use";
    if (mode === "off" || this.helpers.has(serial)) return;
    const helpers = new DeviceHelpers(this.port, this.shell, serial, mode, this.opts.log, this.opts.helperStartMs);
    this.helpers.set(serial, helpers);
    try {
      await helpers.connect(ctx);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      this.opts.log.warn({ serial, err: failureText(err) }, "Android helpers unavailable; the shell serves");
    }
  }

  async disconnect(deviceId: string, ctx?: CallContext): Promise<void> {
    const serial = this.serialOf(deviceId);
    this.connected.delete(serial);
    this.screen.forget(serial);
    await this.releaseHelpers(serial, ctx);
    // The owner's auto-rotate and rotation, as they were before this connection's first rotate.
    await this.restoreRotation(serial, ctx);
    this.discovery?.setConnected(serial, false);
  }

  async health(deviceId: string): Promise<void> {
    this.usable(deviceId);
  }

  /** `dumpsys battery`, which any phone in the `device` state answers, connected or not. */
  async battery(deviceId: string, ctx: CallContext): Promise<number | null> {
    return parseBatteryPercent(
      await this.shell.run(this.usable(deviceId), "dumpsys battery", ctx, { ceilingMs: 5_000 }),
    );
  }

  async actions(deviceId: string): Promise<ActionDefinition[]> {
    const serial = this.serialOf(deviceId);
    // Offered only where two `input tap`s land within the double-tap window, and the Settings app's
    // actions only where it is installed (both known once connected).
    const connected = this.connected.has(serial);
    const settingsApp = (this.helpers.get(serial) ?? null)?.settingsApp ?? false;
    const offered = ANDROID_ACTIONS.definitions.filter(
      (a) =>
        (a.name !== "doubleTap" || !connected || doubleTapFits(this.inputMsOf(serial))) &&
        (!SETTINGS_APP_ACTIONS.has(a.name) || !connected || settingsApp),
    );
    return offered.map((a) => ({ ...a }));
  }

  classify(_deviceId: string, name: string): Protection | undefined {
    return ANDROID_ACTIONS.classify(name);
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const { serial, c } = this.session(deviceId, ctx);
    // A dark or locked screen would give a black screenshot and no tree, reported as success.
    await this.screen.ensure(serial, ctx);
    // Screenshot and tree are independent (research note §4 #3): neither aborts the other. A
    // tree failure gives the observation without a tree and with the tree's typed error; a
    // screenshot failure fails it, but only once the dump has ended (no uiautomator left running).
    const settled = c.settled !== null && Date.now() - c.settled.atMs <= SETTLED_TREE_MS ? c.settled.tree : null;
    c.settled = null;
    const [shot, dumped, read] = await Promise.allSettled([
      opts.screenshot ? this.shell.screenshot(serial, ctx, c.captureDisplay) : Promise.resolve(null),
      opts.uiTree
        ? settled
          ? Promise.resolve({ value: settled, report: null })
          : this.steps.tree(serial, ctx)
        : Promise.resolve(null),
      // With a tree, its package is the foreground app and the activity comes from the last
      // dumpsys (refreshed in the background); one adb round trip less per observation.
      opts.uiTree ? Promise.resolve(null) : this.readFocus(serial, c, ctx),
    ]);
    if (shot.status === "rejected") throw shot.reason;
    if (read.status === "rejected") throw read.reason;
    const png = shot.value;
    const tree = dumped.status === "fulfilled" ? (dumped.value?.value ?? null) : null;
    const helperReport = dumped.status === "fulfilled" ? (dumped.value?.report ?? null) : null;
    const treeError = dumped.status === "rejected" ? (dumped.reason as unknown) : null;
    // Only a typed device failure becomes a tree omission; a cancel or a bug fails the call.
    if (
      treeError !== null &&
      (!(treeError instanceof DriverError) || treeError.driverCode === "driver_cancelled" || ctx.signal.aborted)
    )
      throw treeError;
    const focused = read.value ?? (treeError ? await this.readFocus(serial, c, ctx) : null);
    const focus = tree ? this.focusFromTree(serial, c, tree.packageName, tree.fingerprint) : focused;
    const size = png ? pngSize(png) : null;
    if (png && !size) throw platformError("android_adb_malformed_png", true, "screencap output is not a PNG");
    const effective = effectiveSize(c.display, tree?.rotation ?? null, c.viewport);
    const viewport: Viewport = {
      width: size?.width ?? effective.width,
      height: size?.height ?? effective.height,
      scaleFactor: c.display.density / 160,
    };
    if (size) c.viewport = viewport;
    return {
      viewport,
      screenshot: png,
      uiTree: tree
        ? {
            context: {
              contextKind: "native",
              contextId: tree.packageName ?? "android",
              documentEpoch: `${c.generation}-${tree.fingerprint}`,
            },
            nodes: tree.nodes,
          }
        : null,
      ...(treeError instanceof DriverError ? { uiTreeError: treeError } : {}),
      metadata: {
        android: {
          orientation: orientationOf(viewport),
          scaleFactor: viewport.scaleFactor,
          densityDpi: c.display.density,
          physicalSize: c.display.physical,
          overrideSize: c.display.override,
          effectiveSize: c.display.override ?? c.display.physical,
          physicalDensityDpi: c.display.physicalDensity,
          overrideDensityDpi: c.display.overrideDensity,
        },
        foreground: focus,
        // The protocol's UiNode has no fields for these states; keyed by the tree's node ids, only nodes that have one.
        ...(tree && Object.keys(tree.states).length ? { uiStates: tree.states } : {}),
        // `uiautomator dump --compressed` (after the screen never went idle) leaves layout-only views out.
        ...(tree?.compressed ? { uiTreeCompressed: { reason: "idleTimeout" } } : {}),
        ...(tree?.repaired ? { uiTreeRepaired: { nodes: tree.repaired } } : {}),
        // Where the tree came from: the UiAutomator2 server, or the shell (and why, after a fallback).
        ...(helperReport ? { androidHelper: helperReport } : {}),
      },
    };
  }

  /**
   * The foreground app from `dumpsys window displays` (Android 10+; `windows` before, as appium-adb
   * dumpWindows does): one section, never the frozen LAST ANR section a full dump starts with, and
   * a fraction of its size. Best effort, so a slow or odd dumpsys never fails an observation.
   */
  private async readFocus(
    serial: string,
    c: Connected,
    ctx: CallContext,
    fingerprint: string | null = null,
  ): Promise<Connected["focus"]> {
    const out = await this.shell
      .run(serial, c.sdk >= 29 ? "dumpsys window displays" : "dumpsys window windows", ctx, { ceilingMs: 5_000 })
      .catch(() => null);
    // Cut short (the observation failed elsewhere, or the driver stops): nothing was learnt.
    if (out === null && ctx.signal.aborted) return c.focus;
    const focus = out === null ? null : parseForeground(out);
    c.focus = focus;
    c.focusAtMs = Date.now();
    c.focusFingerprint = fingerprint;
    return focus;
  }

  /**
   * The remembered activity counts only for the same package and the same screen structure as
   * when it was read; otherwise it is null and a background dumpsys refreshes it.
   */
  private focusFromTree(
    serial: string,
    c: Connected,
    packageName: string | null,
    fingerprint: string,
  ): Connected["focus"] {
    if (packageName === null) return c.focus;
    const known = c.focus?.packageName === packageName && c.focusFingerprint === fingerprint;
    if ((!known || Date.now() - c.focusAtMs > FOCUS_REFRESH_MS) && !c.refreshingFocus) {
      c.refreshingFocus = true;
      const ctx: CallContext = { signal: this.stopping.signal, deadline: Date.now() + 5_000, log: this.opts.log };
      void this.readFocus(serial, c, ctx, fingerprint).finally(() => {
        c.refreshingFocus = false;
      });
    }
    return { packageName, activity: known ? (c.focus?.activity ?? null) : null };
  }

  async execute(
    deviceId: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    const { serial, c } = this.session(deviceId, ctx);
    const parsed = toCall(ANDROID_ACTIONS.parse(call.name, call.arguments));
    const screen = c.viewport ?? effectiveSize(c.display, null, null);
    if (pointsOf(parsed).some((p) => p.x >= screen.width || p.y >= screen.height))
      throw new DriverError("invalid_arguments", { action: call.name });
    if (parsed.kind === "doubleTap" && !doubleTapFits(this.inputMsOf(serial)))
      throw doubleTapUnsupported(this.inputMsOf(serial));
    if (SETTINGS_APP_ACTIONS.has(call.name) && !(this.helpers.get(serial) ?? null)?.settingsApp)
      throw new DriverError("platform_error", {
        platformCode: "android_helper_missing",
        retryable: false,
        message: `${call.name} needs Appium's io.appium.settings on the phone: install it with \`devicerail android helper install\` (or DEVICERAIL_ANDROID_HELPER=install), unless DEVICERAIL_ANDROID_HELPER=off`,
      });
    c.settled = null;
    await this.screen.ensure(serial, ctx);
    const output = await this.perform(serial, c, parsed, ctx);
    if (INPUT_KINDS.has(parsed.kind)) this.screen.noteInput(serial);
    return { output };
  }

  private async perform(serial: string, c: Connected, call: Call, ctx: CallContext): Promise<unknown> {
    const sh = this.shell;
    switch (call.kind) {
      case "tap":
        await this.steps.tap(serial, call, ctx);
        return { accepted: true, x: call.x, y: call.y };
      case "doubleTap":
        await this.steps.doubleTap(serial, call, ctx);
        return { accepted: true, x: call.x, y: call.y };
      case "longPress":
        await this.steps.longPress(serial, call, call.durationMs, ctx);
        return { accepted: true, x: call.x, y: call.y, durationMs: call.durationMs };
      case "swipe":
        await this.steps.swipe(serial, call, ctx);
        return {
          accepted: true,
          startX: call.startX,
          startY: call.startY,
          endX: call.endX,
          endY: call.endY,
          durationMs: call.durationMs,
        };
      case "scroll": {
        await this.steps.swipe(serial, scrollGesture(call, c.viewport ?? effectiveSize(c.display, null, null)), ctx);
        return { accepted: true, deltaX: call.deltaX, deltaY: call.deltaY };
      }
      case "key":
        await this.steps.key(serial, call.keycode, ctx);
        return call.name === "back" || call.name === "home" || call.name === "recentApps"
          ? { accepted: true }
          : { accepted: true, key: call.name };
      case "text": {
        const { tree, via } = await this.steps.typeText(serial, call.text, ctx);
        this.settle(serial, tree);
        return { accepted: true, byteLength: new TextEncoder().encode(call.text).length, via };
      }
      case "secret":
        await this.steps.typeSecret(serial, call.secret, ctx);
        return { accepted: true };
      case "setLocation":
        await setLocation(sh, serial, c.sdk, call, ctx);
        this.locations.add(serial);
        return { accepted: true, latitude: call.latitude, longitude: call.longitude };
      case "setAnimations":
        await this.animations.set(serial, call.enabled, ctx);
        return { accepted: true, enabled: call.enabled };
      case "clipboardGet":
        return { accepted: true, text: await clipboardText(sh, serial, c.sdk, ctx) };
      case "launch":
        await sh.launch(serial, call.packageName, ctx, call.activity);
        return { accepted: true };
      case "terminate":
        await sh.checked(serial, ["am", "force-stop", call.packageName], ctx);
        return { accepted: true };
      case "openUrl":
        await sh.openUrl(serial, call.url, ctx);
        return { accepted: true };
      case "rotate": {
        await this.rotations.rotate(serial, call.orientation, ctx);
        // The next screenshot tells the new size; until then taps are checked against the old one.
        c.viewport = null;
        return { accepted: true, orientation: call.orientation };
      }
    }
  }
}

export { KEYCODES, idOf };
