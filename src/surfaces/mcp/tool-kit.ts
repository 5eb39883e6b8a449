/**
 * What the MCP tools share, in terms of the protocol: an observation listed with refs
 * (device.observe and the tree), device.execute within the action budget with failures a model
 * can act on, the disambiguation rule of src/surfaces/interaction for tapElement, and the result lines.
 * Over 300 lines because every tool module leans on these helpers; splitting them would scatter
 * one small vocabulary.
 */
import type { ActionResult } from "../../protocol/types/action.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { ElementSelector, ElementTarget, UiNodeRef, UiSnapshot } from "../../protocol/types/ui.ts";
import { RemoteError } from "../../client/remote-error.ts";
import {
  closestNodes,
  firstOffered,
  foregroundOf,
  missing,
  onlyTappable,
  type SelectorMatcher,
  toolsFor as toolsOffered,
  uiStatesOf,
} from "../interaction/index.ts";
import type { EvidenceSource } from "../../client/in-process.ts";
import type { ModelImages } from "./image.ts";
import type { Lane, McpClient } from "./lanes.ts";
import { ToolError, type ToolResult, success } from "./results.ts";
import type { McpSelector } from "./tool-inputs.ts";
import { type RefBook, type TreeListing, diffLines, treeLines } from "./tree-text.ts";

export interface CallDeps {
  client: McpClient;
  /** The budget of one device action (DEVICERAIL_MCP_ACTION_TIMEOUT_MS). */
  actionTimeoutMs: number;
  refs: RefBook;
  images: ModelImages;
  evidence: EvidenceSource;
  /** The daemon's own selector predicate, handed in by the server, so a match here is a match to tapElement. */
  matchSelector: SelectorMatcher;
  signal: AbortSignal;
}

const ELEMENT_ERRORS = new Set(["element_not_found", "element_ambiguous", "element_not_interactable"]);
const STALE = new Set(["element_stale", "ui_context_changed", "ui_snapshot_not_found"]);
/** Failures after which an action may or may not have taken effect. */
const OUTCOME_UNKNOWN = new Set([
  "action_timed_out",
  "request_timed_out",
  "driver_timed_out",
  "request_cancelled",
  "device_not_connected",
  "internal_error",
]);

/** The tools the device can do, for an unsupported_on_device answer. */
export const toolsFor = (lane: Lane) => toolsOffered(lane.actions.map((d) => d.name));

/** The first of `names` the device offers, or unsupported_on_device naming the tools it can do. */
export function need(lane: Lane, tool: string, names: string[]): string {
  const found = firstOffered(
    lane.actions.map((d) => d.name),
    names,
  );
  if (found) return found;
  throw new ToolError(
    "unsupported_on_device",
    `${lane.deviceId} cannot do ${tool} (it has ${missing(names)})`,
    false,
    { tool, deviceId: lane.deviceId, availableTools: toolsFor(lane) },
    [`tools this device can do: ${toolsFor(lane).join(", ")}`],
  );
}

export const fullSelector = (s: McpSelector): ElementSelector => ({
  context: null,
  css: null,
  role: s.role ?? null,
  name: s.name ?? null,
  value: s.value ?? null,
  identifier: s.identifier ?? null,
  text: s.text
    ? { value: s.text.value, mode: s.text.mode ?? "exact", caseSensitive: s.text.caseSensitive ?? true }
    : null,
});

export const describeSelector = (s: McpSelector) => JSON.stringify(s);

/** An observation with its tree listed (refs given), for the tools and for error answers. */
async function observeListed(
  deps: CallDeps,
  lane: Lane,
): Promise<{ o: Observation; listing: TreeListing | null; previous: TreeListing | null; nodeCount: number }> {
  const o = await lane.call("device.observe", undefined, deps.signal);
  if (!o.uiSnapshot) return { o, listing: null, previous: null, nodeCount: 0 };
  const snapshot = await treeOf(deps, lane, o);
  const { listing, previous } = deps.refs.list(lane.deviceId, snapshot, o.viewport, uiStatesOf(o.metadata));
  return { o, listing, previous, nodeCount: snapshot.nodes.length };
}

/**
 * The tree of an observation this client just made: its stored evidence, read by digest (the store
 * checks the bytes against it) as GET /evidence does, which spares ui.snapshot.get's search of the
 * Session's log. Anything unexpected falls back to ui.snapshot.get and its typed errors.
 */
async function treeOf(deps: CallDeps, lane: Lane, o: Observation): Promise<UiSnapshot> {
  const sha = o.uiSnapshot?.evidence.sha256;
  const stored = sha ? await deps.evidence.read(sha).catch(() => null) : null;
  if (stored) {
    try {
      const snapshot = JSON.parse(new TextDecoder().decode(stored.bytes)) as UiSnapshot;
      if (snapshot.observationId === o.id && Array.isArray(snapshot.nodes)) return snapshot;
    } catch {}
  }
  return await lane.call("ui.snapshot.get", { observationId: o.id }, deps.signal);
}

