import { allEnded, type CallContext, type DeviceChange, type Driver, type ElementInput, type Logger, type ObserveOptions, type Point, type Protection, type RawObservation } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pngSize } from "../../src/driver/png.ts";
import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo, Viewport } from "../../src/protocol/types/device.ts";
import { AXE_ACTIONS, KEYS, SIMCTL_ACTIONS, URL_PATTERN } from "./actions.ts";
import { AxePort } from "./axe-port.ts";
import { type AxeTree, parseAxeTree } from "./parse/axe-tree.ts";
import type { SimDevice } from "./parse/simctl.ts";
import { SimctlPort } from "./simctl-port.ts";
import { platformError } from "./tool-process.ts";
import { WDA_ENDPOINT, WdaPort } from "./wda-port.ts";

export const ID_PREFIX = "ios-simulator:";
const US_KEYBOARD = /^[\u0020-\u007e\n\t]+$/;
/** HID codes for Cmd+V and Cmd+A. */
const CMD = 227;
const KEY_V = 25;
const KEY_A = 4;
/** How long an observation waits for the accessibility tree that is empty right after boot. */
const EMPTY_TREE_WAIT_MS = 5_000;

export interface IosOptions {
  xcrunPath: string | null;
  /** The AXe executable; null = `axe` on PATH. */
  axePath: string | null;
  /** A running WebDriverAgent (DEVICERAIL_IOS_WDA_ENDPOINT, numeric loopback), used when AXe is absent. */
  wdaEndpoint?: string | null;
  /** How often the simulator list is polled for boots and shutdowns. */
  pollMs?: number;
  log: Logger;
}

/** Input and tree of one backend, in points. */
interface Hid {
  tree(ctx: CallContext): Promise<string>;
  tap(x: number, y: number, ctx: CallContext): Promise<void>;
  doubleTap(x: number, y: number, ctx: CallContext): Promise<void>;
  longPress(x: number, y: number, seconds: number, ctx: CallContext): Promise<void>;
  swipe(from: { x: number; y: number }, to: { x: number; y: number }, seconds: number, ctx: CallContext): Promise<void>;
  home(ctx: CallContext): Promise<void>;
}

