import type { TestEvent } from "../../protocol/types/event.ts";
import type { Verdict } from "../../protocol/types/verdict.ts";
import type { HandlerContext, Handlers } from "../../rpc/dispatcher.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import { checkMediaType } from "../evidence/evidence-store.ts";
import { routedDeviceId, stateOf } from "../connection-state.ts";

const MAX_SUMMARY = 16_384;
const MAX_REFERENCES = 64;

/** Canonical AssetRef (docs/protocol/sessions-and-events.md#evidence): sha-derived id and uri, lowercase hex digest. */
function checkCanonical(ref: Verdict["evidence"][number]): string {
  const bad = (reason: string) => new RpcError("invalid_evidence_reference", { details: { reason } });
  if (ref.sha256 == null) throw bad("sha256 is required");
  if (!/^[0-9a-f]{64}$/.test(ref.sha256)) throw bad("sha256 is not canonical lowercase hex");
  if (ref.id !== `sha256:${ref.sha256}`) throw bad("id does not match sha256");
  if (ref.uri !== `devicerail://assets/sha256/${ref.sha256}`)
    throw bad("uri is not the canonical DeviceRail asset URI");
  checkMediaType(ref.mediaType);
  return ref.sha256;
}

/**
 * verdict.record (docs/protocol/sessions-and-events.md#verdicts): the caller's Verdict, stored verbatim as a verdictRecorded event, after
 * checking that every piece of evidence it cites is already part of the active Session.
 */
async function verdictRecord(core: Core, verdict: Verdict, ctx: HandlerContext): Promise<{ event: TestEvent }> {
  const sessionId = ctx.requireSession();
  if (
    !/\S/u.test(verdict.summary) ||
    [...verdict.summary].length > MAX_SUMMARY ||
    verdict.evidence.length > MAX_REFERENCES
  )
    throw new RpcError("verdict_bounds", {
      details: {
        maximumEvidenceReferences: MAX_REFERENCES,
        maximumSummaryLength: MAX_SUMMARY,
        method: "verdict.record",
      },
    });
  const digests = verdict.evidence.map(checkCanonical);
  const seen = new Set<string>();
  for (const d of digests) {
    if (seen.has(d)) throw new RpcError("duplicate_evidence_reference", { details: { digest: d } });
    seen.add(d);
  }
  for (const d of digests)
    if (!core.log.references(sessionId, d)) throw new RpcError("evidence_not_reachable", { details: { digest: d } });
  const event = await core.log.append(sessionId, {
    requestId: ctx.requestId,
    ...routedDeviceId(ctx.conn, stateOf(ctx.conn).selectedDeviceId),
    payload: { type: "verdictRecorded", verdict },
  });
  return { event };
}

export function verdictHandlers(core: Core): Pick<Handlers, "verdict.record"> {
  return { "verdict.record": (p, ctx) => verdictRecord(core, p.verdict, ctx) };
}
