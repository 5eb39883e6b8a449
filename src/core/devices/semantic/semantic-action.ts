import * as v from "valibot";
import type { CallContext, ElementInput } from "../../../driver/driver.ts";
import { DriverError, invalidArguments } from "../../../driver/driver-error.ts";
import { pause } from "../../../driver/pause.ts";
import { issueDetails } from "../../../protocol/issue-details.ts";
import type { Viewport } from "../../../protocol/types/device.ts";
import type { Observation } from "../../../protocol/types/observation.ts";
import {
  type ActionExecution,
  ClearElementArgumentsSchema,
  type ElementTarget,
  FindElementArgumentsSchema,
  type SemanticActionName,
  SetElementValueArgumentsSchema,
  TapElementArgumentsSchema,
  type UiContextRef,
  type UiNode,
  type UiNodeRef,
  WaitForElementArgumentsSchema,
  type WaitForElementCondition,
} from "../../../protocol/types/ui.ts";
import type { Connection } from "../../../rpc/connection.ts";
import type { Core } from "../../core.ts";
import { type Captured, type UiTree, observeRaw, recordObservation } from "../observe.ts";
import { DEFAULT_WAIT_MS } from "../../../protocol/ui-geometry.ts";
import {
  type NodePredicate,
  type SelectorSite,
  checkSelectorContext,
  compileSelector,
  resolveOne,
  visibleRect,
} from "./selector.ts";

/** How long waitForElement waits when the call sets no action budget (the reference's default). */
export { DEFAULT_WAIT_MS };
/** Pause between two UI-tree polls of waitForElement. */
export const WAIT_POLL_MS = 100;

export interface SemanticEnv {
  core: Core;
  conn: Connection;
  deviceId: string;
  redacted: boolean;
  ctx: CallContext;
  /** When waitForElement gives up with `matched: false`; null when only the call's deadlines bound it. */
  waitUntil: number | null;
  /** Records an observation taken during the action and returns it (its Evidence joins the result). */
  keep(c: Captured): Observation;
}

export interface SemanticOutcome {
  output: unknown;
  execution: ActionExecution;
  after: Observation;
}

const ARGUMENTS = {
  findElement: FindElementArgumentsSchema,
  tapElement: TapElementArgumentsSchema,
  clearElement: ClearElementArgumentsSchema,
  setElementValue: SetElementValueArgumentsSchema,
  waitForElement: WaitForElementArgumentsSchema,
} as const;

const sameContext = (a: UiContextRef, b: UiContextRef) =>
  a.contextKind === b.contextKind && a.contextId === b.contextId && a.documentEpoch === b.documentEpoch;

const stopIfAborted = (ctx: CallContext) => {
  if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
};

/**
 * Runs one semantic action (docs/protocol/devices-and-actions.md#semantic-actions) over a driver's UI trees and primitive input. `before` is the
 * recorded observation whose tree resolves the target; node references in the output point at it,
 * or at the after observation for waitForElement.
 */
