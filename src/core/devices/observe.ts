import type { CallContext, RawObservation } from "../../driver/driver.ts";
import { DriverError } from "../../driver/driver-error.ts";
import { pngSize } from "../../driver/png.ts";
import { MEDIA_TYPE_PNG, MEDIA_TYPE_UI_TREE } from "../../protocol/types/evidence.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { UiContextRef, UiNode } from "../../protocol/types/ui.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { Core } from "../core.ts";
import type { StoredEvidence } from "../evidence/evidence-store.ts";
import { MAX_UI_SNAPSHOT_BYTES, buildUiSnapshot, snapshotRef } from "../sessions/ui-snapshot.ts";
import { UI_TEXT_MAX, UI_TEXT_TIGHT_MAX, UI_TREE_MAX_NODES, boundUiTree } from "./ui-bounds.ts";

const isPng = (b: Uint8Array) => pngSize(b) !== null;

export interface UiTree {
  context: UiContextRef;
  nodes: UiNode[];
}

export interface Captured {
  observation: Observation;
  /** Evidence stored for this observation (screenshot, UI tree), to be referenced by its event. */
  stored: StoredEvidence[];
  /** The tree the driver gave, also when the Observation may not carry it (policy, protection). */
  tree: UiTree | null;
}

export interface ObserveFor {
  /** Around a protected action: no screenshot and no recorded tree (docs/protocol/devices-and-actions.md#observation-rules). */
  protectedAction?: boolean;
  /** Semantic actions need the tree even when the Observation will not show it. */
  needTree?: boolean;
}

/** What one driver observation was asked for, and what the recorded Observation may show. */
export interface Pending {
  raw: RawObservation;
  omission: "protectedAction" | "policy" | null;
  treeAllowed: boolean;
  /** Text fields the bounds clipped in the driver's tree (docs/protocol/limits.md#device-text). */
  clipped: number;
  log: CallContext["log"];
}

/** The driver half of an observation: nothing is stored yet, so a poll can be thrown away. */
export async function observeRaw(
  core: Core,
  deviceId: string,
  conn: Connection,
  ctx: CallContext,
  opts: ObserveFor = {},
  screenshot = true,
): Promise<Pending> {
  const omission = opts.protectedAction ? "protectedAction" : core.screenshotPolicy === "omit" ? "policy" : null;
  const driver = core.devices.driver(deviceId);
  // No UI-snapshot claim at all from a driver without trees (both fields absent = "no claim", docs/protocol/devices-and-actions.md#how-a-tree-is-stored).
  const treeAllowed = conn.has("observation.uiSnapshot.v1") && driver.uiTrees;
  const wantTree = (treeAllowed && omission === null) || (opts.needTree === true && driver.uiTrees);
  const observed = await driver.observe(
    deviceId,
    { screenshot: screenshot && omission === null, uiTree: wantTree },
    ctx,
  );
  // The tree's own typed error (busy bridge, animating screen…) says more than "no channel".
  if (opts.needTree && !observed.uiTree) throw observed.uiTreeError ?? new DriverError("semantic_channel_unavailable");
  if (!observed.uiTree) return { raw: observed, omission, treeAllowed, clipped: 0, log: ctx.log };
  const bounded = boundUiTree(observed.uiTree, UI_TEXT_MAX);
  return { raw: { ...observed, uiTree: bounded.tree }, omission, treeAllowed, clipped: bounded.clipped, log: ctx.log };
}

/**
 * Turns a driver observation into a protocol Observation under the rules of docs/protocol/devices-and-actions.md#observation-rules: screenshots
 * follow the daemon's policy and are never kept around protected actions; UI-tree fields appear
 * only for connections that negotiated observation.uiSnapshot.v1. Bytes become Evidence before the
 * Observation that references them exists.
 */
