import type { ActionDefinition } from "../protocol/types/action.ts";
import type { DeviceInfo, Viewport } from "../protocol/types/device.ts";
import type { UiContextRef, UiNode } from "../protocol/types/ui.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { DriverError } from "./driver-error.ts";

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
 * Runs `onAbort` once when `signal` aborts: at once when it already has (a listener added then
 * would never hear it), else on the abort. Returns what removes the listener again.
 */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * Runs the parts of one observation side by side, each under a signal of its own that follows the
 * call's. The first part to fail aborts the others at once, so a screenshot never waits out its
 * deadline after the tree failed; settles only once every part has ended, so no child process or
 * device stream outlives the call; rejects with that first failure (in time, not argument order).
 */
export async function allEnded<T extends readonly unknown[]>(
  ctx: CallContext,
  ...parts: { [K in keyof T]: (ctx: CallContext) => Promise<T[K]> }
): Promise<T> {
  const linked = new AbortController();
  const unfollow = whenAborted(ctx.signal, () => linked.abort(ctx.signal.reason));
  const inner: CallContext = { ...ctx, signal: linked.signal };
  let first: { error: unknown } | null = null;
  try {
    const settled = await Promise.allSettled(
      parts.map(async (part) => {
        try {
          return await part(inner);
        } catch (error) {
          first ??= { error };
          linked.abort("sibling failed");
          throw error;
        }
      }),
    );
    if (first) throw (first as { error: unknown }).error;
    return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
  } finally {
    unfollow();
  }
}

/**
 * `work`, or driver_cancelled as soon as `ctx.signal` aborts, for work that cannot take a signal
 * itself (it keeps running; its own timeout must end it). The abort listener goes with the work.
 */
export function abortable<T>(work: Promise<T>, ctx: Pick<CallContext, "signal">): Promise<T> {
  const { signal } = ctx;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(new DriverError("driver_cancelled"));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DriverError("driver_cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export type Protection = "standard" | "protected";

/** What a driver captured; core turns it into a protocol Observation and stores the bytes as Evidence. */
export interface RawObservation {
  viewport: Viewport;
  /** PNG bytes, or null when the caller asked for no screenshot. */
  screenshot: Uint8Array | null;
  /** The UI tree, when asked for and the device can give one (nodes in preorder, docs/protocol/devices-and-actions.md#ui-snapshots). */
  uiTree?: { context: UiContextRef; nodes: UiNode[] } | null;
  /**
   * Why `uiTree` is null although it was asked for: the tree's own typed error. The rest of the
   * observation (the screenshot) is still valid; core records the reason as `metadata.uiTreeError`
   * and fails semantic actions that need the tree with this error.
   */
  uiTreeError?: DriverError | null;
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
 * The primitive UI input core composes into the five semantic actions (docs/protocol/devices-and-actions.md#semantic-actions), offered only by a
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
  /** The battery level in percent where the platform reports one; null (or absent) where it has none. */
  battery?(deviceId: string, ctx: CallContext): Promise<number | null>;
  /** The action space: names, JSON Schema of arguments (2020-12, object root), protection. */
  actions(deviceId: string, ctx: CallContext): Promise<ActionDefinition[]>;
  /** Protection of an action name without I/O; undefined for names the device does not know. */
  classify(deviceId: string, name: string): Protection | undefined;
  /** Captures a screenshot and/or UI tree as asked; throws device_not_connected when disconnected. */
  observe(deviceId: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation>;
  /** Runs one action with validated-by-driver arguments and returns its action-specific output. */
  execute(deviceId: string, call: { name: string; arguments: unknown }, ctx: CallContext): Promise<{ output: unknown }>;
}
