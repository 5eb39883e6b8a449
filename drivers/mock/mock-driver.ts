import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../src/protocol/types/device.ts";
import {
  type CallContext,
  type DeviceChange,
  type Driver,
  type ElementInput,
  type ObserveOptions,
  type Point,
  type Protection,
  type RawObservation,
  abortable,
} from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { renderReceived } from "../../src/protocol/issue-details.ts";
import { MOCK_ACTIONS } from "./actions.ts";
import { MOCK_APP_ID, MockApp, SCREEN } from "./mock-app.ts";
import { renderScreen } from "./mock-screen.ts";

/** The reference Mock's fixed 1×1 RGBA PNG (docs/protocol/devices-and-actions.md#the-mock-device), kept for tests that need a minimal valid PNG. */
export const MOCK_PNG = Uint8Array.from(
  Buffer.from(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63089af3ea3f0005f402d88de408210000000049454e44ae426082",
    "hex",
  ),
);

export interface MockOptions {
  /** How many mock devices to expose: mock-1 … mock-N (a farm in a box for multi-client tests). */
  count?: number;
  /** Observations and/or actions never finish until their call is aborted (cancellation tests). */
  hang?: "none" | "observe" | "execute" | "all";
  /** Ids become PREFIX-mock-N, so the mocks of several hosts (a farm) are told apart. */
  idPrefix?: string | null;
}

/** Waits until the call is aborted, then fails the way a driver stopped by its caller does. */
const hangUntilAborted = (ctx: CallContext): Promise<never> => abortable(new Promise<never>(() => {}), ctx);

/**
 * A point outside the screen is invalid_arguments, checked here rather than in the schema because
 * the advertised documents must stay the reference Mock's, which bounds coordinates below only
 * (README.md, Compatibility notes). Like the Android driver, the check runs when the call is made.
 */
function refuseOffScreen(action: string, point: { x: number; y: number }): void {
  const limits = { x: SCREEN.width, y: SCREEN.height };
  const issues = (["x", "y"] as const)
    .filter((axis) => point[axis] >= limits[axis])
    .map((axis) => ({
      pointer: `/${axis}`,
      expected: `${axis} from 0 to ${limits[axis] - 1}`,
      received: renderReceived(point[axis], false),
    }));
  const [first] = issues;
  if (!first) return;
  const viewport = { width: SCREEN.width, height: SCREEN.height };
  throw DriverError.withDetails("invalid_arguments", {
    action,
    pointer: first.pointer,
    expected: first.expected,
    received: first.received,
    issues,
    viewport,
  });
}

interface MockDevice {
  info: DeviceInfo;
  app: MockApp;
}

/**
 * The Mock devices: the reference's identity and action space (docs/protocol/devices-and-actions.md#the-mock-device) in front of a small
 * scripted app (mock-app.ts) whose screenshots are rendered from its UI tree, so semantic actions
 * and demos show real behaviour. Deterministic: the same calls give the same trees and bytes.
 */
export class MockDriver implements Driver {
  readonly name = "mock";
  readonly uiTrees = true;
  readonly elements: ElementInput;
  private readonly devices = new Map<string, MockDevice>();
  private frameSequence = 0;
  private readonly hang: NonNullable<MockOptions["hang"]>;

  constructor(opts: MockOptions = {}) {
    this.hang = opts.hang ?? "none";
    const count = Math.max(1, opts.count ?? 1);
    for (let i = 1; i <= count; i++) {
      const id = opts.idPrefix ? `${opts.idPrefix}-mock-${i}` : `mock-${i}`;
      const name = count === 1 ? "DeviceRail Mock Device" : `DeviceRail Mock Device ${i}`;
      this.devices.set(id, {
        info: { id, name, platform: { kind: "mock" }, osVersion: "0.1", connected: false },
        app: new MockApp(),
      });
    }
    this.elements = {
      tapPoint: (deviceId: string, p: Point, ctx: CallContext) =>
        this.input(deviceId, ctx, (app) => void app.tap(p.x, p.y)),
      clearFocused: (deviceId: string, ctx: CallContext) => this.input(deviceId, ctx, (app) => app.clearFocused()),
      typeText: (deviceId: string, text: string, o: { secret: boolean }, ctx: CallContext) =>
        this.input(deviceId, ctx, (app) => app.type(text, o.secret)),
    };
  }

