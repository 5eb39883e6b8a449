import * as v from "valibot";
import {
  type UiContextRef,
  type UiNode,
  type UiSnapshot,
  type UiSnapshotRef,
  UiSnapshotSchema,
} from "../../protocol/types/ui.ts";

export const MAX_UI_SNAPSHOT_BYTES = 786_432;

/** Floats are written with a fraction, as the reference stores them; the value is the same. */
const f = (x: number) => (Number.isInteger(x) ? `${x}.0` : JSON.stringify(x));

/** Serialises a snapshot in declaration order (docs/protocol/devices-and-actions.md#how-a-tree-is-stored): these exact bytes are the Evidence. */
export function encodeUiSnapshot(s: UiSnapshot): string {
  const ctx = (c: UiContextRef) =>
    `{"contextKind":${JSON.stringify(c.contextKind)},"contextId":${JSON.stringify(c.contextId)},"documentEpoch":${JSON.stringify(c.documentEpoch)}}`;
  const node = (n: UiNode) =>
    `{"stableNodeId":${JSON.stringify(n.stableNodeId)},"parentStableNodeId":${JSON.stringify(n.parentStableNodeId)},"role":${JSON.stringify(n.role)},` +
    `"name":${JSON.stringify(n.name)},"value":${JSON.stringify(n.value)},"identifier":${JSON.stringify(n.identifier)},"text":${JSON.stringify(n.text)},` +
    `"bounds":${n.bounds ? `{"x":${f(n.bounds.x)},"y":${f(n.bounds.y)},"width":${f(n.bounds.width)},"height":${f(n.bounds.height)}}` : "null"},` +
    `"enabled":${JSON.stringify(n.enabled)},"hittable":${JSON.stringify(n.hittable)}}`;
  return `{"formatVersion":1,"observationId":${JSON.stringify(s.observationId)},"context":${ctx(s.context)},"rootStableNodeIds":${JSON.stringify(s.rootStableNodeIds)},"nodes":[${s.nodes.map(node).join(",")}]}`;
}

/**
 * The structural rules beyond the schema (docs/protocol/devices-and-actions.md#tree-rules): unique ids, parents before children on the
 * current ancestor path (preorder), and the root list equal to the roots in order. Null when valid.
 */
export function uiSnapshotProblem(value: unknown): string | null {
  const parsed = v.safeParse(UiSnapshotSchema, value);
  if (!parsed.success) return "does not match the UiSnapshot schema";
  const s = parsed.output;
  const seen = new Set<string>();
  const roots: string[] = [];
  let stack: string[] = [];
  for (const n of s.nodes) {
    if (seen.has(n.stableNodeId)) return `duplicate stableNodeId ${n.stableNodeId}`;
    if (n.parentStableNodeId === null) {
      roots.push(n.stableNodeId);
      stack = [];
    } else {
      if (!seen.has(n.parentStableNodeId)) return `node ${n.stableNodeId} has a missing or late parent`;
      const at = stack.lastIndexOf(n.parentStableNodeId);
      if (at < 0) return `node ${n.stableNodeId} breaks preorder`;
      stack = stack.slice(0, at + 1);
    }
    stack.push(n.stableNodeId);
    seen.add(n.stableNodeId);
  }
  if (roots.length !== s.rootStableNodeIds.length || roots.some((r, i) => r !== s.rootStableNodeIds[i]))
    return "rootStableNodeIds do not list the roots in order";
  return null;
}

/** The snapshot of an observation, ready to store: its bytes and the reference the Observation carries. */
export function buildUiSnapshot(
  observationId: string,
  tree: { context: UiContextRef; nodes: UiNode[] },
): { snapshot: UiSnapshot; bytes: Uint8Array; problem: string | null } {
  const snapshot: UiSnapshot = {
    formatVersion: 1,
    observationId,
    context: tree.context,
    rootStableNodeIds: tree.nodes.filter((n) => n.parentStableNodeId === null).map((n) => n.stableNodeId),
    nodes: tree.nodes,
  };
  const bytes = new TextEncoder().encode(encodeUiSnapshot(snapshot));
  const problem =
    bytes.length > MAX_UI_SNAPSHOT_BYTES
      ? `snapshot is ${bytes.length} bytes (limit ${MAX_UI_SNAPSHOT_BYTES})`
      : uiSnapshotProblem(snapshot);
  return { snapshot, bytes, problem };
}

export function snapshotRef(
  snapshot: UiSnapshot,
  byteLength: number,
  evidence: UiSnapshotRef["evidence"],
): UiSnapshotRef {
  return { formatVersion: 1, context: snapshot.context, nodeCount: snapshot.nodes.length, byteLength, evidence };
}
