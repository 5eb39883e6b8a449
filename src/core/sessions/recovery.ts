import { errorInfo } from "../../protocol/errors.ts";
import type { RpcId } from "../../protocol/ids.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { SessionOutcome } from "../../protocol/types/session.ts";
import type { AppendInput } from "./append-input.ts";
import { replayCommitted } from "./append-invariants.ts";
import type { StoredSession } from "./raw-statements.ts";
import { newSessionState, type SessionState } from "./session-state.ts";

export const RECOVERY_REASON = "recovered after an unclean daemon exit";

/** The committed log of one Session, as start-up reads it back. */
export interface CommittedLog {
  read(sessionId: string): TestEvent[];
  evidenceOf(sessionId: string): Set<string>;
}

/** The appends recovery writes; they pass the same invariants as any other. */
export interface RecoveryWriter {
  append(sessionId: string, input: AppendInput): Promise<TestEvent>;
  endSession(
    sessionId: string,
    opts: { outcome: SessionOutcome; reason: string | null; requestId?: RpcId; deviceId?: string },
  ): Promise<unknown>;
}

/**
 * The in-memory state of every Session on disk, at start-up. Only an active Session's log is read
 * again: it may still be appended to, so its actions, media streams and references must be known.
 */
export function restoreSessions(
  rows: readonly StoredSession[],
  log: CommittedLog,
): { sessions: Map<string, SessionState>; deleted: Set<string> } {
  const sessions = new Map<string, SessionState>();
  const deleted = new Set<string>();
  for (const r of rows) {
    if (r.state === "deleted") {
      deleted.add(r.id);
      continue;
    }
    const s = newSessionState(r.id, r.startedAtMs);
    Object.assign(s, {
      state: r.state,
      endedAtMs: r.endedAtMs,
      lastSequence: r.lastSequence,
      committedSequence: r.lastSequence,
      committedEnded: r.state === "ended",
    });
    if (r.state === "active") {
      s.refs = log.evidenceOf(s.id);
      for (const event of log.read(s.id)) replayCommitted(s, event);
    }
    sessions.set(r.id, s);
  }
  return { sessions, deleted };
}

/**
 * After an unclean exit: every action left without its terminal event is completed as cancelled
 * (reason shutdown, as a graceful shutdown would have written), every open media stream is ended
 * with its committed frame count (a Session never ends with an open stream), then every active
 * Session is sealed with outcome "shutdown" and RECOVERY_REASON. All of it is queued in one turn,
 * so it commits as one batch.
 */
export async function recoverSessions(
  all: Iterable<SessionState>,
  writer: RecoveryWriter,
): Promise<{ sealed: string[]; interruptedActions: number }> {
  const sealed: string[] = [];
  let interruptedActions = 0;
  const work: Promise<unknown>[] = [];
  const active = [...all].filter((s) => s.state === "active").sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const s of active) {
    for (const [callId, corr] of s.openCalls) {
      interruptedActions++;
      const error = errorInfo("action_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } });
      work.push(
        writer.append(s.id, {
          ...corr,
          payload: { type: "actionCompleted", callId, outcome: { outcome: "cancelled", error } },
        }),
      );
    }
    for (const { streamId, frameCount } of s.media.openStreams())
      work.push(writer.append(s.id, { payload: { type: "mediaStreamEnded", streamId, frameCount } }));
    work.push(writer.endSession(s.id, { outcome: "shutdown", reason: RECOVERY_REASON }));
    sealed.push(s.id);
  }
  await Promise.all(work);
  return { sealed, interruptedActions };
}
