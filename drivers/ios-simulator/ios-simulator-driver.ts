/**
 * The iOS Simulator driver's Driver implementation: its parts (scale, readiness, probe, observe,
 * input) live in their own files; what is left here is the port's methods and the per-device state
 * they share.
 */
import {
  type CallContext,
  type DeviceChange,
  type Driver,
  type ElementInput,
  type Logger,
  type ObserveOptions,
  type Point,
  type Protection,
  type RawObservation,
} from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pngSize } from "../../src/driver/png.ts";
import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo, Viewport } from "../../src/protocol/types/device.ts";
import { KEYS } from "./action-contracts.ts";
import { type Backend, IOS_ACTIONS, scrollGesture } from "./actions.ts";
import { AxePort } from "./axe-port.ts";
import { type Hid, pickBackend } from "./backends.ts";
import { timedAction, timedHid, timingsMetadata } from "./action-timings.ts";
import { refuseDoubleTap } from "./double-tap.ts";
import { axeTextPorts, rememberFields, typeExactly } from "./exact-text.ts";
import { isOmission, screenshotAndTree } from "./observe-parts.ts";
import { type SimDevice, isIosSimulator } from "./parse/simctl.ts";
import { type BackendProbe, type LocateOptions, inputUnavailable, probeMetadata } from "./probe.ts";
import { SimctlPort } from "./simctl-port.ts";
import { AxReadiness } from "./readiness.ts";
import { ScreenScale } from "./scale.ts";
import { platformError } from "./tool-process.ts";
import { fingerprint, parseTree } from "./ui-tree.ts";
import { WDA_ENDPOINT, WdaPort } from "./wda-port.ts";

export const ID_PREFIX = "ios-simulator:";
/** HID codes for Cmd+A. */
const CMD = 227;
const KEY_A = 4;

export interface IosOptions {
  xcrunPath: string | null;
  /** The AXe executable; null = `axe` on PATH. */
  axePath: string | null;
  /** A running WebDriverAgent (DEVICERAIL_IOS_WDA_ENDPOINT, numeric loopback), used when AXe is absent. */
  wdaEndpoint?: string | null;
  /** How often the simulator list is polled for boots and shutdowns. */
  pollMs?: number;
  /** How long after connect an empty accessibility tree is waited for, once (readiness.ts; default 15 s). */
  axReadyWaitMs?: number;
  /** Where AXe is looked for after PATH when axePath is null (tests; default probe.ts AXE_CANDIDATES). */
  axeCandidates?: readonly string[];
  /** The PATH AXe is looked up on (tests; default the daemon's). */
  pathEnv?: string;
  log: Logger;
}

interface Attached {
  backend: Backend;
  hid: Hid | null;
  generation: number;
  /** The point scale (simctl getenv, else screenshot and tree) and where the tree lies on the screenshot. */
  screen: ScreenScale;
  ax: AxReadiness;
  viewport: Viewport | null;
  /** What the connect-time probe found (probe.ts): why the backend is not AXe, versions. */
  probe: BackendProbe;
}

/**
 * Booted, available iOS Simulators through simctl (node-simctl) for discovery, screenshots and
 * apps, and AXe for the UI tree and input when it is installed; otherwise screenshot-only.
 * Device ids are `ios-simulator:<udid>`; coordinates arrive in screenshot pixels and are
 * divided by the scale measured at run time before they reach AXe (which works in points).
 */
export class IosSimulatorDriver implements Driver {
  readonly name = "ios-simulator";
  readonly uiTrees = true;
  readonly elements: ElementInput;
  private readonly simctl: SimctlPort;
  private readonly axe: AxePort;
  private readonly known = new Map<string, { sim: SimDevice; info: DeviceInfo }>();
  private readonly attached = new Map<string, Attached>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private generations = 0;
  private polling = false;
  private readonly wda: WdaPort | null;

