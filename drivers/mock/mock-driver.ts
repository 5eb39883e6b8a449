import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../src/protocol/types/device.ts";
import type { CallContext, DeviceChange, Driver, ElementInput, ObserveOptions, Point, Protection, RawObservation } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { MOCK_APP_ID, MockApp, SCREEN } from "./mock-app.ts";
import { renderScreen } from "./mock-screen.ts";

/** The reference Mock's fixed 1×1 RGBA PNG (09 §1), kept for tests that need a minimal valid PNG. */
export const MOCK_PNG = Uint8Array.from(
  Buffer.from(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63089af3ea3f0005f402d88de408210000000049454e44ae426082",
    "hex",
  ),
);

const SCHEMAS = {
  tap: { type: "object", additionalProperties: false, required: ["x", "y"], properties: { x: { type: "number", minimum: 0 }, y: { type: "number", minimum: 0 } } },
  inputText: { type: "object", additionalProperties: false, required: ["text"], properties: { text: { type: "string" } } },
  scroll: { type: "object", additionalProperties: false, required: ["deltaX", "deltaY"], properties: { deltaX: { type: "number" }, deltaY: { type: "number" } } },
  back: { type: "object", additionalProperties: false, properties: {} },
  inputSecret: {
    type: "object",
    additionalProperties: false,
    required: ["secret"],
    properties: { secret: { type: "string", minLength: 1, maxLength: 1024, pattern: "^[\\u0020-\\u007e]+$" } },
  },
} as const;

// `protection` is left out for standard actions: on the wire it is written only when "protected"
// (05 §6). inputSecret is not in the reference's Mock; it lets the protected-action path (hidden
// unless negotiated, redacted records, no screenshots) be exercised without a phone.
const ACTIONS: ActionDefinition[] = [
  { name: "tap", description: "Tap a point in device coordinates", inputSchema: SCHEMAS.tap },
  { name: "inputText", description: "Type text into the focused control", inputSchema: SCHEMAS.inputText },
  { name: "scroll", description: "Scroll by a device-coordinate delta", inputSchema: SCHEMAS.scroll },
  { name: "back", description: "Go back one screen", inputSchema: SCHEMAS.back },
  { name: "inputSecret", description: "Type a protected printable-ASCII value into the focused control", inputSchema: SCHEMAS.inputSecret, protection: "protected" },
];

export interface MockOptions {
  /** How many mock devices to expose: mock-1 … mock-N (a farm in a box for multi-client tests). */
  count?: number;
  /** Observations and/or actions never finish until their call is aborted (cancellation tests). */
  hang?: "none" | "observe" | "execute" | "all";
}

/** Waits until the call is aborted, then fails the way a driver stopped by its caller does. */
function hangUntilAborted(ctx: CallContext): Promise<never> {
  return new Promise((_, reject) => {
    const stop = () => reject(new DriverError("driver_cancelled"));
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener("abort", stop, { once: true });
  });
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** Checks arguments against the action's closed object schema; the reason is never sent to clients. */
function validArguments(name: string, args: unknown): boolean {
  if (!isObject(args)) return false;
  const keys = Object.keys(args).sort().join(",");
  switch (name) {
    case "tap":
      return keys === "x,y" && isNumber(args.x) && isNumber(args.y) && args.x >= 0 && args.y >= 0;
    case "inputText":
      return keys === "text" && typeof args.text === "string";
    case "scroll":
      return keys === "deltaX,deltaY" && isNumber(args.deltaX) && isNumber(args.deltaY);
    case "back":
      return keys === "";
    case "inputSecret":
      return keys === "secret" && typeof args.secret === "string" && /^[\u0020-\u007e]{1,1024}$/.test(args.secret);
    default:
      return false;
  }
}

interface MockDevice {
  info: DeviceInfo;
  app: MockApp;
}

/**
 * The Mock devices: the reference's identity and action space (09 §1) in front of a small
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
      const id = `mock-${i}`;
      const name = count === 1 ? "DeviceRail Mock Device" : `DeviceRail Mock Device ${i}`;
      this.devices.set(id, { info: { id, name, platform: { kind: "mock" }, osVersion: "0.1", connected: false }, app: new MockApp() });
    }
    this.elements = {
      tapPoint: (deviceId: string, p: Point, ctx: CallContext) => this.input(deviceId, ctx, (app) => void app.tap(p.x, p.y)),
      clearFocused: (deviceId: string, ctx: CallContext) => this.input(deviceId, ctx, (app) => app.clearFocused()),
      typeText: (deviceId: string, text: string, o: { secret: boolean }, ctx: CallContext) => this.input(deviceId, ctx, (app) => app.type(text, o.secret)),
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
    return ACTIONS.map((a) => ({ ...a }));
  }

  classify(_deviceId: string, name: string): Protection | undefined {
    const a = ACTIONS.find((d) => d.name === name);
    return a ? (a.protection ?? "standard") : undefined;
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const { app } = this.connected(deviceId, ctx);
    if (this.hang === "observe" || this.hang === "all") await hangUntilAborted(ctx);
    app.tick();
    const nodes = app.tree();
    return {
      viewport: { width: SCREEN.width, height: SCREEN.height, scaleFactor: 1 },
      screenshot: opts.screenshot ? renderScreen(nodes, { dark: app.darkMode, focusedNodeId: app.focusedNodeId() }) : null,
      uiTree: opts.uiTree ? { context: app.context(), nodes } : null,
      metadata: { frameSequence: ++this.frameSequence, foregroundApp: MOCK_APP_ID, screen: app.screen },
    };
  }

  async execute(deviceId: string, call: { name: string; arguments: unknown }, ctx: CallContext): Promise<{ output: unknown }> {
    const { app } = this.connected(deviceId, ctx);
    const { name } = call;
    if (!ACTIONS.some((a) => a.name === name)) throw new DriverError("unknown_action", { action: name });
    if (!validArguments(name, call.arguments)) throw new DriverError("invalid_arguments", { action: name });
    if (this.hang === "execute" || this.hang === "all") await hangUntilAborted(ctx);
    const a = call.arguments as Record<string, number | string>;
    switch (name) {
      case "tap":
        app.tap(Number(a.x), Number(a.y));
        return { output: { accepted: true, x: a.x, y: a.y } };
      case "scroll":
        return { output: { accepted: true, deltaX: a.deltaX, deltaY: a.deltaY } };
      case "back":
        app.goBack();
        return { output: { accepted: true } };
      case "inputSecret":
        // The value is consumed, never echoed or kept in the clear.
        app.type(String(a.secret), true);
        return { output: { accepted: true } };
      default:
        app.type(String(a.text), false);
        return { output: { accepted: true, characters: [...String(a.text)].length } };
    }
  }
}
