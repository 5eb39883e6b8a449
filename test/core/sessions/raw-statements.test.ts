import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvidenceRow } from "../../../src/core/sessions/append-input.ts";
import { openDatabase } from "../../../src/core/sessions/db.ts";
import type { PendingAppend } from "../../../src/core/sessions/group-commit.ts";
import { RawStatements } from "../../../src/core/sessions/raw-statements.ts";
import { newSessionState, type SessionState } from "../../../src/core/sessions/session-state.ts";
import type { TestEventPayload } from "../../../src/protocol/types/event.ts";
import { countTransactions } from "../../support/transactions.ts";

const A = "3c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const B = "4c0a4f7e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";
const note: TestEventPayload = {
  type: "error",
  error: { code: "x", message: "note", retryable: false, details: null },
};

/** A numbered event as GroupCommit hands it over. */
function pending(
  state: SessionState,
  sequence: number,
  payload: TestEventPayload,
  evidence: readonly EvidenceRow[] = [],
): PendingAppend {
  return {
    state,
    event: { eventId: `e-${state.id}-${sequence}`, sessionId: state.id, sequence, atMs: 10 + sequence, payload },
    evidence,
    create: sequence === 1,
  };
}

function memory() {
  const opened = openDatabase(":memory:");
  const rows = (sql: string) => opened.raw.query(sql).all();
  return { raw: opened.raw, statements: new RawStatements(opened.raw), rows };
}

