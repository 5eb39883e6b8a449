import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import { SessionQueries } from "../../../src/core/sessions/session-queries.ts";
import { events, evidence, sessionEvidence, sessions } from "../../../src/core/sessions/tables.ts";
import type { TestEvent } from "../../../src/protocol/types/event.ts";

const A = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const B = "4c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const INLINE = "a".repeat(64);
const FILE = "b".repeat(64);
const UNKNOWN = "c".repeat(64);

const event = (sessionId: string, sequence: number): TestEvent => ({
  eventId: `e-${sequence}`,
  sessionId,
  sequence,
  atMs: sequence,
  payload: { type: "error", error: { code: "x", message: `e${sequence}`, retryable: false, details: null } },
});

/** Session A with 10 events and both kinds of Evidence, Session B with 3 events and the file object. */
function seeded() {
  const { db } = openDatabase(":memory:");
  db.insert(sessions)
    .values([A, B].map((id) => ({ id, state: "active" as const, startedAtMs: 1 })))
    .run();
  const rows = [
    ...Array.from({ length: 10 }, (_, i) => event(A, i + 1)),
    ...Array.from({ length: 3 }, (_, i) => event(B, i + 1)),
  ];
  // Inserted out of order: reads must order by sequence, not by insertion.
  db.insert(events)
    .values(
      rows.reverse().map((e) => ({
        sessionId: e.sessionId,
        sequence: e.sequence,
        eventId: e.eventId,
        kind: e.payload.type,
        atMs: e.atMs,
        body: JSON.stringify(e),
      })),
    )
    .run();
  db.insert(evidence)
    .values([
      { sha256: INLINE, mediaType: "image/png", byteLength: 3, createdAtMs: 1, inlineBytes: Buffer.from([1, 2, 3]) },
      { sha256: FILE, mediaType: "image/png", byteLength: 4, createdAtMs: 1, inlineBytes: null },
    ])
    .run();
  db.insert(sessionEvidence)
    .values([
      { sessionId: A, sha256: INLINE },
      { sessionId: A, sha256: FILE },
      { sessionId: B, sha256: FILE },
    ])
    .run();
  return { db, queries: new SessionQueries(db) };
}

describe("SessionQueries", () => {
  test("pages through a Session's events in order, each once, when reading after the last sequence seen", () => {
    const { queries } = seeded();
    const pages: number[][] = [];
    for (let after = 0; ; ) {
      const page = queries.read(A, after, 4);
      pages.push(page.map((e) => e.sequence));
      if (page.length < 4) break;
      after = page.at(-1)?.sequence ?? after;
    }
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
  });

  test("returns the stored events whole, and only the Session's own, when reading without a limit", () => {
    const { queries } = seeded();
    expect({
      all: queries.read(B),
      after: queries.read(B, 2),
      past: queries.read(B, 3),
      unknown: queries.read(UNKNOWN),
    }).toEqual({
      all: [event(B, 1), event(B, 2), event(B, 3)],
      after: [event(B, 3)],
      past: [],
      unknown: [],
    });
  });

  test("answers which Evidence a Session references and whether a digest is referenced at all when Sessions share an object", () => {
    const { queries } = seeded();
    expect({
      a: [...queries.evidenceOf(A)].sort(),
      b: [...queries.evidenceOf(B)],
      referenced: [INLINE, FILE, UNKNOWN].map((d) => queries.isReferenced(d)),
    }).toEqual({
      a: [INLINE, FILE],
      b: [FILE],
      referenced: [true, true, false],
    });
  });

  test("gives inline bytes as a plain Uint8Array when the object is inline, and null when it is a file or unknown", () => {
    const { queries } = seeded();
    const bytes = queries.inlineEvidence(INLINE);
    expect({
      has: [INLINE, FILE, UNKNOWN].map((d) => queries.hasEvidence(d)),
      inline: bytes,
      buffer: Buffer.isBuffer(bytes),
      file: queries.inlineEvidence(FILE),
      unknown: queries.inlineEvidence(UNKNOWN),
    }).toEqual({
      has: [true, true, false],
      inline: new Uint8Array([1, 2, 3]),
      buffer: false,
      file: null,
      unknown: null,
    });
  });

  test("sees the transaction's uncommitted changes when built on a transaction, and not after it rolled back", () => {
    const { db, queries } = seeded();
    let inside: boolean | undefined;
    expect(() =>
      db.transaction((tx) => {
        tx.delete(sessionEvidence).where(eq(sessionEvidence.sha256, INLINE)).run();
        inside = new SessionQueries(tx).isReferenced(INLINE);
        throw new Error("roll back");
      }),
    ).toThrow("roll back");
    expect({ inside, after: queries.isReferenced(INLINE) }).toEqual({ inside: false, after: true });
  });
});
