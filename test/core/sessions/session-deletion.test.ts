import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import { deleteSessionRows } from "../../../src/core/sessions/session-deletion.ts";
import { events, evidence, sessionEvidence, sessions } from "../../../src/core/sessions/tables.ts";

const A = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const B = "4c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const SHARED = "a".repeat(64);
const OWN_1 = "c".repeat(64);
const OWN_2 = "b".repeat(64);

/** Ended Session A references SHARED, OWN_1 and OWN_2; active Session B references SHARED. */
function seeded() {
  const opened = openDatabase(":memory:");
  const { db } = opened;
  db.insert(sessions)
    .values([
      { id: A, state: "ended", startedAtMs: 1, endedAtMs: 2 },
      { id: B, state: "active", startedAtMs: 1 },
    ])
    .run();
  db.insert(events)
    .values(
      [A, A, B].map((sessionId, i) => ({
        sessionId,
        sequence: i + 1,
        eventId: `e${i}`,
        kind: "error",
        atMs: 1,
        body: "{}",
      })),
    )
    .run();
  db.insert(evidence)
    .values([SHARED, OWN_1, OWN_2].map((sha256) => ({ sha256, mediaType: "image/png", byteLength: 1, createdAtMs: 1 })))
    .run();
  db.insert(sessionEvidence)
    .values([
      { sessionId: A, sha256: SHARED },
      { sessionId: A, sha256: OWN_1 },
      { sessionId: A, sha256: OWN_2 },
      { sessionId: B, sha256: SHARED },
    ])
    .run();
  const tables = () => ({
    sessions: db.select({ id: sessions.id, state: sessions.state }).from(sessions).orderBy(sessions.id).all(),
    events: db
      .select({ sessionId: events.sessionId, sequence: events.sequence })
      .from(events)
      .orderBy(events.sequence)
      .all(),
    evidence: db.select({ sha256: evidence.sha256 }).from(evidence).orderBy(evidence.sha256).all(),
    refs: db.select().from(sessionEvidence).orderBy(sessionEvidence.sha256).all(),
  });
  return { ...opened, tables };
}

describe("deleteSessionRows", () => {
  test("removes the log and references, tombstones the Session and returns its orphans sorted when others keep a shared object", () => {
    const { db, tables } = seeded();
    expect({ orphans: deleteSessionRows(db, A), tables: tables() }).toEqual({
      orphans: [OWN_2, OWN_1],
      tables: {
        sessions: [
          { id: A, state: "deleted" },
          { id: B, state: "active" },
        ],
        events: [{ sessionId: B, sequence: 3 }],
        evidence: [{ sha256: SHARED }],
        refs: [{ sessionId: B, sha256: SHARED }],
      },
    });
  });

  test("changes nothing when a step of the deletion fails", () => {
    const { raw, db, tables } = seeded();
    const before = tables();
    raw.run("CREATE TRIGGER refuse BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'refused'); END");
    expect(() => deleteSessionRows(db, A)).toThrow("refused");
    expect(tables()).toEqual(before);
  });
});