export async function observeTool(
  deps: CallDeps,
  lane: Lane,
  want: { image: boolean; tree: boolean; diff: boolean },
): Promise<ToolResult> {
  const { o, listing, previous, nodeCount } = want.tree
    ? await observeListed(deps, lane)
    : { o: await lane.call("device.observe", undefined, deps.signal), listing: null, previous: null, nodeCount: 0 };
  const lines = [
    `observation ${o.id} of ${lane.deviceId} (session ${lane.sessionId})`,
    `foreground: ${foregroundOf(o.metadata) ?? "unknown"}`,
    `screen: ${o.viewport.width}x${o.viewport.height} device px`,
  ];
  const structured: Record<string, unknown> = {
    deviceId: lane.deviceId,
    sessionId: lane.sessionId,
    observationId: o.id,
    foreground: foregroundOf(o.metadata),
    viewport: o.viewport,
    image: null,
  };
  let image;
  if (want.image) {
    const sha = o.screenshot?.sha256;
    if (!sha) lines.push(`image: none (${o.screenshotOmission ?? "not captured"})`);
    else {
      image = await deps.images.encode(sha, async () => {
        const stored = await deps.evidence.read(sha);
        if (!stored)
          throw new ToolError("evidence_not_found", `the screenshot ${sha} is not in the evidence store`, true);
        return stored.bytes;
      });
      const scale = Number(image.scale.toFixed(4));
      lines.push(
        `image: ${image.width}x${image.height} ${image.mimeType}, ${image.data.length} bytes, scale ${scale} (device x = image x / ${scale}); evidence devicerail://evidence/${sha}`,
      );
      structured.image = {
        width: image.width,
        height: image.height,
        scale,
        bytes: image.data.length,
        mimeType: image.mimeType,
        sha256: sha,
      };
    }
  }
  if (want.tree) {
    if (!listing) lines.push(`elements: none (${o.uiSnapshotOmission ?? "no tree"})`);
    else {
      const { lines: tree, truncated } = treeLines(listing);
      lines.push(
        `elements: ${listing.elements.length} listed of ${nodeCount} nodes${truncated ? " (cut)" : ""}`,
        ...tree,
      );
      if (want.diff) lines.push(...diffLines(previous, listing));
      structured.elements = listing.elements.length;
      structured.truncated = truncated;
    }
  }
  return success(lines, structured, image);
}

/** An element's node reference and centre, from a ref or by finding a selector. */
export async function locate(
  deps: CallDeps,
  lane: Lane,
  a: { ref?: string; selector?: McpSelector },
): Promise<{ node: UiNodeRef; centre: { x: number; y: number }; label: string }> {
  if (a.ref !== undefined) {
    const r = deps.refs.resolve(lane.deviceId, a.ref);
    if ("problem" in r) throw new ToolError("stale_ref", r.problem, false, { ref: a.ref });
    return { node: r.node, centre: r.element.centre, label: `${r.element.ref} ${r.element.body}` };
  }
  const found = await execute(deps, lane, "findElement", { selector: fullSelector(a.selector as McpSelector) }, a);
  const node = (found.output as { element: UiNodeRef }).element;
  const { listing } = await observeListed(deps, lane);
  const element = listing?.elements.find((e) => e.node.stableNodeId === node.stableNodeId);
  if (!element)
    throw new ToolError(
      "element_not_interactable",
      `the element matching ${describeSelector(a.selector as McpSelector)} is not visible on the screen`,
      false,
    );
  return { node, centre: element.centre, label: `${element.ref} ${element.body}` };
}

export const targetOf = (deps: CallDeps, lane: Lane, a: { ref?: string; selector?: McpSelector }): ElementTarget => {
  if (a.selector) return { kind: "selector", selector: fullSelector(a.selector) };
  const r = deps.refs.resolve(lane.deviceId, a.ref as string);
  if ("problem" in r) throw new ToolError("stale_ref", r.problem, false, { ref: a.ref });
  return { kind: "node", node: r.node };
};

/**
 * One device.execute, within the action budget (a model is better served by action_timed_out with
 * its outcome unknown than by a call that hangs until its host gives up); its failure becomes a ToolError with what a model needs next: for element
 * errors the closest elements and the screen, for a stale ref the advice to observe again, and
 * for a failure mid-action that its outcome is unknown.
 */
export async function execute(
  deps: CallDeps,
  lane: Lane,
  name: string,
  args: object,
  aim: { ref?: string; selector?: McpSelector } = {},
  actionTimeoutMs = deps.actionTimeoutMs,
): Promise<ActionResult> {
  const params = { id: crypto.randomUUID(), name, arguments: args, actionTimeoutMs };
  try {
    return await lane.call("device.execute", params, deps.signal);
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
    const code = err.error.data.code;
    if (aim.ref !== undefined && STALE.has(code))
      throw new ToolError(
        "stale_ref",
        `the screen changed since ${aim.ref} was listed: call ui_tree or device_observe and use a ref from the new listing`,
        false,
        { ref: aim.ref, cause: code },
      );
    if (ELEMENT_ERRORS.has(code)) {
      const what = aim.selector
        ? `selector ${describeSelector(aim.selector)}`
        : aim.ref !== undefined
          ? `ref ${aim.ref}`
          : null;
      const screen = await screenLines(deps, lane, aim.selector);
      const e = ToolError.fromRpc(err.error, screen.lines);
      throw new ScreenError(
        e.code,
        what ? `${e.message} (${what})` : e.message,
        e.retryable,
        e.details,
        e.lines,
        screen.seen,
      );
    }
    const unknown = OUTCOME_UNKNOWN.has(code)
      ? [`outcome: unknown — ${name} may or may not have taken effect; observe before trying again`]
      : [];
    throw ToolError.fromRpc(err.error, unknown);
  }
}

