import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../src/protocol/types/device.ts";
import type { CallContext, DeviceChange, Driver, ObserveOptions, Protection, RawObservation } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";

/** The reference Mock's fixed 1×1 RGBA PNG (09 §1): every screenshot is this Evidence. */
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
    case "inputSecret":
      return keys === "secret" && typeof args.secret === "string" && /^[\u0020-\u007e]{1,1024}$/.test(args.secret);
    default:
      return false;
  }
}

/**
 * The deterministic Mock device of the reference (09 §1): always present, a fixed 1280×720
 * screenshot, and tap / inputText / scroll that echo what they were given.
 */
export class MockDriver implements Driver {
  readonly name = "mock";
  readonly uiTrees = false;
  private readonly devices = new Map<string, DeviceInfo>();
  private frameSequence = 0;
  private readonly hang: NonNullable<MockOptions["hang"]>;

  constructor(opts: MockOptions = {}) {
    this.hang = opts.hang ?? "none";
    const count = Math.max(1, opts.count ?? 1);
    for (let i = 1; i <= count; i++) {
      const id = `mock-${i}`;
      this.devices.set(id, { id, name: count === 1 ? "DeviceRail Mock Device" : `DeviceRail Mock Device ${i}`, platform: { kind: "mock" }, osVersion: "0.1", connected: false });
    }
  }

  async start(onChange: (change: DeviceChange) => void, _ctx: CallContext): Promise<void> {
    for (const device of this.devices.values()) onChange({ type: "present", device: { ...device } });
  }

  async stop(): Promise<void> {}

  private device(deviceId: string): DeviceInfo {
    const d = this.devices.get(deviceId);
    if (!d) throw new DriverError("protocol_error", { detail: `unknown mock device ${deviceId}` });
    return d;
  }

  private connected(deviceId: string): DeviceInfo {
    const d = this.device(deviceId);
    if (!d.connected) throw new DriverError("device_not_connected", { deviceId });
    return d;
  }

  async connect(deviceId: string): Promise<DeviceInfo> {
    const d = this.device(deviceId);
    d.connected = true;
    return { ...d };
  }

  async disconnect(deviceId: string): Promise<void> {
    this.device(deviceId).connected = false;
  }

  async health(deviceId: string): Promise<void> {
    this.device(deviceId);
  }

  async actions(deviceId: string): Promise<ActionDefinition[]> {
    this.device(deviceId);
    return ACTIONS.map((a) => ({ ...a }));
  }

  classify(_deviceId: string, name: string): Protection | undefined {
    return ACTIONS.find((a) => a.name === name)?.protection ?? (ACTIONS.some((a) => a.name === name) ? "standard" : undefined);
  }

  async observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    this.connected(deviceId);
    if (this.hang === "observe" || this.hang === "all") await hangUntilAborted(ctx);
    return {
      viewport: { width: 1280, height: 720, scaleFactor: 1 },
      screenshot: opts.screenshot ? MOCK_PNG : null,
      metadata: { frameSequence: ++this.frameSequence },
    };
  }

  async execute(deviceId: string, call: { name: string; arguments: unknown }, ctx: CallContext): Promise<{ output: unknown }> {
    this.connected(deviceId);
    const { name } = call;
    if (!ACTIONS.some((a) => a.name === name)) throw new DriverError("unknown_action", { action: name });
    if (!validArguments(name, call.arguments)) throw new DriverError("invalid_arguments", { action: name });
    if (this.hang === "execute" || this.hang === "all") await hangUntilAborted(ctx);
    const a = call.arguments as Record<string, number | string>;
    if (name === "tap") return { output: { accepted: true, x: a.x, y: a.y } };
    if (name === "scroll") return { output: { accepted: true, deltaX: a.deltaX, deltaY: a.deltaY } };
    // The value is consumed, never echoed or kept.
    if (name === "inputSecret") return { output: { accepted: true } };
    return { output: { accepted: true, characters: [...String(a.text)].length } };
  }
}
