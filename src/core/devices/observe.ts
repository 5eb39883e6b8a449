import type { CallContext, RawObservation } from "../../driver/driver.ts";
import { DriverError } from "../../driver/driver-error.ts";
import { pngSize } from "../../driver/png.ts";
import { MEDIA_TYPE_PNG, MEDIA_TYPE_UI_TREE } from "../../protocol/types/evidence.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { UiContextRef, UiNode } from "../../protocol/types/ui.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { Core } from "../core.ts";
import type { StoredEvidence } from "../evidence/evidence-store.ts";
import { buildUiSnapshot, snapshotRef } from "../sessions/ui-snapshot.ts";

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
}

/** The driver half of an observation: nothing is stored yet, so a poll can be thrown away. */
export async function observeRaw(core: Core, deviceId: string, conn: Connection, ctx: CallContext, opts: ObserveFor = {}, screenshot = true): Promise<Pending> {
  const omission = opts.protectedAction ? "protectedAction" : core.screenshotPolicy === "omit" ? "policy" : null;
  const driver = core.devices.driver(deviceId);
  // No UI-snapshot claim at all from a driver without trees (both fields absent = "no claim", docs/protocol/devices-and-actions.md#how-a-tree-is-stored).
  const treeAllowed = conn.has("observation.uiSnapshot.v1") && driver.uiTrees;
  const wantTree = (treeAllowed && omission === null) || (opts.needTree === true && driver.uiTrees);
  const raw = await driver.observe(deviceId, { screenshot: screenshot && omission === null, uiTree: wantTree }, ctx);
  if (opts.needTree && !raw.uiTree) throw new DriverError("semantic_channel_unavailable");
  return { raw, omission, treeAllowed };
}

/**
 * Turns a driver observation into a protocol Observation under the rules of docs/protocol/devices-and-actions.md#observation-rules: screenshots
 * follow the daemon's policy and are never kept around protected actions; UI-tree fields appear
 * only for connections that negotiated observation.uiSnapshot.v1. Bytes become Evidence before the
 * Observation that references them exists.
 */
export async function recordObservation(core: Core, deviceId: string, { raw, omission, treeAllowed }: Pending): Promise<Captured> {
  const id = crypto.randomUUID();
  const stored: StoredEvidence[] = [];
  if (omission === null && (!raw.screenshot || !isPng(raw.screenshot))) throw new DriverError("protocol_error", { detail: "observation without a PNG screenshot" });
  const tree = raw.uiTree ?? null;
  // Validated even when not stored: semantic actions must never act on a malformed tree.
  const built = tree ? buildUiSnapshot(id, tree) : null;
  if (built?.problem) throw new DriverError("protocol_error", { detail: `invalid UI tree: ${built.problem}` });
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
    metadata: raw.metadata,
  };
  if (built && treeEvidence) observation.uiSnapshot = snapshotRef(built.snapshot, built.bytes.length, treeEvidence.ref);
  if (tree) core.devices.trees.remember(deviceId, id, tree.context);
  if (treeAllowed && !observation.uiSnapshot) observation.uiSnapshotOmission = omission ?? "driverUnsupported";
  return { observation, stored, tree };
}

export async function captureObservation(core: Core, deviceId: string, conn: Connection, ctx: CallContext, opts: ObserveFor = {}): Promise<Captured> {
  return recordObservation(core, deviceId, await observeRaw(core, deviceId, conn, ctx, opts));
}