interface Attached {
  backend: "axe" | "wda" | "none";
  hid: Hid | null;
  generation: number;
  /** Screenshot pixels per point, from the newest screenshot and tree. */
  scale: number | null;
  pointWidth: number | null;
  viewport: Viewport | null;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const int = (x: unknown, min = 0, max = 4294967295): x is number => typeof x === "number" && Number.isInteger(x) && x >= min && x <= max;
const only = (a: Record<string, unknown>, req: string[], opt: string[] = []) => req.every((k) => k in a) && Object.keys(a).every((k) => req.includes(k) || opt.includes(k));

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
    if (opts.wdaEndpoint && !WDA_ENDPOINT.test(opts.wdaEndpoint)) throw platformError("ios_wda_endpoint_invalid", false, opts.wdaEndpoint, "the WebDriverAgent endpoint must be http://127.0.0.1:PORT or http://[::1]:PORT");
    this.wda = opts.wdaEndpoint ? new WdaPort(opts.wdaEndpoint) : null;
    this.elements = {
      tapPoint: (id, p: Point, ctx) => this.withInput(id, ctx, (_udid, a, hid) => hid.tap(...this.toPoints(a, p.x, p.y), ctx)),
      clearFocused: (id, ctx, hint) =>
        this.withInput(id, ctx, async (udid, a) => {
          if (a.backend === "wda") return this.wda?.keys("\b".repeat(Math.max(1, hint?.length ?? 64)), ctx);
          await this.axe.keyCombo(udid, [CMD], KEY_A, ctx);
          await this.axe.key(udid, KEYS.delete, ctx);
        }),
      typeText: (id, text, _o, ctx) => this.withInput(id, ctx, async (udid, a) => void (await this.type(udid, a, text, ctx))),
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
      const c: CallContext = { signal: new AbortController().signal, deadline: Date.now() + 10_000, log: this.opts.log };
      this.poll(onChange, c).catch((err) => this.opts.log.warn({ err: String(err) }, "simulator list failed"));
    }, this.opts.pollMs ?? 2_000);
  }

  /** One `simctl list`: Booted and available simulators are present, the rest gone. */
  private async poll(onChange: (c: DeviceChange) => void, ctx: CallContext): Promise<void> {
    this.polling = true;
    try {
      const booted = (await this.simctl.list(ctx)).filter((d) => d.isAvailable && d.state === "Booted");
      const seen = new Set(booted.map((d) => d.udid));
      for (const [udid] of this.known)
        if (!seen.has(udid)) {
          this.known.delete(udid);
          this.attached.delete(udid);
          onChange({ type: "gone", deviceId: ID_PREFIX + udid });
        }
      for (const sim of booted) {
        if (this.known.has(sim.udid)) continue;
        const info: DeviceInfo = { id: ID_PREFIX + sim.udid, name: sim.name, platform: { kind: "ios" }, osVersion: sim.osVersion, connected: false };
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
    if (!deviceId.startsWith(ID_PREFIX)) throw new DriverError("protocol_error", { detail: `not an iOS simulator id: ${deviceId}` });
    return deviceId.slice(ID_PREFIX.length);
  }

  private session(deviceId: string, ctx: CallContext): { udid: string; a: Attached } {
    const udid = this.udidOf(deviceId);
    if (!this.known.has(udid)) throw platformError("ios_device_not_booted", true, `${udid} is not a booted simulator`, `simulator ${udid} is not booted`);
    const a = this.attached.get(udid);
    if (!a) throw new DriverError("device_not_connected", { deviceId });
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    return { udid, a };
  }

  private async withInput(deviceId: string, ctx: CallContext, run: (udid: string, a: Attached, hid: Hid) => Promise<void>): Promise<void> {
    const { udid, a } = this.session(deviceId, ctx);
    if (!a.hid) throw platformError("ios_input_unavailable", false, "no input backend", "this simulator has no input backend: install AXe (brew install cameroncooke/axe/axe)");
    await run(udid, a, a.hid);
  }

  /** The backend's action space: AXe all of it, WebDriverAgent all but keyPress, none only simctl's. */
  private defs(a: Attached | undefined): ActionDefinition[] {
    if (a?.backend === "axe") return AXE_ACTIONS;
    if (a?.backend === "wda") return AXE_ACTIONS.filter((d) => d.name !== "keyPress");
    return SIMCTL_ACTIONS;
  }

  async connect(deviceId: string, ctx: CallContext): Promise<DeviceInfo> {
    const udid = this.udidOf(deviceId);
    const k = this.known.get(udid);
    if (!k) throw platformError("ios_device_not_booted", true, `${udid} is not booted`, `simulator ${udid} is not booted`);
    if (!this.attached.has(udid)) {
      const { backend, hid } = await this.pickBackend(udid, k.sim.name, ctx);
      this.attached.set(udid, { backend, hid, generation: ++this.generations, scale: null, pointWidth: null, viewport: null });
      this.opts.log.info({ udid, backend }, "simulator connected");
    }
    k.info = { ...k.info, connected: true };
    return { ...k.info };
  }

  /** AXe when it is new enough; else a WebDriverAgent that is ready and drives this simulator; else none. */
  private async pickBackend(udid: string, name: string, ctx: CallContext): Promise<{ backend: Attached["backend"]; hid: Hid | null }> {
    if (await this.axe.usable(ctx)) {
      const axe = this.axe;
      return {
        backend: "axe",
        hid: {
          tree: (c) => axe.describeUi(udid, c),
          tap: (x, y, c) => axe.tap(udid, x, y, c),
          doubleTap: (x, y, c) => axe.doubleTap(udid, x, y, c),
          longPress: (x, y, s, c) => axe.longPress(udid, x, y, s, c),
          swipe: (f, t, s, c) => axe.swipe(udid, f, t, s, c),
          home: (c) => axe.button(udid, "home", c),
        },
      };
    }
    const wda = this.wda;
    if (wda && (await wda.matches(name, ctx)))
      return {
        backend: "wda",
        hid: {
          tree: (c) => wda.sourceAsAxe(c),
          tap: (x, y, c) => wda.tap(x, y, c),
          doubleTap: (x, y, c) => wda.doubleTap(x, y, c),
          longPress: (x, y, s, c) => wda.touchAndHold(x, y, s, c),
          swipe: (f, t, s, c) => wda.drag(f, t, s, c),
          home: (c) => wda.home(c),
        },
      };
    return { backend: "none", hid: null };
  }

  async disconnect(deviceId: string): Promise<void> {
    const udid = this.udidOf(deviceId);
    this.attached.delete(udid);
    const k = this.known.get(udid);
    if (k) k.info = { ...k.info, connected: false };
  }

  async health(deviceId: string): Promise<void> {
    const udid = this.udidOf(deviceId);
    if (!this.known.has(udid)) throw platformError("ios_device_not_booted", true, `${udid} is not booted`, `simulator ${udid} is not booted`);
  }

  async actions(deviceId: string): Promise<ActionDefinition[]> {
    const a = this.attached.get(this.udidOf(deviceId));
    return this.defs(a).map((d) => ({ ...d }));
  }

  classify(deviceId: string, name: string): Protection | undefined {
    const a = this.attached.get(this.udidOf(deviceId));
    const d = this.defs(a).find((x) => x.name === name);
    return d ? (d.protection ?? "standard") : undefined;
  }

  /** Pixels to points with the measured scale (research §3); unknown scale means no screenshot yet. */
  private toPoints(a: Attached, x: number, y: number): [number, number] {
    const s = a.scale ?? 1;
    return [Math.round((x / s) * 100) / 100, Math.round((y / s) * 100) / 100];
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const { udid, a } = this.session(deviceId, ctx);
    // A viewport is needed even when no screenshot is kept: measure one if none is known yet.
    const shoot = opts.screenshot || a.viewport === null;
    const [png, json] = await allEnded(shoot ? this.simctl.screenshot(udid, ctx) : Promise.resolve(null), opts.uiTree && a.hid ? this.treeJson(a.hid, ctx) : Promise.resolve(null));
    if (png) {
      const size = pngSize(png);
      if (!size) throw platformError("ios_malformed_screenshot", true, "simctl screenshot is not a PNG");
      a.viewport = { width: size.width, height: size.height, scaleFactor: a.pointWidth ? size.width / a.pointWidth : (a.viewport?.scaleFactor ?? 1) };
    }
    // Scale = screenshot width ÷ root frame width, measured on this very pair (research §3).
    const tree = json === null ? null : parseTree(json, (screen) => (a.viewport as Viewport).width / screen.width);
    if (tree && !tree.empty) {
      a.pointWidth = tree.screen.width;
      a.scale = (a.viewport as Viewport).width / tree.screen.width;
      (a.viewport as Viewport).scaleFactor = a.scale;
    }
    return {
      viewport: { ...(a.viewport as Viewport) },
      screenshot: opts.screenshot ? png : null,
      uiTree: tree && !tree.empty ? { context: { contextKind: "native", contextId: tree.appName ?? "springboard", documentEpoch: `${a.generation}-${fingerprint(tree)}` }, nodes: tree.nodes } : null,
      metadata: { ios: { udid, backend: a.backend, scale: a.scale, pointWidth: a.pointWidth } },
    };
  }

  /** describe-ui, polled briefly while it is still the bare root of a just-booted simulator. */
  private async treeJson(hid: Hid, ctx: CallContext): Promise<string> {
    const until = Math.min(Date.now() + EMPTY_TREE_WAIT_MS, ctx.deadline ?? Number.POSITIVE_INFINITY);
    for (;;) {
      const json = await hid.tree(ctx);
      if (!parseTree(json, () => 1).empty || Date.now() >= until) return json;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private async type(udid: string, a: Attached, text: string, ctx: CallContext): Promise<"axe" | "paste" | "wda"> {
    if (a.backend === "wda" && this.wda) {
      await this.wda.keys(text, ctx);
      return "wda";
    }
    if (US_KEYBOARD.test(text)) {
      await this.axe.type(udid, text, ctx);
      return "axe";
    }
    // Not on a US keyboard: through the pasteboard (stdin) and Cmd+V.
    await this.simctl.pbcopy(udid, text, ctx);
    await this.axe.keyCombo(udid, [CMD], KEY_V, ctx);
    return "paste";
  }

  async execute(deviceId: string, call: { name: string; arguments: unknown }, ctx: CallContext): Promise<{ output: unknown }> {
    const { udid, a } = this.session(deviceId, ctx);
    const defs = this.defs(a);
    const hid = a.hid as Hid;
    if (!defs.some((d) => d.name === call.name)) throw new DriverError("unknown_action", { action: call.name });
    const args = call.arguments;
    const bad = () => new DriverError("invalid_arguments", { action: call.name });
    if (!isObject(args)) throw bad();
    const screen = a.viewport;
    const inside = (x: number, y: number) => !screen || (x < screen.width && y < screen.height);
    switch (call.name) {
      case "launch":
      case "terminate":
        if (!only(args, ["bundleId"]) || typeof args.bundleId !== "string" || !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(args.bundleId)) throw bad();
        await (call.name === "launch" ? this.simctl.launch(udid, args.bundleId, ctx) : this.simctl.terminate(udid, args.bundleId, ctx));
        return { output: { accepted: true } };
      case "openUrl":
        if (!only(args, ["url"]) || typeof args.url !== "string" || !URL_PATTERN.test(args.url)) throw bad();
        await this.simctl.openUrl(udid, args.url, ctx);
        return { output: { accepted: true } };
      case "setAppearance":
        if (!only(args, ["appearance"]) || (args.appearance !== "light" && args.appearance !== "dark")) throw bad();
        await this.simctl.setAppearance(udid, args.appearance, ctx);
        return { output: { accepted: true, appearance: args.appearance } };
      case "tap":
      case "doubleTap":
      case "longPress": {
        if (!only(args, ["x", "y"], call.name === "longPress" ? ["durationMs"] : []) || !int(args.x) || !int(args.y) || !inside(args.x, args.y)) throw bad();
        if (args.durationMs !== undefined && !int(args.durationMs, 1, 60000)) throw bad();
        const [x, y] = this.toPoints(a, args.x, args.y);
        if (call.name === "tap") await hid.tap(x, y, ctx);
        else if (call.name === "doubleTap") await hid.doubleTap(x, y, ctx);
        else await hid.longPress(x, y, ((args.durationMs as number | undefined) ?? 800) / 1000, ctx);
        return { output: { accepted: true, x: args.x, y: args.y } };
      }
      case "swipe": {
        if (!only(args, ["startX", "startY", "endX", "endY", "durationMs"]) || ![args.startX, args.startY, args.endX, args.endY].every((v) => int(v)) || !int(args.durationMs, 1, 60000)) throw bad();
        if (!inside(args.startX as number, args.startY as number) || !inside(args.endX as number, args.endY as number)) throw bad();
        const [sx, sy] = this.toPoints(a, args.startX as number, args.startY as number);
        const [ex, ey] = this.toPoints(a, args.endX as number, args.endY as number);
        await hid.swipe({ x: sx, y: sy }, { x: ex, y: ey }, args.durationMs / 1000, ctx);
        return { output: { accepted: true, startX: args.startX, startY: args.startY, endX: args.endX, endY: args.endY, durationMs: args.durationMs } };
      }
      case "scroll": {
        if (!only(args, ["deltaX", "deltaY"]) || !int(args.deltaX, -100000, 100000) || !int(args.deltaY, -100000, 100000) || (args.deltaX === 0 && args.deltaY === 0) || !screen) throw bad();
        const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));
        const cx = screen.width / 2;
        const cy = screen.height / 2;
        const from = { x: clamp(cx + args.deltaX / 2, screen.width * 0.25, screen.width * 0.75), y: clamp(cy + args.deltaY / 2, screen.height * 0.25, screen.height * 0.75) };
        const to = { x: clamp(cx - args.deltaX / 2, screen.width * 0.25, screen.width * 0.75), y: clamp(cy - args.deltaY / 2, screen.height * 0.25, screen.height * 0.75) };
        const [fx, fy] = this.toPoints(a, from.x, from.y);
        const [tx, ty] = this.toPoints(a, to.x, to.y);
        await hid.swipe({ x: fx, y: fy }, { x: tx, y: ty }, 0.3, ctx);
        return { output: { accepted: true, deltaX: args.deltaX, deltaY: args.deltaY } };
      }
      case "inputText":
        if (!only(args, ["text"]) || typeof args.text !== "string" || args.text.length === 0 || [...args.text].length > 4096) throw bad();
        return { output: { accepted: true, characters: [...args.text].length, via: await this.type(udid, a, args.text, ctx) } };
      case "inputSecret":
        if (!only(args, ["secret"]) || typeof args.secret !== "string" || args.secret.length === 0 || args.secret.length > 1024) throw bad();
        await this.type(udid, a, args.secret, ctx);
        return { output: { accepted: true } };
      case "keyPress":
        if (!only(args, ["key"]) || typeof args.key !== "string" || !(args.key in KEYS)) throw bad();
        await this.axe.key(udid, KEYS[args.key as keyof typeof KEYS], ctx);
        return { output: { accepted: true, key: args.key } };
      case "home":
        if (!only(args, [])) throw bad();
        await hid.home(ctx);
        return { output: { accepted: true } };
    }
    throw new DriverError("unknown_action", { action: call.name });
  }
}

function parseTree(json: string, scaleOf: (screen: { width: number; height: number }) => number): AxeTree {
  try {
    return parseAxeTree(json, scaleOf);
  } catch (err) {
    throw platformError("ios_malformed_tree", false, (err as Error).message);
  }
}

/** The screen's structure (roles and ids, not texts): a new epoch when the app navigates. */
function fingerprint(t: AxeTree): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const n of t.nodes) h.update(`${n.stableNodeId}|${n.role}|${n.identifier ?? ""}\n`);
  return h.digest("hex").slice(0, 16);
}
