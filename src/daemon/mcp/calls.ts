/**
 * What each MCP tool does, in terms of the protocol: an observation (device.observe and
 * ui.snapshot.get) or one or two device.execute calls in the client's Session on the device.
 */
import * as v from "valibot";
import type { ActionResult } from "../../protocol/types/action.ts";
import type { DevicesListResult } from "../../protocol/types/device.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { ElementSelector, ElementTarget, UiNodeRef, UiSnapshot } from "../../protocol/types/ui.ts";
import { RpcFailure } from "../../transports/local-rpc.ts";
import { uiStatesOf } from "../cli/device-commands.ts";
import { foregroundOf } from "../cli/element-failure.ts";
import { closestNodes } from "../cli/refs.ts";
import type { EvidenceSource } from "../../transports/http-api.ts";
import type { ModelImages } from "./image.ts";
import type { Lane, McpClient } from "./lanes.ts";
import { ToolError, type ToolResult, success } from "./results.ts";
import { INPUTS, type McpSelector, type ToolInput, type ToolName } from "./tools.ts";
import { type RefBook, type TreeListing, diffLines, treeLines } from "./tree-text.ts";

export interface CallDeps {
  client: McpClient;
  /** The budget of one device action (DEVICERAIL_MCP_ACTION_TIMEOUT_MS). */
  actionTimeoutMs: number;
  refs: RefBook;
  images: ModelImages;
  evidence: EvidenceSource;
  signal: AbortSignal;
}

/** Which device actions each device tool needs (any one of them). */
export const TOOL_ACTIONS: Partial<Record<ToolName, string[]>> = {
  tap: ["tap", "tapElement"],
  double_tap: ["doubleTap"],
  long_press: ["longPress"],
  swipe: ["swipe", "scroll"],
  type_text: ["inputText"],
  press_key: ["keyPress", "back", "home", "recentApps"],
  launch_app: ["launch"],
  terminate_app: ["terminate"],
  open_url: ["openUrl"],
  wait_for: ["waitForElement"],
  set_secret: ["inputSecret", "setElementValue"],
};

const ELEMENT_ERRORS = new Set(["element_not_found", "element_ambiguous", "element_not_interactable"]);
const STALE = new Set(["element_stale", "ui_context_changed", "ui_snapshot_not_found"]);
/** Failures after which an action may or may not have taken effect. */
const OUTCOME_UNKNOWN = new Set(["action_timed_out", "request_timed_out", "driver_timed_out", "request_cancelled", "device_not_connected", "internal_error"]);

/** The tools the device can do, for an unsupported_on_device answer. */
export function toolsFor(lane: Lane): string[] {
  const always = ["device_observe", "screenshot", "ui_tree", "session_verdict"];
  return [...always, ...Object.entries(TOOL_ACTIONS).filter(([, names]) => names.some((n) => lane.has(n))).map(([tool]) => tool)].sort();
}

function need(lane: Lane, tool: ToolName | "type_text with submit", names: string[]): string {
  const found = names.find((n) => lane.has(n));
  if (found) return found;
  throw new ToolError("unsupported_on_device", `${lane.deviceId} cannot do ${tool} (it has no ${names.join(" or ")} action)`, false, { tool, deviceId: lane.deviceId, availableTools: toolsFor(lane) }, [
    `tools this device can do: ${toolsFor(lane).join(", ")}`,
  ]);
}

const fullSelector = (s: McpSelector): ElementSelector => ({
  context: null,
  css: null,
  role: s.role ?? null,
  name: s.name ?? null,
  value: s.value ?? null,
  identifier: s.identifier ?? null,
  text: s.text ? { value: s.text.value, mode: s.text.mode ?? "exact", caseSensitive: s.text.caseSensitive ?? true } : null,
});

const describeSelector = (s: McpSelector) => JSON.stringify(s);

/** An observation with its tree listed (refs given), for the tools and for error answers. */
async function observeListed(deps: CallDeps, lane: Lane): Promise<{ o: Observation; listing: TreeListing | null; previous: TreeListing | null; nodeCount: number }> {
  const o = (await lane.call("device.observe", undefined, deps.signal)).result as Observation;
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
  return (await lane.call("ui.snapshot.get", { observationId: o.id }, deps.signal)).result as UiSnapshot;
}

