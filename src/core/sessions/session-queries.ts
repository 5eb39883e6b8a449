import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { TestEvent } from "../../protocol/types/event.ts";
import { noteRead } from "./read-pressure.ts";
import { events, evidence, sessionEvidence } from "./tables.ts";
import type * as tables from "./tables.ts";

/** The database or a transaction on it: a query inside a transaction must run on the transaction. */
export type Queryable = BaseSQLiteDatabase<"sync", void, typeof tables>;

/** What is committed: a Session's events and the Evidence rows and references they recorded. */
export class SessionQueries {
  constructor(private readonly db: Queryable) {}

  /** Committed events with sequence > afterSequence, in order, at most `limit`. */
  read(sessionId: string, afterSequence = 0, limit?: number): TestEvent[] {
    const q = this.db
      .select({ body: events.body })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), gt(events.sequence, afterSequence)))
      .orderBy(asc(events.sequence));
    const rows = limit === undefined ? q.all() : q.limit(limit).all();
    noteRead(rows.reduce((n, r) => n + r.body.length, 0));
    return rows.map((r) => JSON.parse(r.body) as TestEvent);
  }

  /**
   * The size in bytes of each committed event's JSON with sequence > afterSequence, in order, at
   * most `limit`. octet_length takes a text's size from its record header, so no body is loaded:
   * a reader can plan a page of bounded bytes however large the events are.
   */
  sizes(sessionId: string, afterSequence: number, limit: number): { sequence: number; bytes: number }[] {
    return this.db
      .select({ sequence: events.sequence, bytes: sql<number>`octet_length(${events.body})` })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), gt(events.sequence, afterSequence)))
      .orderBy(asc(events.sequence))
      .limit(limit)
      .all();
  }

  /**
   * The committed events that may carry an Observation with this id (observationCaptured, and
   * actionCompleted with its before/after), newest first. SQLite finds the id in the bodies, so
   * only those are parsed, however long the Session.
   */
  eventsNaming(sessionId: string, observationId: string): TestEvent[] {
    const needle = JSON.stringify(observationId);
    return this.db
      .select({ body: events.body })
      .from(events)
      .where(
        and(
          eq(events.sessionId, sessionId),
          sql`${events.kind} IN ('observationCaptured', 'actionCompleted')`,
          sql`instr(${events.body}, ${needle}) > 0`,
        ),
      )
      .orderBy(desc(events.sequence))
      .all()
      .map((r) => JSON.parse(r.body) as TestEvent);
  }

  /** True when this Session references the digest (one primary-key lookup). */
  references(sessionId: string, sha256: string): boolean {
    return (
      this.db
        .select({ sha256: sessionEvidence.sha256 })
        .from(sessionEvidence)
        .where(and(eq(sessionEvidence.sessionId, sessionId), eq(sessionEvidence.sha256, sha256)))
        .limit(1)
        .all().length > 0
    );
  }

  /** Digests of the Evidence this Session references. */
  evidenceOf(sessionId: string): Set<string> {
    const rows = this.db
      .select({ sha256: sessionEvidence.sha256 })
      .from(sessionEvidence)
      .where(eq(sessionEvidence.sessionId, sessionId))
      .all();
    return new Set(rows.map((r) => r.sha256));
  }

  /** True when some Session references the digest (objects without references may be removed). */
  isReferenced(sha256: string): boolean {
    return (
      this.db
        .select({ sha256: sessionEvidence.sha256 })
        .from(sessionEvidence)
        .where(eq(sessionEvidence.sha256, sha256))
        .limit(1)
        .all().length > 0
    );
  }

  /** True when the digest has a row (its bytes are inline, or its object file is expected to exist). */
  hasEvidence(sha256: string): boolean {
    return (
      this.db.select({ sha256: evidence.sha256 }).from(evidence).where(eq(evidence.sha256, sha256)).limit(1).all()
        .length > 0
    );
  }

  /** The bytes of an object kept in the database, as committed; null when unknown or stored as a file. */
  inlineEvidence(sha256: string): Uint8Array | null {
    // Selected as the driver's value: bun:sqlite returns a Uint8Array, which the column's buffer
    // mode would copy into a Buffer.
    const row = this.db
      .select({ bytes: sql<Uint8Array | null>`${evidence.inlineBytes}` })
      .from(evidence)
      .where(eq(evidence.sha256, sha256))
      .get();
    return row?.bytes ?? null;
  }
}