export async function runSemantic(
  env: SemanticEnv,
  name: SemanticActionName,
  args: unknown,
  before: Captured,
): Promise<SemanticOutcome> {
  const parsed = v.safeParse(ARGUMENTS[name], args);
  if (!parsed.success)
    throw invalidArguments(name, issueDetails(ARGUMENTS[name], args, parsed.issues, { redact: env.redacted }));
  const at = (pointer: string): SelectorSite => ({ action: name, pointer, redact: env.redacted });
  const tree = before.tree as UiTree;
  const input = env.core.devices.driver(env.deviceId).elements as ElementInput;
  const ref = (node: UiNode, obs = before.observation, ctx = tree.context): UiNodeRef => ({
    observationId: obs.id,
    context: ctx,
    stableNodeId: node.stableNodeId,
  });
  const native: ActionExecution = {
    mode: tree.context.contextKind === "web" ? "webSemantic" : "nativeSemantic",
    context: tree.context,
  } as ActionExecution;
  const fallback: ActionExecution = {
    mode: "coordinateFallback",
    context: tree.context,
    fallbackReason: "semanticInteractionUnavailable",
  };

  switch (name) {
    case "findElement": {
      const a = parsed.output as v.InferOutput<typeof FindElementArgumentsSchema>;
      const predicate = compileSelector(a.selector, at("/selector"));
      checkSelectorContext(a.selector, tree.context);
      const node = resolveOne(tree.nodes, predicate);
      // Finding changes nothing on the device, so the before observation is also the after one.
      return { output: { element: ref(node) }, execution: native, after: before.observation };
    }
    case "tapElement": {
      const a = parsed.output as v.InferOutput<typeof TapElementArgumentsSchema>;
      const node = resolveTarget(env, a.target, tree, at("/target/selector"));
      const point = tapPoint(node, before.observation.viewport);
      let execution: ActionExecution = fallback;
      if (input.tapNode) {
        await input.tapNode(env.deviceId, node, env.ctx);
        execution = native;
      } else await input.tapPoint(env.deviceId, point, env.ctx);
      return { output: { element: ref(node) }, execution, after: await observeAfter(env) };
    }
    case "clearElement":
    case "setElementValue": {
      const a = parsed.output as v.InferOutput<typeof SetElementValueArgumentsSchema>;
      const value = name === "setElementValue" ? a.value : "";
      const node = resolveTarget(env, a.target, tree, at("/target/selector"));
      if (node.enabled === false) throw new DriverError("element_not_interactable");
      let execution: ActionExecution = fallback;
      if (input.setNodeValue) {
        await input.setNodeValue(env.deviceId, node, value, env.ctx);
        execution = native;
      } else {
        // Focus by tapping the field, then replace its text through the keyboard.
        await input.tapPoint(env.deviceId, tapPoint(node, before.observation.viewport), env.ctx);
        stopIfAborted(env.ctx);
        await input.clearFocused(env.deviceId, env.ctx, { length: [...(node.value ?? node.text ?? "")].length });
        stopIfAborted(env.ctx);
        if (value !== "") await input.typeText(env.deviceId, value, { secret: env.redacted }, env.ctx);
      }
      return { output: { element: ref(node) }, execution, after: await observeAfter(env) };
    }
    case "waitForElement": {
      const a = parsed.output as v.InferOutput<typeof WaitForElementArgumentsSchema>;
      return waitFor(
        env,
        a.selector.context === null ? null : a.selector,
        compileSelector(a.selector, at("/selector")),
        a.condition,
        before,
        native,
      );
    }
  }
}

/** The node a target names in the current tree, or the typed reason it cannot be used. */
function resolveTarget(env: SemanticEnv, target: ElementTarget, tree: UiTree, at: SelectorSite): UiNode {
  if (target.kind === "selector") {
    // Arguments are checked before the device state they are compared with.
    const predicate = compileSelector(target.selector, at);
    checkSelectorContext(target.selector, tree.context);
    return resolveOne(tree.nodes, predicate);
  }
  const wanted = target.node;
  const known = env.core.devices.trees.contextOf(env.deviceId, wanted.observationId);
  if (!known || !sameContext(known, wanted.context)) throw new DriverError("element_stale");
  if (wanted.context.contextKind !== tree.context.contextKind || wanted.context.contextId !== tree.context.contextId)
    throw new DriverError("ui_context_changed");
  if (wanted.context.documentEpoch !== tree.context.documentEpoch) throw new DriverError("element_stale");
  const node = tree.nodes.find((n) => n.stableNodeId === wanted.stableNodeId);
  if (!node) throw new DriverError("element_stale");
  return node;
}