export async function observeTool(deps: CallDeps, lane: Lane, want: { image: boolean; tree: boolean; diff: boolean }): Promise<ToolResult> {
  const { o, listing, previous, nodeCount } = want.tree ? await observeListed(deps, lane) : { o: (await lane.call("device.observe", undefined, deps.signal)).result as Observation, listing: null, previous: null, nodeCount: 0 };
  const lines = [
    `observation ${o.id} of ${lane.deviceId} (session ${lane.sessionId})`,
    `foreground: ${foregroundOf(o.metadata) ?? "unknown"}`,
    `screen: ${o.viewport.width}x${o.viewport.height} device px`,
  ];
  const structured: Record<string, unknown> = { deviceId: lane.deviceId, sessionId: lane.sessionId, observationId: o.id, foreground: foregroundOf(o.metadata), viewport: o.viewport, image: null };
  let image;
  if (want.image) {
    const sha = o.screenshot?.sha256;
    if (!sha) lines.push(`image: none (${o.screenshotOmission ?? "not captured"})`);
    else {
      image = await deps.images.encode(sha, async () => {
        const stored = await deps.evidence.read(sha);
        if (!stored) throw new ToolError("evidence_not_found", `the screenshot ${sha} is not in the evidence store`, true);
        return stored.bytes;
      });
      const scale = Number(image.scale.toFixed(4));
      lines.push(`image: ${image.width}x${image.height} ${image.mimeType}, ${image.data.length} bytes, scale ${scale} (device x = image x / ${scale}); evidence devicerail://evidence/${sha}`);
      structured.image = { width: image.width, height: image.height, scale, bytes: image.data.length, mimeType: image.mimeType, sha256: sha };
    }
  }
  if (want.tree) {
    if (!listing) lines.push(`elements: none (${o.uiSnapshotOmission ?? "no tree"})`);
    else {
      const { lines: tree, truncated } = treeLines(listing);
      lines.push(`elements: ${listing.elements.length} listed of ${nodeCount} nodes${truncated ? " (cut)" : ""}`, ...tree);
      if (want.diff) lines.push(...diffLines(previous, listing));
      structured.elements = listing.elements.length;
      structured.truncated = truncated;
    }
  }
  return success(lines, structured, image);
}

/** An element's node reference and centre, from a ref or by finding a selector. */
async function locate(deps: CallDeps, lane: Lane, a: { ref?: string; selector?: McpSelector }): Promise<{ node: UiNodeRef; centre: { x: number; y: number }; label: string }> {
  if (a.ref !== undefined) {
    const r = deps.refs.resolve(lane.deviceId, a.ref);
    if ("problem" in r) throw new ToolError("stale_ref", r.problem, false, { ref: a.ref });
    return { node: r.node, centre: r.element.centre, label: `${r.element.ref} ${r.element.body}` };
  }
  const found = await execute(deps, lane, "findElement", { selector: fullSelector(a.selector as McpSelector) }, a);
  const node = (found.output as { element: UiNodeRef }).element;
  const { listing } = await observeListed(deps, lane);
  const element = listing?.elements.find((e) => e.node.stableNodeId === node.stableNodeId);
  if (!element) throw new ToolError("element_not_interactable", `the element matching ${describeSelector(a.selector as McpSelector)} is not visible on the screen`, false);
  return { node, centre: element.centre, label: `${element.ref} ${element.body}` };
}

