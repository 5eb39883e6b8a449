import { blob, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * A Session row outlives its deletion as a tombstone (state "deleted") so its id is never reused
 * and a stream subscriber can be told the Session was deleted rather than never existed.
 */
export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  state: text("state", { enum: ["active", "ended", "deleted"] }).notNull(),
  startedAtMs: integer("started_at_ms").notNull(),
  endedAtMs: integer("ended_at_ms"),
});

/**
 * One row per TestEvent; `body` is the event's JSON, so reads return exactly what was acknowledged.
 * A Session's last sequence is the highest row's (read once at start-up), so appending touches only
 * this table. event_id has no unique index: ids are random v4 UUIDs (122 random bits), no method
 * looks events up by id, and the index on random keys doubled the cost of every commit.
 */
export const events = sqliteTable(
  "events",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    sequence: integer("sequence").notNull(),
    eventId: text("event_id").notNull(),
    kind: text("kind").notNull(),
    atMs: integer("at_ms").notNull(),
    body: text("body").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.sequence] })],
);

/**
 * Stored Evidence objects. The bytes of a small object (at most the inline limit, 64 KiB by
 * default: UI trees, small screenshots) are `inline_bytes`, written in the transaction of the event
 * that references them; a larger object's bytes are a file named by its digest (inline_bytes null).
 */
export const evidence = sqliteTable("evidence", {
  sha256: text("sha256").primaryKey(),
  mediaType: text("media_type").notNull(),
  byteLength: integer("byte_length").notNull(),
  createdAtMs: integer("created_at_ms").notNull(),
  inlineBytes: blob("inline_bytes", { mode: "buffer" }),
});

/** Which Sessions reference which Evidence: an object is removed when its last reference goes. */
export const sessionEvidence = sqliteTable(
  "session_evidence",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    sha256: text("sha256")
      .notNull()
      .references(() => evidence.sha256),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.sha256] }), index("session_evidence_sha256").on(t.sha256)],
);
