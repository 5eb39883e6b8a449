import type { RpcId } from "../../protocol/ids.ts";
import type { SessionInfo } from "../../protocol/types/session.ts";
import { MediaLedger } from "./media-invariants.ts";

/**
 * What the log holds in memory for one Session. Appends are checked and numbered against it at
 * once, before their batch reaches the disk, so it runs ahead of the database by at most one
 * pending batch; readers see only the committed fields.
 */
export interface SessionState {
  id: string;
  state: "active" | "ended";
  startedAtMs: number;
  endedAtMs: number | null;
  /** Highest sequence handed out (may be ahead of the disk while a batch is pending). */
  lastSequence: number;
  /** Highest sequence known to be on disk. */
  committedSequence: number;
  committedEnded: boolean;
  startedCalls: Set<string>;
  openCalls: Map<string, { requestId: RpcId | undefined; deviceId: string | undefined }>;
  media: MediaLedger;
  /** Digests this Session references, pending appends included (the per-Session limit). */
  refs: Set<string>;
}

/** A Session with no events yet. */
export function newSessionState(id: string, startedAtMs: number): SessionState {
  return {
    id,
    state: "active",
    startedAtMs,
    endedAtMs: null,
    lastSequence: 0,
    committedSequence: 0,
    committedEnded: false,
    startedCalls: new Set(),
    openCalls: new Map(),
    media: new MediaLedger(),
    refs: new Set(),
  };
}

/** A SessionInfo: `endedAtMs` counts only once the Session has ended. */
export function sessionInfo(
  id: string,
  ended: boolean,
  startedAtMs: number,
  endedAtMs: number | null,
  eventCount: number,
  lastSequence: number,
): SessionInfo {
  return {
    id,
    state: ended ? "ended" : "active",
    startedAtMs,
    endedAtMs: ended ? endedAtMs : null,
    eventCount,
    lastSequence,
  };
}

/** The Session as a reader may see it: a sessionEnded still waiting for its commit does not count. */
export function committedInfo(s: SessionState): SessionInfo {
  return sessionInfo(s.id, s.committedEnded, s.startedAtMs, s.endedAtMs, s.committedSequence, s.committedSequence);
}
