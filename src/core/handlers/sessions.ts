import { ERRORS } from "../../protocol/errors.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { SessionInfo } from "../../protocol/types/session.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { HandlerContext, Handlers } from "../../rpc/dispatcher.ts";
import { utf8Length } from "../../rpc/encode.ts";
import { MAX_FRAME_BYTES } from "../../protocol/limits.ts";
import { RpcError, methodUnavailable, sessionRequired } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import { stateOf } from "../connection-state.ts";
import { requiredMinor } from "../event-minor.ts";
import { endSession } from "../session-access.ts";

type SessionMethods =
  | "session.current"
  | "session.end"
  | "sessions.list"
  | "devicerail.sessions.list"
  | "session.export"
  | "events.list"
  | "events.clear";

/** Refuses the whole read when one event needs a newer minor than the caller selected (no filtering). */
function checkCompatible(events: TestEvent[], conn: Connection, method: string): void {
  for (const e of events) {
    const minor = requiredMinor(e);
    if (minor > conn.minor)
      throw new RpcError("session_protocol_incompatible", {
        details: {
          eventId: e.eventId,
          eventSequence: e.sequence,
          method,
          requiredProtocol: { major: 1, minor },
          selectedProtocol: { major: 1, minor: conn.minor },
          sessionId: e.sessionId,
        },
      });
  }
}

export function sessionHandlers(core: Core): Pick<Handlers, SessionMethods> {
  const log = core.log;
  /** `sessionId` or the connection's active Session; deleted and unknown ids are session_not_found. */
  const target = (sessionId: string | undefined, conn: Connection): SessionInfo => {
    const id = sessionId ?? stateOf(conn).activeSessionId;
    if (!id) throw sessionRequired();
    const info = log.info(id);
    if (!info) throw new RpcError("session_not_found", { arg: id, details: { sessionId: id } });
    return info;
  };

  return {
    "session.current": (_p, ctx) => ({ sessionId: ctx.requireSession() }),

    "session.end": (p, ctx) =>
      endSession(core, ctx.conn, {
        outcome: p.outcome ?? "completed",
        reason: p.reason ?? null,
        requestId: ctx.requestId,
      }),

    "sessions.list": () => log.list(),

    // Read from the database, not the in-memory states: the counts, outcome and verdict are in the
    // events, and SQLite computes them without the events being loaded here.
    "devicerail.sessions.list": (p) => ({ sessions: log.summaries({ limit: p.limit, state: p.state }) }),

    "events.list": (p, { conn, requestId }) => {
      const info = target(p.sessionId, conn);
      const after = p.afterSequence ?? 0;
      const overhead = utf8Length(JSON.stringify({ jsonrpc: "2.0", id: requestId, result: [] }));
      const fit = fitting(log, info.id, after, p.limit, MAX_FRAME_BYTES - overhead);
      // Refused from the stored sizes: the events are not read, so a huge Session costs no memory here.
      if (fit.over !== null) throw frameTooLarge(overhead + fit.over, fit.count);
      const events = fit.count ? log.read(info.id, after, fit.count) : [];
      checkCompatible(events, conn, "events.list");
      return events;
    },

    "session.export": (p, { conn, requestId }) => {
      if (p.afterSequence !== undefined && p.limit === undefined)
        throw new RpcError("export_after_sequence_requires_limit", { details: { method: "session.export" } });
      if (p.limit !== undefined && !conn.has("session.export.page.v1"))
        throw methodUnavailable("session.export", "session.export.page.v1");
      const session = target(p.sessionId, conn);
      if (p.limit === undefined) {
        const overhead = utf8Length(JSON.stringify({ jsonrpc: "2.0", id: requestId, result: { session, events: [] } }));
        const fit = fitting(log, session.id, 0, undefined, MAX_FRAME_BYTES - overhead);
        if (fit.over !== null) throw frameTooLarge(overhead + fit.over);
        const events = fit.count ? log.read(session.id, 0, fit.count) : [];
        checkCompatible(events, conn, "session.export");
        return { session, events };
      }
      if (session.state !== "ended")
        throw new RpcError("session_active", { arg: session.id, details: { sessionId: session.id } });
      const after = p.afterSequence ?? 0;
      if (after > session.lastSequence)
        throw new RpcError("event_cursor_ahead", {
          message: `session ${session.id} export cursor EventSequence(${after}) is ahead of last sequence EventSequence(${session.lastSequence})`,
          details: { afterSequence: after, lastSequence: session.lastSequence, sessionId: session.id },
        });
      // Only the events whose stored sizes fit one line are read; exportPage then trims exactly.
      const overhead = utf8Length(
        JSON.stringify({
          jsonrpc: "2.0",
          id: requestId,
          result: { session, events: [], nextAfterSequence: Number.MAX_SAFE_INTEGER },
        }),
      );
      const fit = fitting(log, session.id, after, p.limit, MAX_FRAME_BYTES - overhead);
      if (fit.count === 0 && fit.over !== null) throw frameTooLarge(overhead + fit.over);
      const candidates = fit.count ? log.read(session.id, after, fit.count) : [];
      checkCompatible(candidates, conn, "session.export");
      return exportPage(session, candidates, requestId);
    },

    "events.clear": async (p, { conn }) => {
      const info = target(p.sessionId, conn);
      if (info.state !== "ended")
        throw new RpcError("session_active", { arg: info.id, details: { sessionId: info.id } });
      const orphans = await log.deleteSession(info.id);
      try {
        await core.evidence.remove(orphans);
      } catch (err) {
        // The log is already gone; files left behind are swept at the next start (no row, no reference).
        const cause = err instanceof RpcError ? err.error.data : ERRORS.evidence_io_error;
        throw new RpcError("evidence_cleanup_failed", {
          retryable: cause.retryable,
          details: { causeCode: cause.code },
        });
      }
      return { deleted: true, sessionId: info.id };
    },
  };
}

