/**
 * UI trees: the model's compact nodes (model.ts compactTree), the lines the page lists for them,
 * and the diff between two trees. The live viewer reads trees from the daemon as their events
 * arrive (live.ts), so a tree may be on its way.
 */
import type { UiNode } from "../../../protocol/types/ui.ts";
import type { TreeNode } from "../model-types.ts";
import { model } from "./data.ts";
import { clip, isObj, oneLine } from "./format.ts";
import { type Observation, type ShotRole, type Step, steps } from "./steps.ts";

/** A listed node: its line, the line lower-cased for the search, and its depth among listed ancestors. */
export interface TreeLine {
  id: string;
  text: string;
  lower: string;
  depth: number;
}
export interface TreeLines {
  lines: TreeLine[];
  byId: Map<string, TreeLine>;
  nodes: Map<string, TreeNode>;
}

/** "pending" while a live fetch runs, "failed" when it could not be read. */
export const treeFetches = new Map<string, "pending" | "failed">();
/** sha → lines, computed the first time a tree is shown. */
export const treeCache = new Map<string, TreeLines>();

export const treeShaOf = (obs: Observation | null | undefined): string | null =>
  isObj(obs) && isObj(obs.uiSnapshot) && isObj(obs.uiSnapshot.evidence)
    ? (obs.uiSnapshot.evidence.sha256 ?? null)
    : null;
const treeKnown = (sha: string) => treeNodes(sha) !== null || treeFetches.get(sha) === "pending";

/**
 * A tree's nodes. The model lists a repeated tree once: a later digest with the same nodes holds
 * the digest of the first (a string) instead of the nodes.
 */
export function treeNodes(sha: string | null): TreeNode[] | null {
  const entry = model.trees[canonicalTree(String(sha))];
  return Array.isArray(entry) ? entry : null;
}

/** The digest whose entry holds the nodes (itself unless it is a repeat). */
function canonicalTree(sha: string): string {
  let key = sha;
  for (let hops = 0; hops < 8; hops++) {
    const entry = model.trees[key];
    if (typeof entry !== "string") break;
    key = entry;
  }
  return key;
}

/** The tree a step shows: an observation's, or an action's after-observation's, else its before's. */
export function stepTree(step: Step): { sha: string; role: ShotRole } | null {
  for (const c of step.treeCandidates) {
    const sha = treeShaOf(c.obs);
    if (sha && treeKnown(sha)) return { sha, role: c.role };
  }
  return null;
}

/** The nearest earlier step with a tree, and that tree: what the diff compares with. */
export function previousTree(step: Step): { sha: string; role: ShotRole; step: Step } | null {
  for (let i = step.index - 1; i >= 0; i--) {
    const earlier = steps[i] as Step;
    const t = stepTree(earlier);
    if (t) return { ...t, step: earlier };
  }
  return null;
}

const shortRole = (role: unknown) => String(role || "node").slice(String(role || "node").lastIndexOf(".") + 1);
const shortId = (id: string) => (id.includes(":id/") ? id.slice(id.indexOf(":id/") + 4) : id);

/** `Button "Sign in" id=sign_in [disabled] at=640,292 size=480x56`, or null for a node not listed. */
function nodeLine(n: TreeNode): string | null {
  const b = n.b;
  if (!Array.isArray(b) || !(b[2] > 0) || !(b[3] > 0)) return null;
  if (!n.text && !n.name && !n.value && !n.ident) return null;
  const label = n.text || n.name;
  const parts = [shortRole(n.role)];
  if (label) parts.push(JSON.stringify(clip(oneLine(label), 200)));
  if (n.ident) parts.push(`id=${shortId(String(n.ident))}`);
  if (n.value && n.value !== label) parts.push(`value=${JSON.stringify(clip(oneLine(n.value), 200))}`);
  if (n.en === false) parts.push("[disabled]");
  parts.push(
    `at=${Math.round(b[0] + b[2] / 2)},${Math.round(b[1] + b[3] / 2)}`,
    `size=${Math.round(b[2])}x${Math.round(b[3])}`,
  );
  return parts.join(" ");
}

/** A tree's listed lines, each with its depth among listed ancestors; cached per tree. */
export function treeLines(sha: string): TreeLines | null {
  const key = canonicalTree(sha);
  const cached = treeCache.get(key);
  if (cached) return cached;
  const nodes = treeNodes(key);
  if (!nodes) return null;
  const depthOf = new Map<string, number>();
  const lines: TreeLine[] = [];
  for (const n of nodes) {
    if (!isObj(n)) continue;
    // Nodes come in preorder, so a parent's depth is known before its children's.
    const parentDepth = n.p !== null && n.p !== undefined ? (depthOf.get(n.p) ?? -1) : -1;
    const text = nodeLine(n);
    depthOf.set(n.id, text ? parentDepth + 1 : parentDepth);
    if (text) lines.push({ id: n.id, text, lower: text.toLowerCase(), depth: parentDepth + 1 });
  }
  const entry = {
    lines,
    byId: new Map(lines.map((l) => [l.id, l])),
    nodes: new Map(nodes.filter(isObj).map((n) => [n.id, n])),
  };
  treeCache.set(key, entry);
  return entry;
}

/** Lines added, changed and removed between two trees, by node id. */
export function treeDiff(prevSha: string, sha: string): { kind: "added" | "changed" | "removed"; text: string }[] {
  const prev = treeLines(prevSha) as TreeLines;
  const cur = treeLines(sha) as TreeLines;
  const out: { kind: "added" | "changed" | "removed"; text: string }[] = [];
  for (const l of cur.lines) {
    const old = prev.byId.get(l.id);
    if (!old) out.push({ kind: "added", text: `+ ${l.text}` });
    else if (old.text !== l.text) out.push({ kind: "changed", text: `~ ${l.text} (was: ${old.text})` });
  }
  for (const l of prev.lines) if (!cur.byId.has(l.id)) out.push({ kind: "removed", text: `- ${l.text}` });
  return out;
}

/** A node of a tree read from the daemon, in the model's compact form (model.ts compactTree). */
export function compactNode(n: UiNode): TreeNode {
  const b: TreeNode["b"] = isObj(n.bounds) ? [n.bounds.x, n.bounds.y, n.bounds.width, n.bounds.height] : null;
  return {
    id: n.stableNodeId,
    p: n.parentStableNodeId ?? null,
    role: n.role,
    text: n.text ?? null,
    name: n.name ?? null,
    value: n.value ?? null,
    ident: n.identifier ?? null,
    b,
    en: n.enabled ?? null,
  };
}