/**
 * What an element failure's answer observed: the tree, recorded in the Session, so node references
 * into it are honoured.
 */
interface Seen {
  o: Observation;
  snapshot: UiSnapshot;
}

/** An element failure with the screen read right after it. */
class ScreenError extends ToolError {
  constructor(
    code: string,
    message: string,
    retryable: boolean,
    details: Record<string, unknown>,
    lines: string[],
    readonly seen: Seen | null,
  ) {
    super(code, message, retryable, details, lines);
  }
}

/** The closest elements to a selector and the current screen, observed (and recorded) now. */
export async function screenLines(
  deps: CallDeps,
  lane: Lane,
  selector: McpSelector | undefined,
): Promise<{ lines: string[]; seen: Seen | null }> {
  try {
    const o = await lane.call("device.observe", undefined, deps.signal);
    if (!o.uiSnapshot)
      return { lines: [`screen: ${foregroundOf(o.metadata) ?? "unknown"} (no element tree)`], seen: null };
    const snapshot = await treeOf(deps, lane, o);
    const { listing } = deps.refs.list(lane.deviceId, snapshot, o.viewport, uiStatesOf(o.metadata));
    const byId = new Map(listing.elements.map((e) => [e.node.stableNodeId, e]));
    const closest = selector
      ? closestNodes(snapshot.nodes, fullSelector(selector), deps.matchSelector, 5)
          .map((i) => byId.get(snapshot.nodes[i]?.stableNodeId ?? ""))
          .filter((e) => e !== undefined)
      : [];
    const { lines } = treeLines(listing, 4_000);
    return {
      lines: [
        ...(closest.length
          ? ["closest elements:", ...closest.map((e) => `  ${e.ref} ${e.body}`)]
          : selector
            ? ["closest elements: none alike"]
            : []),
        `screen (observation ${o.id}, foreground ${foregroundOf(o.metadata) ?? "unknown"}):`,
        ...lines.map((l) => `  ${l}`),
      ],
      seen: { o, snapshot },
    };
  } catch {
    return { lines: [], seen: null };
  }
}

/**
 * tapElement on a ref or selector, with the disambiguation rule every surface applies
 * (src/surfaces/interaction/element-actions.ts): a selector several elements match, of which exactly one
 * can be tapped, taps that one through a node reference into the observation read after the
 * ambiguous attempt (which the Session records before it), and says so in a note.
 */
export async function tapElement(
  deps: CallDeps,
  lane: Lane,
  a: { ref?: string; selector?: McpSelector },
): Promise<{ r: ActionResult; note: string | null }> {
  try {
    return { r: await execute(deps, lane, "tapElement", { target: targetOf(deps, lane, a) }, a), note: null };
  } catch (e) {
    const seen = e instanceof ScreenError && e.code === "element_ambiguous" && a.selector ? e.seen : null;
    const only =
      seen && a.selector
        ? onlyTappable(
            seen.snapshot,
            seen.o.viewport,
            deps.matchSelector(fullSelector(a.selector)),
            `selector ${describeSelector(a.selector)}`,
          )
        : null;
    if (!only) throw e;
    return { r: await execute(deps, lane, "tapElement", { target: only.target }, a), note: only.note };
  }
}

export const actionLine = (label: string, lane: Lane, name: string, r: ActionResult) =>
  `${label} on ${lane.deviceId}: ok (${name}, ${r.finishedAtMs - r.startedAtMs} ms, action ${r.callId}, session ${lane.sessionId})`;

/**
 * The element a semantic action reports, as the device's latest listing shows it (ref and line),
 * if listed.
 */
export function elementNamed(deps: CallDeps, lane: Lane, r: ActionResult | null): string | null {
  const element = (r?.output as { element?: UiNodeRef | null } | null)?.element;
  if (!element) return null;
  const listed = deps.refs.latest(lane.deviceId)?.elements.find((e) => e.node.stableNodeId === element.stableNodeId);
  return listed ? `${listed.ref} ${listed.short}` : null;
}

export const acted = (
  lane: Lane,
  lines: string[],
  results: { name: string; r: ActionResult }[],
  extra: Record<string, unknown> = {},
) =>
  success(lines, {
    deviceId: lane.deviceId,
    sessionId: lane.sessionId,
    actions: results.map(({ name, r }) => ({ name, actionId: r.callId, output: r.output })),
    actionId: results.at(-1)?.r.callId,
    ...extra,
  });