  constructor(private readonly opts: IosOptions) {
    this.simctl = new SimctlPort(opts.xcrunPath);
    this.axe = new AxePort(opts.axePath ?? "axe");
    if (opts.wdaEndpoint && !WDA_ENDPOINT.test(opts.wdaEndpoint))
      throw platformError(
        "ios_wda_endpoint_invalid",
        false,
        opts.wdaEndpoint,
        "the WebDriverAgent endpoint must be http://127.0.0.1:PORT or http://[::1]:PORT",
      );
    this.wda = opts.wdaEndpoint ? new WdaPort(opts.wdaEndpoint) : null;
    this.elements = {
      tapPoint: (id, p: Point, ctx) =>
        this.withInput(id, ctx, (_udid, a, hid) => hid.tap(...this.toPoints(a, p.x, p.y), ctx)),
      clearFocused: (id, ctx, hint) =>
        this.withInput(id, ctx, async (udid, a) => {
          if (a.backend === "wda") return this.wda?.keys("\b".repeat(Math.max(1, hint?.length ?? 64)), ctx);
          await this.axe.keyCombo(udid, [CMD], KEY_A, ctx);
          await this.axe.key(udid, KEYS.delete, ctx);
        }),
      typeText: (id, text, o, ctx) =>
        this.withInput(id, ctx, async (udid, a) => void (await this.type(udid, a, text, ctx, o.secret))),
    };
  }

  /** Semantic actions need a tree and input: not offered on a screenshot-only device. */
  supportsElements(deviceId: string): boolean {
    const b = this.attached.get(this.udidOf(deviceId))?.backend;
    return b === "axe" || b === "wda";
  }

  async start(onChange: (c: DeviceChange) => void, ctx: CallContext): Promise<void> {
    await this.poll(onChange, ctx);
    this.timer = setInterval(() => {
      if (this.polling) return;
      const c: CallContext = {
        signal: new AbortController().signal,
        deadline: Date.now() + 10_000,
        log: this.opts.log,
      };
      this.poll(onChange, c).catch((err) => this.opts.log.warn({ err: String(err) }, "simulator list failed"));
    }, this.opts.pollMs ?? 2_000);
  }