/** The centre of the node's on-screen part; disabled, unhittable or off-screen nodes cannot be tapped. */
function tapPoint(node: UiNode, viewport: Viewport): { x: number; y: number } {
  const rect = visibleRect(node, viewport);
  if (!rect || node.enabled === false || node.hittable === false) throw new DriverError("element_not_interactable");
  // Floored, so that the point stays inside even a one-pixel-wide node.
  return { x: Math.floor(rect.x + rect.width / 2), y: Math.floor(rect.y + rect.height / 2) };
}

function observeAfter(env: SemanticEnv): Promise<Observation> {
  return recordAfter(
    env,
    observeRaw(env.core, env.deviceId, env.conn, env.ctx, { protectedAction: env.redacted, needTree: true }),
  );
}

async function recordAfter(env: SemanticEnv, pending: ReturnType<typeof observeRaw>): Promise<Observation> {
  return env.keep(await recordObservation(env.core, env.deviceId, await pending));
}

type Check = { matched: false } | { matched: true; node: UiNode | null };

function check(
  selector: Parameters<typeof checkSelectorContext>[0] | null,
  predicate: NodePredicate,
  condition: WaitForElementCondition,
  tree: UiTree,
  viewport: Viewport,
): Check {
  let inContext = true;
  try {
    if (selector) checkSelectorContext(selector, tree.context);
  } catch {
    inContext = false;
  }
  // A missing context is a state to wait through, like a missing element.
  if (condition === "absent")
    return inContext && tree.nodes.some(predicate) ? { matched: false } : { matched: true, node: null };
  let node: UiNode | null = null;
  try {
    if (inContext) node = resolveOne(tree.nodes, predicate);
  } catch (err) {
    // An ambiguous selector is an error: waiting cannot make it name one element.
    if (!(err instanceof DriverError) || err.driverCode !== "element_not_found") throw err;
  }
  if (!node) return { matched: false };
  if (condition === "visible" && !visibleRect(node, viewport)) return { matched: false };
  if (condition === "enabled" && node.enabled !== true) return { matched: false };
  return { matched: true, node };
}

/**
 * Polls trees without recording them until the condition holds, then confirms it on a full
 * observation that becomes the action's `after`. Only that confirmed observation stores Evidence.
 */
async function waitFor(
  env: SemanticEnv,
  selector: Parameters<typeof checkSelectorContext>[0] | null,
  predicate: NodePredicate,
  condition: WaitForElementCondition,
  before: Captured,
  execution: ActionExecution,
): Promise<SemanticOutcome> {
  const tree = before.tree as UiTree;
  const first = check(selector, predicate, condition, tree, before.observation.viewport);
  const output = (c: Check, obs: Observation, ctx: UiContextRef) => ({
    matched: c.matched,
    condition,
    element: c.matched && c.node ? { observationId: obs.id, context: ctx, stableNodeId: c.node.stableNodeId } : null,
  });
  if (first.matched)
    return { output: output(first, before.observation, tree.context), execution, after: before.observation };
  const opts = { protectedAction: env.redacted, needTree: true };
  for (;;) {
    const left = env.waitUntil === null ? WAIT_POLL_MS : env.waitUntil - Date.now();
    if (left <= 0)
      return {
        output: output({ matched: false }, before.observation, tree.context),
        execution,
        after: before.observation,
      };
    await pause(Math.min(WAIT_POLL_MS, left), env.ctx);
    const poll = await observeRaw(env.core, env.deviceId, env.conn, env.ctx, opts, false);
    const polled = poll.raw.uiTree as UiTree;
    if (!check(selector, predicate, condition, polled, poll.raw.viewport).matched) continue;
    const full = await observeRaw(env.core, env.deviceId, env.conn, env.ctx, opts);
    const fullTree = full.raw.uiTree as UiTree;
    const confirmed = check(selector, predicate, condition, fullTree, full.raw.viewport);
    if (!confirmed.matched) continue;
    const after = env.keep(await recordObservation(env.core, env.deviceId, full));
    return {
      output: output(confirmed, after, fullTree.context),
      execution: { ...execution, context: fullTree.context },
      after,
    };
  }
}
