import type { TestEvent } from "../protocol/types/event.ts";

/** Protocol minor an event needs before a connection may read it (docs/protocol/handshake.md). */
export function requiredMinor(event: TestEvent): number {
  const p = event.payload;
  if (p.type === "mediaStreamStarted" || p.type === "mediaFrameCaptured" || p.type === "mediaStreamEnded") return 4;
  const uiFields = (o: { uiSnapshot?: unknown; uiSnapshotOmission?: unknown } | null | undefined) =>
    !!o && (o.uiSnapshot != null || o.uiSnapshotOmission != null);
  if (p.type === "observationCaptured" && uiFields(p.observation)) return 5;
  if (p.type === "actionCompleted" && p.outcome.outcome === "succeeded") {
    const r = p.outcome.result;
    if (r.execution != null || uiFields(r.before) || uiFields(r.after)) return 5;
  }
  return 0;
}
