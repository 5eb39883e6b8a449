import type { Observation } from "../../protocol/types/observation.ts";
import { MEDIA_TYPE_UI_TREE } from "../../protocol/types/evidence.ts";
import type { UiSnapshot } from "../../protocol/types/ui.ts";
import type { HandlerContext, Handlers } from "../../rpc/dispatcher.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import { uiSnapshotProblem } from "../sessions/ui-snapshot.ts";

/** The Observation with this id in the Session's log: observations and before/after of succeeded actions (docs/protocol/devices-and-actions.md#reading-a-tree). */
function findObservation(core: Core, sessionId: string, observationId: string): Observation | null {
  for (const e of core.log.eventsNaming(sessionId, observationId)) {
    const p = e.payload;
    if (p.type === "observationCaptured" && p.observation.id === observationId) return p.observation as Observation;
    if (p.type === "actionCompleted" && p.outcome.outcome === "succeeded") {
      for (const o of [p.outcome.result.before, p.outcome.result.after])
        if (o && o.id === observationId) return o as Observation;
    }
  }
  return null;
}

/**
 * ui.snapshot.get: only Observations reachable from the connection's active Session, and the stored
 * bytes are checked again on every read (docs/protocol/devices-and-actions.md#tree-rules) — a corrupted file is reported, never served.
 */
async function uiSnapshotGet(core: Core, observationId: string, ctx: HandlerContext): Promise<UiSnapshot> {
  const sessionId = ctx.requireSession();
  const observation = findObservation(core, sessionId, observationId);
  if (!observation) throw new RpcError("ui_snapshot_not_found", { details: { observationId } });
  const ref = observation.uiSnapshot;
  if (!ref)
    throw new RpcError("ui_snapshot_unavailable", {
      details: { observationId, omissionReason: observation.uiSnapshotOmission ?? null },
    });
  const digest = ref.evidence.sha256 as string;
  if (!core.log.references(sessionId, digest))
    throw new RpcError("evidence_not_attached", { details: { digest, sessionId } });
  let bytes: Uint8Array | null;
  try {
    bytes = await core.evidence.read(digest);
  } catch (err) {
    if (err instanceof RpcError && err.code === "evidence_corrupt")
      throw new RpcError("invalid_ui_snapshot", { details: { observationId } });
    throw new RpcError("ui_snapshot_read_failed", { details: { observationId } });
  }
  if (!bytes) throw new RpcError("evidence_not_found", { details: { digest } });
  const invalid = () => new RpcError("invalid_ui_snapshot", { details: { observationId } });
  if (ref.evidence.mediaType !== MEDIA_TYPE_UI_TREE || bytes.length !== ref.byteLength) throw invalid();
  let snapshot: UiSnapshot;
  try {
    snapshot = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as UiSnapshot;
  } catch {
    throw invalid();
  }
  const sameContext = JSON.stringify(snapshot.context) === JSON.stringify(ref.context);
  if (
    uiSnapshotProblem(snapshot) ||
    snapshot.observationId !== observationId ||
    !sameContext ||
    snapshot.nodes.length !== ref.nodeCount
  )
    throw invalid();
  return snapshot;
}

export function uiSnapshotHandlers(core: Core): Pick<Handlers, "ui.snapshot.get"> {
  return { "ui.snapshot.get": (p, ctx) => uiSnapshotGet(core, p.observationId, ctx) };
}