describe("RawStatements", () => {
  test("writes Sessions, events, Evidence rows and references, and seals a Session when a batch holds its sessionEnded", () => {
    const { statements, rows } = memory();
    const a = newSessionState(A, 5);
    const b = { ...newSessionState(B, 6), endedAtMs: 99 };
    const inline = { sha256: "a".repeat(64), mediaType: "image/png", byteLength: 3, inline: new Uint8Array([1, 2, 3]) };
    const file = { sha256: "b".repeat(64), mediaType: "image/jpeg", byteLength: 4 };
    statements.writeBatch(
      [
        pending(a, 1, { type: "sessionStarted" }),
        pending(b, 1, { type: "sessionStarted" }),
        pending(a, 2, note, [inline, file]),
        pending(b, 2, { type: "sessionEnded", outcome: "completed", reason: null }),
      ],
      77,
    );
    expect({
      sessions: rows("SELECT * FROM sessions ORDER BY id"),
      events: rows("SELECT session_id, sequence, event_id, kind, at_ms FROM events ORDER BY session_id, sequence"),
      evidence: rows("SELECT * FROM evidence ORDER BY sha256"),
      refs: rows("SELECT * FROM session_evidence ORDER BY sha256"),
    }).toEqual({
      sessions: [
        { id: A, state: "active", started_at_ms: 5, ended_at_ms: null },
        { id: B, state: "ended", started_at_ms: 6, ended_at_ms: 99 },
      ],
      events: [
        { session_id: A, sequence: 1, event_id: `e-${A}-1`, kind: "sessionStarted", at_ms: 11 },
        { session_id: A, sequence: 2, event_id: `e-${A}-2`, kind: "error", at_ms: 12 },
        { session_id: B, sequence: 1, event_id: `e-${B}-1`, kind: "sessionStarted", at_ms: 11 },
        { session_id: B, sequence: 2, event_id: `e-${B}-2`, kind: "sessionEnded", at_ms: 12 },
      ],
      evidence: [
        {
          sha256: inline.sha256,
          media_type: "image/png",
          byte_length: 3,
          created_at_ms: 77,
          inline_bytes: new Uint8Array([1, 2, 3]),
        },
        { sha256: file.sha256, media_type: "image/jpeg", byte_length: 4, created_at_ms: 77, inline_bytes: null },
      ],
      refs: [
        { session_id: A, sha256: inline.sha256 },
        { session_id: A, sha256: file.sha256 },
      ],
    });
  });

  test("stores the event's JSON as the row's body when writing an event, so a read returns what was acknowledged", () => {
    const { statements, rows } = memory();
    const a = newSessionState(A, 5);
    const first = pending(a, 1, { type: "sessionStarted" });
    statements.writeBatch([first], 1);
    expect(rows("SELECT body FROM events")).toEqual([{ body: JSON.stringify(first.event) }]);
  });

  test("keeps the first Evidence row when a later batch references the same digest again", () => {
    const { statements, rows } = memory();
    const a = newSessionState(A, 5);
    const sha256 = "c".repeat(64);
    statements.writeBatch(
      [pending(a, 1, { type: "sessionStarted" }, [{ sha256, mediaType: "image/png", byteLength: 1 }])],
      1,
    );
    statements.writeBatch(
      [pending(a, 2, note, [{ sha256, mediaType: "image/jpeg", byteLength: 2, inline: new Uint8Array([9, 9]) }])],
      2,
    );
    expect({ evidence: rows("SELECT * FROM evidence"), refs: rows("SELECT * FROM session_evidence") }).toEqual({
      evidence: [{ sha256, media_type: "image/png", byte_length: 1, created_at_ms: 1, inline_bytes: null }],
      refs: [{ session_id: A, sha256 }],
    });
  });

  test("writes none of a batch in one transaction when one of its rows fails", () => {
    const { raw, statements, rows } = memory();
    const a = newSessionState(A, 5);
    statements.writeBatch([pending(a, 1, { type: "sessionStarted" })], 1);
    const transactions = countTransactions(raw);
    const duplicate = pending(a, 2, note);
    expect(() =>
      statements.writeBatch(
        [
          duplicate,
          pending(a, 3, note, [{ sha256: "d".repeat(64), mediaType: "image/png", byteLength: 1 }]),
          duplicate,
        ],
        2,
      ),
    ).toThrow(/UNIQUE constraint failed/);
    expect({
      transactions: transactions(),
      events: rows("SELECT sequence FROM events"),
      evidence: rows("SELECT sha256 FROM evidence"),
    }).toEqual({
      transactions: 1,
      events: [{ sequence: 1 }],
      evidence: [],
    });
  });

  test("loads every Session with its highest sequence, tombstones included, when the log starts", () => {
    const { raw, statements } = memory();
    const a = newSessionState(A, 5);
    const b = { ...newSessionState(B, 6), endedAtMs: 8 };
    statements.writeBatch(
      [
        pending(a, 1, { type: "sessionStarted" }),
        pending(a, 2, note),
        pending(a, 3, note),
        pending(b, 1, { type: "sessionStarted" }),
      ],
      1,
    );
    statements.writeBatch([pending(b, 2, { type: "sessionEnded", outcome: "completed", reason: null })], 2);
    raw.run("INSERT INTO sessions (id, state, started_at_ms, ended_at_ms) VALUES ('gone', 'deleted', 1, 2)");
    expect(statements.loadSessions().sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([
      { id: A, state: "active", startedAtMs: 5, endedAtMs: null, lastSequence: 3 },
      { id: B, state: "ended", startedAtMs: 6, endedAtMs: 8, lastSequence: 2 },
      { id: "gone", state: "deleted", startedAtMs: 1, endedAtMs: 2, lastSequence: 0 },
    ]);
  });

  test("lets go of the database file when finalized and closed, so the same process can open it again", () => {
    const dir = mkdtempSync(join(tmpdir(), "devicerail-raw-"));
    try {
      const path = join(dir, "devicerail.sqlite");
      const first = openDatabase(path);
      const statements = new RawStatements(first.raw);
      statements.loadSessions();
      statements.writeBatch([pending(newSessionState(A, 5), 1, { type: "sessionStarted" })], 1);
      statements.finalize();
      first.raw.close();
      const second = openDatabase(path);
      const again = new RawStatements(second.raw);
      expect(again.loadSessions()).toEqual([
        { id: A, state: "active", startedAtMs: 5, endedAtMs: null, lastSequence: 1 },
      ]);
      again.finalize();
      second.raw.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
