import { type SQLWrapper, and, desc, eq, inArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { SessionSummary } from "../../protocol/types/extensions.ts";
import type { SessionOutcome } from "../../protocol/types/session.ts";
import type { Queryable } from "./session-queries.ts";
import { sessionInfo } from "./session-state.ts";
import { events, sessions } from "./tables.ts";

export interface SummaryFilter {
  /** At most this many Sessions, the newest. */
  limit?: number;
  state?: "active" | "ended";
}

/** The events the summary reads besides the counts: each found by its primary key. */
const firstEvent = alias(events, "first_event");
const endEvent = alias(events, "end_event");
const verdictEvent = alias(events, "verdict_event");

/** A JSON path of an event row's body, read by SQLite. */
const field = <T>(body: SQLWrapper, path: string) => sql<T>`json_extract(${body}, ${path})`;

/**
 * One row per committed, undeleted Session with its counts and the few facts a person reads first
 * (docs/protocol/sessions-and-events.md#session-summaries), newest first.
 *
 * One statement, so the counts, the outcome and the verdict come from the same snapshot of the log.
 * The Sessions are chosen (and limited) before any event is read. Their events are counted grouped
 * by session_id in the order of the (session_id, sequence) index, so SQLite needs no sort buffer
 * (grouping the join of Sessions and events instead copies every body into one: three times
 * slower at 1,000 Sessions); only actionCompleted bodies are parsed there (the outcome is inside
 * the JSON). The sessionStarted, sessionEnded and
 * last verdictRecorded events are then primary-key lookups. Events never reach JavaScript.
 */
export function sessionSummaries(db: Queryable, filter: SummaryFilter, now: number): SessionSummary[] {
  // rowid is the insertion order: it orders Sessions that started in the same millisecond.
  const rowid = sql<number>`${sessions}.rowid`;
  const picked = db.$with("picked").as(
    db
      .select({
        row: rowid.as("row"),
        id: sessions.id,
        state: sessions.state,
        startedAtMs: sessions.startedAtMs,
        endedAtMs: sessions.endedAtMs,
      })
      .from(sessions)
      .where(inArray(sessions.state, filter.state ? [filter.state] : ["active", "ended"]))
      .orderBy(desc(sessions.startedAtMs), desc(rowid))
      .limit(filter.limit ?? -1),
  );

  // CASE, not AND/OR: only it guarantees that no other kind of event has its body parsed.
  const isError = sql`case ${events.kind} when 'error' then 1
    when 'actionCompleted' then ${field(events.body, "$.payload.outcome.outcome")} <> 'succeeded' else 0 end`;
  const counted = db.$with("counted").as(
    db
      .select({
        sessionId: events.sessionId,
        eventCount: sql<number>`count(*)`.as("event_count"),
        lastSequence: sql<number>`max(${events.sequence})`.as("last_sequence"),
        actions: sql<number>`sum(${events.kind} = 'actionStarted')`.as("actions"),
        errors: sql<number>`sum(${isError})`.as("errors"),
        verdictSequence: sql<
          number | null
        >`max(case when ${events.kind} = 'verdictRecorded' then ${events.sequence} end)`.as("verdict_sequence"),
      })
      .from(events)
      .where(inArray(events.sessionId, db.select({ id: picked.id }).from(picked)))
      .groupBy(events.sessionId),
  );

  // A client without device.routing.v1 writes sessionStarted without deviceId; its observations
  // and actions always name the device (docs/protocol/sessions-and-events.md#who-writes-which-event).
  const touched = sql<string | null>`(select json_extract(${events.body}, '$.deviceId') from ${events}
    where ${events.sessionId} = ${picked.id} and ${events.kind} in ('observationCaptured', 'actionStarted')
    order by ${events.sequence} limit 1)`;
  const rows = db
    .with(picked, counted)
    .select({
      id: picked.id,
      state: picked.state,
      startedAtMs: picked.startedAtMs,
      endedAtMs: picked.endedAtMs,
      eventCount: counted.eventCount,
      lastSequence: counted.lastSequence,
      actions: counted.actions,
      errors: counted.errors,
      deviceId: sql<string | null>`coalesce(${field(firstEvent.body, "$.deviceId")}, ${touched})`,
      outcome: field<SessionOutcome | null>(endEvent.body, "$.payload.outcome"),
      reason: field<string | null>(endEvent.body, "$.payload.reason"),
      verdictStatus: field<"pass" | "fail" | "unknown" | null>(verdictEvent.body, "$.payload.verdict.status"),
      verdictSummary: field<string | null>(verdictEvent.body, "$.payload.verdict.summary"),
    })
    .from(picked)
    .innerJoin(counted, eq(counted.sessionId, picked.id))
    .leftJoin(firstEvent, and(eq(firstEvent.sessionId, picked.id), eq(firstEvent.sequence, 1)))
    .leftJoin(
      endEvent,
      and(
        eq(endEvent.sessionId, picked.id),
        eq(endEvent.sequence, counted.lastSequence),
        eq(endEvent.kind, "sessionEnded"),
      ),
    )
    .leftJoin(
      verdictEvent,
      and(eq(verdictEvent.sessionId, picked.id), eq(verdictEvent.sequence, counted.verdictSequence)),
    )
    .orderBy(desc(picked.startedAtMs), desc(picked.row))
    .all();

  return rows.map((r) => {
    const ended = r.state === "ended";
    return {
      ...sessionInfo(r.id, ended, r.startedAtMs, r.endedAtMs, r.eventCount, r.lastSequence),
      deviceId: r.deviceId,
      // A clock that stepped back must not make a duration negative (the schema's u53).
      durationMs: Math.max(0, (ended ? (r.endedAtMs ?? r.startedAtMs) : now) - r.startedAtMs),
      actions: r.actions,
      errors: r.errors,
      outcome: ended ? r.outcome : null,
      reason: ended ? r.reason : null,
      verdict: r.verdictStatus === null ? null : { status: r.verdictStatus, summary: r.verdictSummary ?? "" },
    };
  });
}