const targetOf = (deps: CallDeps, lane: Lane, a: { ref?: string; selector?: McpSelector }): ElementTarget => {
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
async function execute(deps: CallDeps, lane: Lane, name: string, args: object, aim: { ref?: string; selector?: McpSelector } = {}, actionTimeoutMs = deps.actionTimeoutMs): Promise<ActionResult> {
  const params = { id: crypto.randomUUID(), name, arguments: args, actionTimeoutMs };
  try {
    return (await lane.call("device.execute", params, deps.signal)).result as ActionResult;
  } catch (err) {
    if (!(err instanceof RpcFailure)) throw err;
    const code = err.error.data.code;
    if (aim.ref !== undefined && STALE.has(code))
      throw new ToolError("stale_ref", `the screen changed since ${aim.ref} was listed: call ui_tree or device_observe and use a ref from the new listing`, false, { ref: aim.ref, cause: code });
    if (ELEMENT_ERRORS.has(code)) {
      const what = aim.selector ? `selector ${describeSelector(aim.selector)}` : aim.ref !== undefined ? `ref ${aim.ref}` : null;
      const e = ToolError.fromRpc(err.error, await screenLines(deps, lane, aim.selector));
      throw what ? new ToolError(e.code, `${e.message} (${what})`, e.retryable, e.details, e.lines) : e;
    }
    const unknown = OUTCOME_UNKNOWN.has(code) ? [`outcome: unknown — ${name} may or may not have taken effect; observe before trying again`] : [];
    throw ToolError.fromRpc(err.error, unknown);
  }
}

/** The closest elements to a selector and the current screen, observed (and recorded) now. */
async function screenLines(deps: CallDeps, lane: Lane, selector: McpSelector | undefined): Promise<string[]> {
  try {
    const o = (await lane.call("device.observe", undefined, deps.signal)).result as Observation;
    if (!o.uiSnapshot) return [`screen: ${foregroundOf(o.metadata) ?? "unknown"} (no element tree)`];
    const snapshot = await treeOf(deps, lane, o);
    const { listing } = deps.refs.list(lane.deviceId, snapshot, o.viewport, uiStatesOf(o.metadata));
    const byId = new Map(listing.elements.map((e) => [e.node.stableNodeId, e]));
    const closest = selector
      ? closestNodes(snapshot.nodes, fullSelector(selector), 5)
          .map((i) => byId.get(snapshot.nodes[i]?.stableNodeId ?? ""))
          .filter((e) => e !== undefined)
      : [];
    const { lines } = treeLines(listing, 4_000);
    return [
      ...(closest.length ? ["closest elements:", ...closest.map((e) => `  ${e.ref} ${e.body}`)] : selector ? ["closest elements: none alike"] : []),
      `screen (observation ${o.id}, foreground ${foregroundOf(o.metadata) ?? "unknown"}):`,
      ...lines.map((l) => `  ${l}`),
    ];
  } catch {
    return [];
  }
}

const actionLine = (label: string, lane: Lane, name: string, r: ActionResult) =>
  `${label} on ${lane.deviceId}: ok (${name}, ${r.finishedAtMs - r.startedAtMs} ms, action ${r.callId}, session ${lane.sessionId})`;

/** The element a semantic action reports, as the device's latest listing shows it (ref and line), if listed. */
function elementNamed(deps: CallDeps, lane: Lane, r: ActionResult | null): string | null {
  const element = (r?.output as { element?: UiNodeRef | null } | null)?.element;
  if (!element) return null;
  const listed = deps.refs.latest(lane.deviceId)?.elements.find((e) => e.node.stableNodeId === element.stableNodeId);
  return listed ? `${listed.ref} ${listed.short}` : null;
}

const acted = (lane: Lane, lines: string[], results: { name: string; r: ActionResult }[], extra: Record<string, unknown> = {}) =>
  success(lines, { deviceId: lane.deviceId, sessionId: lane.sessionId, actions: results.map(({ name, r }) => ({ name, actionId: r.callId, output: r.output })), actionId: results.at(-1)?.r.callId, ...extra });

export async function pointTool(deps: CallDeps, lane: Lane, tool: "tap" | "double_tap" | "long_press", a: ToolInput<"long_press">): Promise<ToolResult> {
  if (tool === "tap" && a.x === undefined) {
    need(lane, tool, ["tapElement"]);
    const r = await execute(deps, lane, "tapElement", { target: targetOf(deps, lane, a) }, a);
    const label = elementNamed(deps, lane, r) ?? a.ref ?? `the element matching ${describeSelector(a.selector as McpSelector)}`;
    return acted(lane, [actionLine(`tap ${label}`, lane, "tapElement", r)], [{ name: "tapElement", r }]);
  }
  const name = need(lane, tool, tool === "tap" ? ["tap"] : tool === "double_tap" ? ["doubleTap"] : ["longPress"]);
  const where = a.x !== undefined ? { centre: { x: a.x, y: a.y as number }, label: `${Math.round(a.x)},${Math.round(a.y as number)}` } : await locate(deps, lane, a);
  const args: Record<string, number> = { x: Math.round(where.centre.x), y: Math.round(where.centre.y) };
  if (tool === "long_press" && a.durationMs !== undefined) args.durationMs = a.durationMs;
  const r = await execute(deps, lane, name, args, a);
  return acted(lane, [actionLine(`${tool.replace("_", " ")} at ${args.x},${args.y}${a.x === undefined ? ` (${where.label})` : ""}`, lane, name, r)], [{ name, r }]);
}

export async function swipeTool(deps: CallDeps, lane: Lane, a: ToolInput<"swipe">): Promise<ToolResult> {
  const name = need(lane, "swipe", ["swipe", "scroll"]);
  let points = a.direction === undefined ? { startX: a.startX as number, startY: a.startY as number, endX: a.endX as number, endY: a.endY as number } : null;
  if (!points) {
    const o = (await lane.call("device.observe", undefined, deps.signal)).result as Observation;
    const { width: w, height: h } = o.viewport;
    const f = a.distance ?? 0.5;
    const [cx, cy] = [w / 2, h / 2];
    const dx = a.direction === "left" ? -f * w : a.direction === "right" ? f * w : 0;
    const dy = a.direction === "up" ? -f * h : a.direction === "down" ? f * h : 0;
    points = { startX: cx - dx / 2, startY: cy - dy / 2, endX: cx + dx / 2, endY: cy + dy / 2 };
  }
  const p = { startX: Math.round(points.startX), startY: Math.round(points.startY), endX: Math.round(points.endX), endY: Math.round(points.endY) };
  const label = `swipe ${a.direction ?? ""} ${p.startX},${p.startY} → ${p.endX},${p.endY}`.replace("  ", " ");
  if (name === "swipe") {
    const r = await execute(deps, lane, "swipe", { ...p, durationMs: a.durationMs ?? 300 });
    return acted(lane, [actionLine(label, lane, "swipe", r)], [{ name, r }]);
  }
  // A device without a swipe gesture scrolls the content the way the finger would move it.
  const r = await execute(deps, lane, "scroll", { deltaX: p.startX - p.endX, deltaY: p.startY - p.endY });
  return acted(lane, [actionLine(`${label} (as a scroll by ${p.startX - p.endX},${p.startY - p.endY})`, lane, "scroll", r)], [{ name, r }]);
}

export async function typeTool(deps: CallDeps, lane: Lane, a: ToolInput<"type_text">): Promise<ToolResult> {
  need(lane, "type_text", ["inputText"]);
  const results: { name: string; r: ActionResult }[] = [];
  const lines: string[] = [];
  if (a.ref !== undefined || a.selector !== undefined) {
    need(lane, "type_text", ["tapElement"]);
    const r = await execute(deps, lane, "tapElement", { target: targetOf(deps, lane, a) }, a);
    results.push({ name: "tapElement", r });
    lines.push(actionLine(`tap ${elementNamed(deps, lane, r) ?? a.ref ?? "the field"}`, lane, "tapElement", r));
  }
  if (a.submit) need(lane, "type_text with submit", ["keyPress"]);
  const r = await execute(deps, lane, "inputText", { text: a.text });
  results.push({ name: "inputText", r });
  lines.push(actionLine(`type ${JSON.stringify(a.text)}`, lane, "inputText", r));
  if (a.submit) {
    const k = await execute(deps, lane, "keyPress", { key: "enter" });
    results.push({ name: "keyPress", r: k });
    lines.push(actionLine("press enter", lane, "keyPress", k));
  }
  return acted(lane, lines, results);
}

export async function secretTool(deps: CallDeps, lane: Lane, a: ToolInput<"set_secret">): Promise<ToolResult> {
  // The value goes to the device as a protected action's argument only: never into text here.
  if ((a.ref !== undefined || a.selector !== undefined) && lane.has("setElementValue")) {
    const r = await execute(deps, lane, "setElementValue", { target: targetOf(deps, lane, a), value: a.secret }, a);
    return acted(lane, [actionLine(`set a secret into ${a.ref ?? "the field"}`, lane, "setElementValue", r)], [{ name: "setElementValue", r }]);
  }
  need(lane, "set_secret", ["inputSecret"]);
  const results: { name: string; r: ActionResult }[] = [];
  if (a.ref !== undefined || a.selector !== undefined) results.push({ name: "tapElement", r: await execute(deps, lane, "tapElement", { target: targetOf(deps, lane, a) }, a) });
  results.push({ name: "inputSecret", r: await execute(deps, lane, "inputSecret", { secret: a.secret }) });
  return acted(lane, results.map(({ name, r }) => actionLine(name === "inputSecret" ? "type a secret" : `tap ${a.ref ?? "the field"}`, lane, name, r)), results);
}

export async function keyTool(deps: CallDeps, lane: Lane, a: ToolInput<"press_key">): Promise<ToolResult> {
  const name = lane.has(a.key) && ["back", "home", "recentApps"].includes(a.key) ? a.key : need(lane, "press_key", ["keyPress"]);
  const r = await execute(deps, lane, name, name === "keyPress" ? { key: a.key } : {});
  return acted(lane, [actionLine(`press ${a.key}`, lane, name, r)], [{ name, r }]);
}

export async function appTool(deps: CallDeps, lane: Lane, tool: "launch_app" | "terminate_app", a: ToolInput<"launch_app"> | ToolInput<"terminate_app">): Promise<ToolResult> {
  const name = need(lane, tool, [tool === "launch_app" ? "launch" : "terminate"]);
  // iOS names the app by bundle id, Android by package name: the device's own schema says which.
  const schema = lane.actions.find((d) => d.name === name)?.inputSchema as { properties?: Record<string, unknown> } | undefined;
  const key = schema?.properties && "bundleId" in schema.properties ? "bundleId" : "packageName";
  const activity = "activity" in a ? a.activity : undefined;
  if (activity !== undefined && !(schema?.properties && "activity" in schema.properties))
    throw new ToolError("invalid_arguments", `invalid arguments for ${tool}: activity: ${lane.deviceId} starts apps by ${key} only (activity is for Android)`, false, { tool, issues: ["activity: not offered by this device"] });
  const r = await execute(deps, lane, name, { [key]: a.appId, ...(activity !== undefined ? { activity } : {}) });
  return acted(lane, [actionLine(`${tool === "launch_app" ? "launch" : "terminate"} ${a.appId}`, lane, name, r)], [{ name, r }]);
}

export async function urlTool(deps: CallDeps, lane: Lane, a: ToolInput<"open_url">): Promise<ToolResult> {
  const name = need(lane, "open_url", ["openUrl"]);
  const r = await execute(deps, lane, name, { url: a.url });
  return acted(lane, [actionLine(`open ${a.url}`, lane, name, r)], [{ name, r }]);
}

export const DEFAULT_WAIT_MS = 10_000;

export async function waitTool(deps: CallDeps, lane: Lane, a: ToolInput<"wait_for">): Promise<ToolResult> {
  need(lane, "wait_for", ["waitForElement"]);
  const waitMs = a.timeoutMs ?? DEFAULT_WAIT_MS;
  const condition = a.gone ? "absent" : "visible";
  const what = `${a.gone ? "disappear" : "appear"}: ${describeSelector(a.selector)}`;
  let r: ActionResult | null = null;
  try {
    r = await execute(deps, lane, "waitForElement", { selector: fullSelector(a.selector), condition }, {}, waitMs);
  } catch (err) {
    if (!(err instanceof ToolError && err.code === "action_timed_out")) throw err;
  }
  const out = r?.output as { matched?: boolean } | undefined;
  if (!r || !out?.matched)
    throw new ToolError("action_timed_out", `waited ${waitMs} ms for an element to ${what}; it did not`, true, { condition, timeoutMs: waitMs }, await screenLines(deps, lane, a.gone ? undefined : a.selector));
  const found = a.gone ? null : elementNamed(deps, lane, r);
  return acted(lane, [actionLine(`wait for an element to ${what}${found ? ` (${found})` : ""}`, lane, "waitForElement", r)], [{ name: "waitForElement", r }]);
}

export async function verdictTool(deps: CallDeps, lane: Lane, a: ToolInput<"session_verdict">): Promise<ToolResult> {
  await lane.call("verdict.record", { verdict: { status: a.status, summary: a.summary } }, deps.signal);
  return success([`verdict ${a.status} recorded in session ${lane.sessionId} on ${lane.deviceId}`], { deviceId: lane.deviceId, sessionId: lane.sessionId, status: a.status });
}

export async function devicesTool(deps: CallDeps): Promise<ToolResult> {
  return deps.client.plain(async (rpc) => {
    const { devices } = (await rpc.must("devices.list")).result as DevicesListResult;
    const { sessions } = (await rpc.must("devicerail.sessions.list", { state: "active" })).result as { sessions: { id: string; deviceId: string | null }[] };
    const rows = devices.map((d) => ({ ...d, heldBy: sessions.find((s) => s.deviceId === d.id)?.id ?? null }));
    const lines = rows.length
      ? rows.map((d) => `${d.id}  ${d.platform.kind}  ${JSON.stringify(d.name)}  os ${d.osVersion ?? "?"}  ${d.heldBy ? `held by session ${d.heldBy}` : "free"}`)
      : ["no devices: attach a phone over USB (adb devices should list it) or boot an iOS Simulator"];
    return success(lines, { devices: rows });
  });
}

/** Validates a tool's arguments with its valibot schema; the issues become one invalid_arguments error. */
export function parseArgs<N extends ToolName>(name: N, args: unknown): ToolInput<N> {
  const r = v.safeParse(INPUTS[name], args ?? {});
  if (r.success) return r.output as ToolInput<N>;
  const issues = r.issues.slice(0, 5).map((i) => `${i.path?.map((p) => String(p.key)).join(".") || "arguments"}: ${i.message}`);
  throw new ToolError("invalid_arguments", `invalid arguments for ${name}: ${issues.join("; ")}`, false, { tool: name, issues });
}