  /** One `simctl list`: Booted and available simulators are present, the rest gone. */
  private async poll(onChange: (c: DeviceChange) => void, ctx: CallContext): Promise<void> {
    this.polling = true;
    try {
      const booted = (await this.simctl.list(ctx)).filter(
        (d) => d.isAvailable && d.state === "Booted" && isIosSimulator(d),
      );
      const seen = new Set(booted.map((d) => d.udid));
      for (const [udid] of this.known)
        if (!seen.has(udid)) {
          this.known.delete(udid);
          this.attached.delete(udid);
          onChange({ type: "gone", deviceId: ID_PREFIX + udid });
        }
      for (const sim of booted) {
        if (this.known.has(sim.udid)) continue;
        const info: DeviceInfo = {
          id: ID_PREFIX + sim.udid,
          name: sim.name,
          platform: { kind: "ios" },
          osVersion: sim.osVersion,
          connected: false,
        };
        this.known.set(sim.udid, { sim, info });
        onChange({ type: "present", device: { ...info } });
      }
    } finally {
      this.polling = false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private udidOf(deviceId: string): string {
    if (!deviceId.startsWith(ID_PREFIX))
      throw new DriverError("protocol_error", { detail: `not an iOS simulator id: ${deviceId}` });
    return deviceId.slice(ID_PREFIX.length);
  }

  private session(deviceId: string, ctx: CallContext): { udid: string; a: Attached } {
    const udid = this.udidOf(deviceId);
    if (!this.known.has(udid))
      throw platformError(
        "ios_device_not_booted",
        true,
        `${udid} is not a booted simulator`,
        `simulator ${udid} is not booted`,
      );
    const a = this.attached.get(udid);
    if (!a) throw new DriverError("device_not_connected", { deviceId });
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    return { udid, a };
  }

  private async withInput(
    deviceId: string,
    ctx: CallContext,
    run: (udid: string, a: Attached, hid: Hid) => Promise<void>,
  ): Promise<void> {
    const { udid, a } = this.session(deviceId, ctx);
    if (!a.hid) throw inputUnavailable(a.probe);
    await run(udid, a, a.hid);
  }

  async connect(deviceId: string, ctx: CallContext): Promise<DeviceInfo> {
    const udid = this.udidOf(deviceId);
    const k = this.known.get(udid);
    if (!k)
      throw platformError("ios_device_not_booted", true, `${udid} is not booted`, `simulator ${udid} is not booted`);
    if (!this.attached.has(udid)) {
      const locate: LocateOptions = {
        axePath: this.opts.axePath,
        ...(this.opts.axeCandidates ? { axeCandidates: this.opts.axeCandidates } : {}),
        ...(this.opts.pathEnv !== undefined ? { pathEnv: this.opts.pathEnv } : {}),
      };
      const ports = { axe: this.axe, wda: this.wda, xcodeVersion: (c: CallContext) => this.simctl.xcodeVersion(c) };
      const { backend, hid, probe } = await pickBackend(udid, k.sim.name, ports, locate, ctx);
      const screen = new ScreenScale();
      await screen.readEnv(this.simctl, udid, ctx, this.opts.log);
      this.attached.set(udid, {
        backend,
        hid: timedHid(hid),
        generation: ++this.generations,
        screen,
        ax: new AxReadiness(this.opts.axReadyWaitMs),
        viewport: null,
        probe,
      });
      this.opts.log.info({ udid, backend, ...probeMetadata(probe), axePath: probe.axePath }, "simulator connected");
    }
    k.info = { ...k.info, connected: true };
    return { ...k.info };
  }

  async disconnect(deviceId: string): Promise<void> {
    const udid = this.udidOf(deviceId);
    this.attached.delete(udid);
    const k = this.known.get(udid);
    if (k) k.info = { ...k.info, connected: false };
  }

  async health(deviceId: string): Promise<void> {
    const udid = this.udidOf(deviceId);
    if (!this.known.has(udid))
      throw platformError("ios_device_not_booted", true, `${udid} is not booted`, `simulator ${udid} is not booted`);
  }

  async actions(deviceId: string): Promise<ActionDefinition[]> {
    return this.space(deviceId).definitions.map((d) => ({ ...d }));
  }

  classify(deviceId: string, name: string): Protection | undefined {
    return this.space(deviceId).classify(name);
  }

  /** The action space of the device's backend; a device not connected yet has simctl's only. */
  private space(deviceId: string) {
    return IOS_ACTIONS[this.attached.get(this.udidOf(deviceId))?.backend ?? "none"];
  }

  /** Pixels to points (scale.ts): refused while the scale is unknown or the layout cannot be mapped. */
  private toPoints(a: Attached, x: number, y: number): [number, number] {
    return a.screen.toPoints(x, y);
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const { udid, a } = this.session(deviceId, ctx);
    // A viewport is needed even when no screenshot is kept: measure one if none is known yet.
    const shoot = opts.screenshot || a.viewport === null;
    const hid = opts.uiTree ? a.hid : null;
    if (a.screen.wantsEnv()) await a.screen.readEnv(this.simctl, udid, ctx, this.opts.log);
    // Independent halves (observe-parts.ts): a failed tree read leaves the screenshot and says why.
    const parts = await screenshotAndTree(
      ctx,
      shoot ? (c) => this.simctl.screenshot(udid, c) : null,
      hid ? (c) => a.ax.settle(hid, c) : null,
    );
    const { png, tree: read } = parts;
    // No tree backend at all: the probe's reason is why there is no tree (ios_axe_xcode_unsupported…).
    let treeError = parts.treeError ?? (opts.uiTree && !a.hid ? a.probe.reason : null);
    if (png) {
      const size = pngSize(png);
      if (!size) throw platformError("ios_malformed_screenshot", true, "simctl screenshot is not a PNG");
      a.screen.onScreenshot(size);
      a.viewport = { width: size.width, height: size.height, scaleFactor: 1 };
    }
    const vp = a.viewport as Viewport;
    // Frames in points to screenshot pixels with the simulator's scale, placed by layout (scale.ts).
    let tree: ReturnType<typeof parseTree> | null = null;
    try {
      tree = read === null ? null : parseTree(read.json, (root) => a.screen.frameScale(root, vp));
    } catch (err) {
      if (!isOmission(err, ctx)) throw err;
      treeError = err;
    }
    rememberFields(a, tree);
    if (tree && !tree.empty) a.screen.place(tree.nodes, vp);
    treeError ??= read?.notReady ?? null;
    vp.scaleFactor = a.screen.scale ?? 1;
    return {
      viewport: { ...vp },
      screenshot: opts.screenshot ? png : null,
      uiTree:
        tree && !tree.empty
          ? {
              context: {
                contextKind: "native",
                contextId: tree.appName ?? "springboard",
                documentEpoch: `${a.generation}-${fingerprint(tree)}`,
              },
              nodes: tree.nodes,
            }
          : null,
      ...(treeError ? { uiTreeError: treeError } : {}),
      metadata: {
        ios: {
          udid,
          backend: a.backend,
          ...probeMetadata(a.probe),
          ...a.screen.metadata(),
          pointWidth: tree && !tree.empty ? tree.screen.width : null,
          ...(read ? { treeWaitMs: read.waitedMs } : {}),
          ...timingsMetadata(a.hid),
        },
      },
    };
  }

  private async type(
    udid: string,
    a: Attached,
    text: string,
    ctx: CallContext,
    secret = false,
  ): Promise<"axe" | "paste" | "wda"> {
    if (a.backend === "wda" && this.wda) {
      await this.wda.keys(text, ctx);
      return "wda";
    }
    // Tab and Return as keys, US-keyboard runs typed, the rest pasted; read back (exact-text.ts).
    const tree = async (c: CallContext) => (a.hid ? parseTree(await a.hid.tree(c), () => 1) : null);
    return typeExactly(
      a,
      axeTextPorts(udid, this.axe, (u, t, c) => this.simctl.pbcopy(u, t, c), tree),
      text,
      secret,
      ctx,
    );
  }

  async execute(
    deviceId: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    const { a } = this.session(deviceId, ctx);
    return timedAction(a.hid, call.name, () => this.run(deviceId, call, ctx));
  }

  private async run(
    deviceId: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    const { udid, a } = this.session(deviceId, ctx);
    refuseDoubleTap(call.name, a.backend);
    const p = IOS_ACTIONS[a.backend].parse(call.name, call.arguments);
    const hid = a.hid as Hid;
    const screen = a.viewport;
    // Points must lie on the newest screenshot; before the first one there is nothing to check against.
    const onScreen = (...points: [number, number][]) => {
      if (screen && points.some(([x, y]) => x >= screen.width || y >= screen.height))
        throw new DriverError("invalid_arguments", { action: p.name });
    };
    switch (p.name) {
      case "launch":
      case "terminate":
        await (p.name === "launch"
          ? this.simctl.launch(udid, p.args.bundleId, ctx)
          : this.simctl.terminate(udid, p.args.bundleId, ctx));
        return { output: { accepted: true } };
      case "openUrl":
        await this.simctl.openUrl(udid, p.args.url, ctx);
        return { output: { accepted: true } };
      case "setAppearance":
        await this.simctl.setAppearance(udid, p.args.appearance, ctx);
        return { output: { accepted: true, appearance: p.args.appearance } };
      case "tap":
      case "doubleTap":
      case "longPress": {
        onScreen([p.args.x, p.args.y]);
        const [x, y] = this.toPoints(a, p.args.x, p.args.y);
        if (p.name === "tap") await hid.tap(x, y, ctx);
        else if (p.name === "doubleTap") await hid.doubleTap(x, y, ctx);
        else await hid.longPress(x, y, (p.args.durationMs ?? 800) / 1000, ctx);
        return { output: { accepted: true, x: p.args.x, y: p.args.y } };
      }
      case "swipe": {
        const { startX, startY, endX, endY, durationMs } = p.args;
        onScreen([startX, startY], [endX, endY]);
        const [sx, sy] = this.toPoints(a, startX, startY);
        const [ex, ey] = this.toPoints(a, endX, endY);
        await hid.swipe({ x: sx, y: sy }, { x: ex, y: ey }, durationMs / 1000, ctx);
        return { output: { accepted: true, startX, startY, endX, endY, durationMs } };
      }
      case "scroll": {
        // The gesture is placed on the screen, so it needs one.
        if (!screen) throw new DriverError("invalid_arguments", { action: p.name });
        const { from, to } = scrollGesture(p.args, screen);
        const [fx, fy] = this.toPoints(a, from.x, from.y);
        const [tx, ty] = this.toPoints(a, to.x, to.y);
        await hid.swipe({ x: fx, y: fy }, { x: tx, y: ty }, 0.3, ctx);
        return { output: { accepted: true, deltaX: p.args.deltaX, deltaY: p.args.deltaY } };
      }
      case "inputText":
        return {
          output: {
            accepted: true,
            characters: [...p.args.text].length,
            via: await this.type(udid, a, p.args.text, ctx),
          },
        };
      case "inputSecret":
        await this.type(udid, a, p.args.secret, ctx, true);
        return { output: { accepted: true } };
      case "keyPress":
        await this.axe.key(udid, KEYS[p.args.key], ctx);
        return { output: { accepted: true, key: p.args.key } };
      case "home":
        await hid.home(ctx);
        return { output: { accepted: true } };
    }
  }
}