  async start(onChange: (change: DeviceChange) => void, _ctx: CallContext): Promise<void> {
    for (const d of this.devices.values()) onChange({ type: "present", device: { ...d.info } });
  }

  async stop(): Promise<void> {}

  private device(deviceId: string): MockDevice {
    const d = this.devices.get(deviceId);
    if (!d) throw new DriverError("protocol_error", { detail: `unknown mock device ${deviceId}` });
    return d;
  }

  /** The connected device for a call that has not been aborted yet. */
  private connected(deviceId: string, ctx: CallContext): MockDevice {
    const d = this.device(deviceId);
    if (!d.info.connected) throw new DriverError("device_not_connected", { deviceId });
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    return d;
  }

  private async input(deviceId: string, ctx: CallContext, run: (app: MockApp) => void): Promise<void> {
    const { app } = this.connected(deviceId, ctx);
    if (this.hang === "execute" || this.hang === "all") await hangUntilAborted(ctx);
    run(app);
  }

  async connect(deviceId: string): Promise<DeviceInfo> {
    const d = this.device(deviceId);
    d.info.connected = true;
    return { ...d.info };
  }

  async disconnect(deviceId: string): Promise<void> {
    this.device(deviceId).info.connected = false;
  }

  async health(deviceId: string): Promise<void> {
    this.device(deviceId);
  }

  async actions(deviceId: string): Promise<ActionDefinition[]> {
    this.device(deviceId);
    return MOCK_ACTIONS.definitions.map((a) => ({ ...a }));
  }

  classify(_deviceId: string, name: string): Protection | undefined {
    return MOCK_ACTIONS.classify(name);
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const { app } = this.connected(deviceId, ctx);
    if (this.hang === "observe" || this.hang === "all") await hangUntilAborted(ctx);
    app.tick();
    const nodes = app.tree();
    return {
      viewport: { width: SCREEN.width, height: SCREEN.height, scaleFactor: 1 },
      screenshot: opts.screenshot
        ? renderScreen(nodes, { dark: app.darkMode, focusedNodeId: app.focusedNodeId() })
        : null,
      uiTree: opts.uiTree ? { context: app.context(), nodes } : null,
      metadata: {
        frameSequence: ++this.frameSequence,
        foregroundApp: MOCK_APP_ID,
        screen: app.screen,
        ...this.uiStates(app, opts),
      },
    };
  }

  /** Like Android's, only alongside a tree (the states are keyed by its node ids) and only when some node has one. */
  private uiStates(app: MockApp, opts: ObserveOptions): { uiStates?: ReturnType<MockApp["states"]> } {
    const states = opts.uiTree ? app.states() : {};
    return Object.keys(states).length ? { uiStates: states } : {};
  }

  async execute(
    deviceId: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    const { app } = this.connected(deviceId, ctx);
    const p = MOCK_ACTIONS.parse(call.name, call.arguments);
    if (p.name === "tap") refuseOffScreen(p.name, p.args);
    if (this.hang === "execute" || this.hang === "all") await hangUntilAborted(ctx);
    switch (p.name) {
      case "tap":
        app.tap(p.args.x, p.args.y);
        return { output: { accepted: true, x: p.args.x, y: p.args.y } };
      case "scroll":
        return { output: { accepted: true, deltaX: p.args.deltaX, deltaY: p.args.deltaY } };
      case "back":
        app.goBack();
        return { output: { accepted: true } };
      case "inputSecret":
        // The value is consumed, never echoed or kept in the clear.
        app.type(p.args.secret, true);
        return { output: { accepted: true } };
      case "inputText":
        app.type(p.args.text, false);
        return { output: { accepted: true, characters: [...p.args.text].length } };
    }
  }
}
