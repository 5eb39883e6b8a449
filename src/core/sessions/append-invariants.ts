import { MAX_SAFE } from "../../protocol/ids.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { AppendInput, EvidenceRow } from "./append-input.ts";
import type { SessionState } from "./session-state.ts";

/** Evidence references one Session may hold (docs/protocol/limits.md#evidence). */
export const MAX_SESSION_REFERENCES = 10_000;

/** Puts the Session's bookkeeping back as it was before an append whose batch then failed. */
export type Undo = () => void;

/**
 * The Session an event may be appended to, refused with the store's typed errors (02 Event Store
 * codes). A Session counts as ended from the moment its sessionEnded is queued, not committed.
 */
export function appendableSession(sessions: ReadonlyMap<string, SessionState>, sessionId: string): SessionState {
  const s = sessions.get(sessionId);
  if (!s) throw new RpcError("session_not_found", { arg: sessionId, details: { sessionId } });
  if (s.state === "ended") throw new RpcError("session_ended", { arg: sessionId, details: { sessionId } });
  if (s.lastSequence >= MAX_SAFE)
    throw new RpcError("event_sequence_exhausted", { arg: sessionId, details: { sessionId } });
  return s;
}

/**
 * Checks an ordinary append against the Session (lifecycle payloads belong to start and end, the
 * reference limit, action pairing, the media lifecycle) and records it in the bookkeeping, so the
 * next append in the same turn is checked against this one. A refusal leaves nothing recorded.
 */
export function admitAppend(s: SessionState, input: AppendInput): Undo {
  const t = input.payload.type;
  if (t === "sessionStarted" || t === "sessionEnded") throw new RpcError("invalid_event");
  const undoRefs = trackRefs(s, input.evidence ?? []);
  let undoCalls: Undo;
  let undoMedia: Undo;
  try {
    // At most one of the two applies: a payload is either an action or a media event.
    undoCalls = trackCalls(s, input);
    undoMedia = s.media.apply(input.payload);
  } catch (err) {
    undoRefs();
    throw err;
  }
  return () => {
    undoMedia();
    undoCalls();
    undoRefs();
  };
}

/** Seals the Session at once, so appends queued behind its sessionEnded are refused. */
export function admitEnd(s: SessionState, endedAtMs: number): Undo {
  s.state = "ended";
  s.endedAtMs = endedAtMs;
  return () => {
    s.state = "active";
    s.endedAtMs = null;
  };
}

/**
 * Rebuilds the action and media bookkeeping of an active Session from one committed event, at
 * start-up. The pairing is not checked again: the event passed admitAppend when it was written.
 */
export function replayCommitted(s: SessionState, event: TestEvent): void {
  const p = event.payload;
  s.media.apply(p);
  if (p.type === "actionStarted") {
    s.startedCalls.add(p.call.id);
    s.openCalls.set(p.call.id, { requestId: event.requestId ?? undefined, deviceId: event.deviceId ?? undefined });
  } else if (p.type === "actionCompleted") s.openCalls.delete(p.callId);
}

/** At most MAX_SESSION_REFERENCES distinct Evidence objects per Session. */
function trackRefs(s: SessionState, rows: readonly EvidenceRow[]): Undo {
  const added = [...new Set(rows.map((r) => r.sha256))].filter((d) => !s.refs.has(d));
  if (s.refs.size + added.length > MAX_SESSION_REFERENCES)
    throw new RpcError("evidence_reference_limit", { details: { maximum: MAX_SESSION_REFERENCES } });
  for (const d of added) s.refs.add(d);
  return () => {
    for (const d of added) s.refs.delete(d);
  };
}

/** The actionStarted/actionCompleted pairing of docs/protocol/sessions-and-events.md#invariants. */
function trackCalls(s: SessionState, input: AppendInput): Undo {
  const p = input.payload;
  if (p.type === "actionStarted") {
    const callId = p.call.id;
    if (s.startedCalls.has(callId)) throw new RpcError("duplicate_action_call", { arg: callId, details: { callId } });
    s.startedCalls.add(callId);
    s.openCalls.set(callId, { requestId: input.requestId, deviceId: input.deviceId });
    return () => {
      s.startedCalls.delete(callId);
      s.openCalls.delete(callId);
    };
  }
  if (p.type === "actionCompleted") {
    const open = s.openCalls.get(p.callId);
    if (!open) throw new RpcError("action_not_started", { arg: p.callId, details: { callId: p.callId } });
    if (open.requestId !== input.requestId || open.deviceId !== input.deviceId)
      throw new RpcError("action_correlation_mismatch", { arg: p.callId, details: { callId: p.callId } });
    if (p.outcome.outcome === "succeeded" && p.outcome.result.callId !== p.callId)
      throw new RpcError("action_result_mismatch", { arg: p.callId, details: { callId: p.callId } });
    s.openCalls.delete(p.callId);
    return () => s.openCalls.set(p.callId, open);
  }
  return () => {};
}
