import type { ActionDefinition } from "../protocol/types/action.ts";
import type { DeviceInfo, Viewport } from "../protocol/types/device.ts";
import type { UiContextRef, UiNode } from "../protocol/types/ui.ts";
import type { Logger } from "../rpc/rpc-error.ts";

export type { Logger };

/** Passed last to every device-touching call: stop when `signal` aborts; finish before `deadline`. */
export interface CallContext {
  readonly signal: AbortSignal;
  /** Absolute epoch ms, or null for no deadline. */
  readonly deadline: number | null;
  readonly log: Logger;
}

/** Milliseconds a call may still take: the earlier of its deadline and `ceilingMs`, never negative. */
export function budgetMs(ctx: CallContext, ceilingMs: number): number {
  return Math.max(0, Math.min(ceilingMs, ctx.deadline === null ? ceilingMs : ctx.deadline - Date.now()));
}

/**
 * Like Promise.all for the parts of one observation, but settles only when every part has ended,
 * so a screenshot still running when the tree failed (a child process, a device stream) never
 * outlives the call that started it; rejects with the first failure in argument order.
 */
export async function allEnded<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === "rejected") throw ra.reason;
  if (rb.status === "rejected") throw rb.reason;
  return [ra.value, rb.value];
}

export type Protection = "standard" | "protected";

/** What a driver captured; core turns it into a protocol Observation and stores the bytes as Evidence. */
export interface RawObservation {
  viewport: Viewport;
  /** PNG bytes, or null when the caller asked for no screenshot. */
  screenshot: Uint8Array | null;
  /** The UI tree, when asked for and the device can give one (nodes in preorder, 08 §2). */
  uiTree?: { context: UiContextRef; nodes: UiNode[] } | null;
  metadata: Record<string, unknown>;
}

export interface ObserveOptions {
  screenshot: boolean;
  uiTree: boolean;
}

/** A point in screenshot pixels, the space UI-tree bounds are in. */
export interface Point {
  x: number;
  y: number;
}

/**
 * The primitive UI input core composes into the five semantic actions (08 §3), offered only by a
 * driver that also produces UI trees. The optional native members let a platform act on a node
 * itself; without them core falls back to a coordinate tap and reports that in `execution`.
 */
export interface ElementInput {
  /** Taps one point given in screenshot pixels. */
  tapPoint(deviceId: string, point: Point, ctx: CallContext): Promise<void>;
  /** Deletes all text of the focused input field; `hint.length` is its text length when known. */
  clearFocused(deviceId: string, ctx: CallContext, hint?: { length: number }): Promise<void>;
  /**
   * Types into the focused field. With `secret` the text must travel only through a channel that
   * is never logged and never part of a child process's argv.
   */
  typeText(deviceId: string, text: string, opts: { secret: boolean }, ctx: CallContext): Promise<void>;
  /** Activates the node natively (accessibility press), when the platform can. */
  tapNode?(deviceId: string, node: UiNode, ctx: CallContext): Promise<void>;
  /** Replaces the node's value natively, when the platform can; `value` is secret. */
  setNodeValue?(deviceId: string, node: UiNode, value: string, ctx: CallContext): Promise<void>;
}

export type DeviceChange = { type: "present"; device: DeviceInfo } | { type: "gone"; deviceId: string };

/**
 * The port every driver implements. Errors are DriverErrors; every call honours its CallContext.
 */
export interface Driver {
  /** A short name for logs ("mock", "android", "ios-simulator"). */
  readonly name: string;
  /**
   * Whether this driver can produce UI trees at all. A driver that cannot makes no UI-snapshot claim
   * on its observations, which keeps its Sessions readable by clients older than protocol 1.5.
   */
  readonly uiTrees: boolean;
  /** Present when core may build the semantic actions on this driver (requires `uiTrees`). */
  readonly elements?: ElementInput;
  /** Whether one device can back `elements` now (a per-device backend may lack input); default yes. */
  supportsElements?(deviceId: string): boolean;
  /** Starts discovery and reports devices as they appear, change or go, until stop(). */
  start(onChange: (change: DeviceChange) => void, ctx: CallContext): Promise<void>;
  /** Stops discovery and releases every resource (processes, sockets); idempotent. */
  stop(): Promise<void>;
  /** Connects (idempotent) and returns the refreshed DeviceInfo with `connected: true`. */
  connect(deviceId: string, ctx: CallContext): Promise<DeviceInfo>;
  /** Disconnects (idempotent). */
  disconnect(deviceId: string, ctx: CallContext): Promise<void>;
  /** Cheap, non-mutating probe; throws the DriverError that explains why the device cannot be used. */
  health(deviceId: string, ctx: CallContext): Promise<void>;
  /** The action space: names, JSON Schema of arguments (2020-12, object root), protection. */
  actions(deviceId: string, ctx: CallContext): Promise<ActionDefinition[]>;
  /** Protection of an action name without I/O; undefined for names the device does not know. */
  classify(deviceId: string, name: string): Protection | undefined;
  /** Captures a screenshot and/or UI tree as asked; throws device_not_connected when disconnected. */
  observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation>;
  /** Runs one action with validated-by-driver arguments and returns its action-specific output. */
  execute(deviceId: string, call: { name: string; arguments: unknown }, ctx: CallContext): Promise<{ output: unknown }>;
}
