import type { CallContext } from "../../driver/driver.ts";
import { DriverError } from "../../driver/driver-error.ts";
import { MEDIA_TYPE_PNG, MEDIA_TYPE_UI_TREE } from "../../protocol/types/evidence.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { Core } from "../core.ts";
import type { StoredEvidence } from "../evidence/evidence-store.ts";
import { buildUiSnapshot, snapshotRef } from "../sessions/ui-snapshot.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const isPng = (b: Uint8Array) => b.length >= 33 && PNG_SIGNATURE.every((x, i) => b[i] === x);

export interface Captured {
  observation: Observation;
  /** Evidence stored for this observation (screenshot, UI tree), to be referenced by its event. */
  stored: StoredEvidence[];
}

/**
 * One observation through the driver, shaped by the rules of 05 §5: screenshots follow the
 * daemon's policy and are never taken around protected actions; UI-tree fields appear only for
 * connections that negotiated observation.uiSnapshot.v1. Bytes become Evidence before the
 * Observation that references them exists.
 */
export async function captureObservation(core: Core, deviceId: string, conn: Connection, ctx: CallContext, protectedAction = false): Promise<Captured> {
  const omission = protectedAction ? "protectedAction" : core.screenshotPolicy === "omit" ? "policy" : null;
  const driver = core.devices.driver(deviceId);
  // No UI-snapshot claim at all from a driver without trees (both fields absent = "no claim", 08 §2.1).
  const treeAllowed = conn.has("observation.uiSnapshot.v1") && driver.uiTrees;
  const raw = await driver.observe(deviceId, { screenshot: omission === null, uiTree: treeAllowed && omission === null }, ctx);
  const id = crypto.randomUUID();
  const stored: StoredEvidence[] = [];
  let screenshot: Observation["screenshot"] = null;
  if (omission === null) {
    if (!raw.screenshot || !isPng(raw.screenshot)) throw new DriverError("protocol_error", { detail: "observation without a PNG screenshot" });
    const s = await core.evidence.put(raw.screenshot, MEDIA_TYPE_PNG);
    stored.push(s);
    screenshot = s.ref;
  }
  const observation: Observation = {
    id,
    deviceId,
    capturedAtMs: Date.now(),
    viewport: raw.viewport,
    screenshot,
    ...(omission ? { screenshotOmission: omission } : {}),
    metadata: raw.metadata,
  };
  if (treeAllowed) {
    if (omission) observation.uiSnapshotOmission = omission;
    else if (raw.uiTree) {
      const built = buildUiSnapshot(id, raw.uiTree);
      if (built.problem) throw new DriverError("protocol_error", { detail: `invalid UI tree: ${built.problem}` });
      const s = await core.evidence.put(built.bytes, MEDIA_TYPE_UI_TREE);
      stored.push(s);
      observation.uiSnapshot = snapshotRef(built.snapshot, built.bytes.length, s.ref);
    } else observation.uiSnapshotOmission = "driverUnsupported";
  }
  return { observation, stored };
}