/** Rows of stored sizes read at a time while planning a page. */
const SIZE_ROWS = 4096;

/**
 * How many of the events after `after` (at most `limit`, all when absent) fit in `budget` bytes of
 * JSON joined by commas, judged from their stored sizes without reading them. `over` is the size
 * the answer would at least have when they do not all fit, else null.
 */
function fitting(
  log: Core["log"],
  sessionId: string,
  after: number,
  limit: number | undefined,
  budget: number,
): { count: number; over: number | null } {
  let count = 0;
  let bytes = 0;
  let cursor = after;
  for (;;) {
    const want = limit === undefined ? SIZE_ROWS : Math.min(SIZE_ROWS, limit - count);
    if (want <= 0) return { count, over: null };
    const sizes = log.sizes(sessionId, cursor, want);
    for (const s of sizes) {
      const add = s.bytes + (count ? 1 : 0);
      if (bytes + add > budget) return { count, over: bytes + add };
      bytes += add;
      count++;
      cursor = s.sequence;
    }
    if (sizes.length < want) return { count, over: null };
  }
}

/** response_frame_too_large before anything was read; `fittingLimit`: the largest limit whose page fits, when one event does. */
const frameTooLarge = (actualBytesAtLeast: number, fittingLimit = 0) =>
  fittingLimit > 0
    ? new RpcError("response_frame_too_large", {
        details: { actualBytesAtLeast, limitBytes: MAX_FRAME_BYTES, fittingLimit },
      })
    : new RpcError("response_frame_too_large", { details: { actualBytesAtLeast, limitBytes: MAX_FRAME_BYTES } });

/**
 * The longest prefix of `candidates` whose complete response line fits in 1 MiB (docs/protocol/sessions-and-events.md#exporting-a-session), with
 * nextAfterSequence when more events follow. Not even one event fitting is response_frame_too_large.
 */
function exportPage(session: SessionInfo, candidates: TestEvent[], requestId: HandlerContext["requestId"]) {
  // The envelope around the events, with the largest possible nextAfterSequence.
  const overhead = utf8Length(
    JSON.stringify({
      jsonrpc: "2.0",
      id: requestId,
      result: { session, events: [], nextAfterSequence: Number.MAX_SAFE_INTEGER },
    }),
  );
  let bytes = overhead;
  const events: TestEvent[] = [];
  for (const e of candidates) {
    const size = utf8Length(JSON.stringify(e)) + (events.length ? 1 : 0);
    if (bytes + size > MAX_FRAME_BYTES) {
      if (events.length === 0)
        throw new RpcError("response_frame_too_large", {
          details: { actualBytesAtLeast: bytes + size, limitBytes: MAX_FRAME_BYTES },
        });
      break;
    }
    bytes += size;
    events.push(e);
  }
  const last = events[events.length - 1];
  return last && last.sequence < session.lastSequence
    ? { session, events, nextAfterSequence: last.sequence }
    : { session, events };
}