export async function recordObservation(core: Core, deviceId: string, pending: Pending): Promise<Captured> {
  const { raw, omission, treeAllowed, log } = pending;
  const id = crypto.randomUUID();
  const stored: StoredEvidence[] = [];
  if (omission === null && (!raw.screenshot || !isPng(raw.screenshot)))
    throw new DriverError("protocol_error", { detail: "observation without a PNG screenshot" });
  const sized = sizeTree(id, raw.uiTree ?? null, pending.clipped);
  const { tree, built } = sized;
  // Validated even when not stored: semantic actions must never act on a malformed tree.
  if (built?.problem) {
    log.warn({ deviceId, problem: built.problem }, "the driver's UI tree breaks the snapshot rules");
    throw new DriverError("protocol_error", {
      detail: `invalid UI tree: ${built.problem}`,
      message: `driver protocol error: the device's UI tree is invalid (${built.problem.slice(0, 200)})`,
    });
  }
  if (sized.tooLarge)
    log.warn({ deviceId, ...sized.tooLarge }, "UI tree over the snapshot limits: observation recorded without it");
  const keepTree = built !== null && treeAllowed && omission === null;
  // Both files are made durable at once: their fsyncs overlap instead of adding up.
  const [shot, treeEvidence] = await Promise.all([
    omission === null ? core.evidence.put(raw.screenshot as Uint8Array, MEDIA_TYPE_PNG) : null,
    keepTree ? core.evidence.put(built.bytes, MEDIA_TYPE_UI_TREE) : null,
  ]);
  if (shot) stored.push(shot);
  if (treeEvidence) stored.push(treeEvidence);
  const screenshot: Observation["screenshot"] = shot?.ref ?? null;
  const observation: Observation = {
    id,
    deviceId,
    capturedAtMs: Date.now(),
    viewport: raw.viewport,
    screenshot,
    ...(omission ? { screenshotOmission: omission } : {}),
    metadata: {
      ...(treeAllowed && omission === null ? { ...raw.metadata, ...sized.metadata } : raw.metadata),
      ...(raw.uiTreeError ? { uiTreeError: treeErrorMetadata(raw.uiTreeError) } : {}),
    },
  };
  if (built && treeEvidence) observation.uiSnapshot = snapshotRef(built.snapshot, built.bytes.length, treeEvidence.ref);
  if (tree) core.devices.trees.remember(deviceId, id, tree.context);
  if (treeAllowed && !observation.uiSnapshot) observation.uiSnapshotOmission = omission ?? "driverUnsupported";
  return { observation, stored, tree };
}

/** `metadata.uiTreeError` (docs/protocol/devices-and-actions.md#observing): the error a tree call would have raised. */
function treeErrorMetadata(err: DriverError): {
  code: string;
  platformCode: string | null;
  retryable: boolean;
  message: string;
} {
  const { code, retryable, message } = err.error.data;
  return { code, platformCode: err.platformCode, retryable, message };
}

interface SizedTree {
  tree: UiTree | null;
  /** Null when there is no tree or it is over the limits. */
  built: ReturnType<typeof buildUiSnapshot> | null;
  tooLarge: { nodeCount: number; byteLength: number | null } | null;
  /** Observation metadata saying what the bounds did (docs/protocol/limits.md#device-text). */
  metadata: Record<string, unknown>;
}

/**
 * The tree within the snapshot limits: clipped to UI_TEXT_MAX per field already, then, if its
 * bytes are still over, to UI_TEXT_TIGHT_MAX; a tree still over (or with too many nodes) is
 * kept out of the Observation, whose screenshot stays.
 */
function sizeTree(id: string, given: UiTree | null, clipped: number): SizedTree {
  if (!given) return { tree: null, built: null, tooLarge: null, metadata: {} };
  const textLimit = (fields: number, limit: number) => (fields > 0 ? { uiTextTruncated: { fields, limit } } : {});
  if (given.nodes.length > UI_TREE_MAX_NODES) {
    const tooLarge = { nodeCount: given.nodes.length, byteLength: null };
    return {
      tree: given,
      built: null,
      tooLarge,
      metadata: { uiSnapshotTooLarge: { ...tooLarge, maxNodes: UI_TREE_MAX_NODES, maxBytes: MAX_UI_SNAPSHOT_BYTES } },
    };
  }
  let tree = given;
  let built = buildUiSnapshot(id, tree);
  let limit = UI_TEXT_MAX;
  if (built.bytes.length > MAX_UI_SNAPSHOT_BYTES) {
    const tight = boundUiTree(tree, UI_TEXT_TIGHT_MAX);
    tree = tight.tree;
    clipped = tight.clipped;
    limit = UI_TEXT_TIGHT_MAX;
    built = buildUiSnapshot(id, tree);
  }
  if (built.bytes.length > MAX_UI_SNAPSHOT_BYTES) {
    const tooLarge = { nodeCount: tree.nodes.length, byteLength: built.bytes.length };
    return {
      tree,
      built: null,
      tooLarge,
      metadata: {
        ...textLimit(clipped, limit),
        uiSnapshotTooLarge: { ...tooLarge, maxNodes: UI_TREE_MAX_NODES, maxBytes: MAX_UI_SNAPSHOT_BYTES },
      },
    };
  }
  return { tree, built, tooLarge: null, metadata: textLimit(clipped, limit) };
}

export async function captureObservation(
  core: Core,
  deviceId: string,
  conn: Connection,
  ctx: CallContext,
  opts: ObserveFor = {},
): Promise<Captured> {
  return recordObservation(core, deviceId, await observeRaw(core, deviceId, conn, ctx, opts));
}
