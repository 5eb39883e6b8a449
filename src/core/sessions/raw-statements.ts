import type { Database } from "bun:sqlite";
import type { BatchStore, PendingAppend } from "./group-commit.ts";

/** A sessions row with the highest sequence on disk, as the log reads them at start-up. */
export interface StoredSession {
  id: string;
  state: "active" | "ended" | "deleted";
  startedAtMs: number;
  endedAtMs: number | null;
  lastSequence: number;
}

/**
 * The only SQL of the log that bypasses drizzle (everything else goes through it), for two reasons:
 * - Speed: the append path runs for every event inside the group-commit transaction. Building it
 *   with drizzle's query builder halved bench:event-store (about 27,000 against 55,000 events/s).
 * - Release: drizzle's prepared queries are as fast but keep their bun:sqlite statement private,
 *   so it cannot be finalized, and a closed database with a live statement keeps its exclusive
 *   lock until garbage collection: the same process could not open the file again. Every
 *   statement here is finalized by finalize() (the start-up load at once), so a log that was
 *   only loaded and appended to lets go of the file on close.
 */
export class RawStatements implements BatchStore {
  private readonly insertSession;
  private readonly insertEvent;
  private readonly sealSession;
  private readonly insertEvidence;
  private readonly insertRef;

  constructor(private readonly raw: Database) {
    this.insertSession = raw.prepare<never, [string, number]>(
      "INSERT INTO sessions (id, state, started_at_ms, ended_at_ms) VALUES (?, 'active', ?, NULL)",
    );
    this.insertEvent = raw.prepare<never, [string, number, string, string, number, string]>(
      "INSERT INTO events (session_id, sequence, event_id, kind, at_ms, body) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.sealSession = raw.prepare<never, [number | null, string]>(
      "UPDATE sessions SET state = 'ended', ended_at_ms = ? WHERE id = ?",
    );
    // An existing row already holds the object (inline or as a file); a row that a deletion removed
    // after the put is written again, with the bytes when they are inline.
    this.insertEvidence = raw.prepare<never, [string, string, number, number, Uint8Array | null]>(
      "INSERT OR IGNORE INTO evidence (sha256, media_type, byte_length, created_at_ms, inline_bytes) VALUES (?, ?, ?, ?, ?)",
    );
    this.insertRef = raw.prepare<never, [string, string]>(
      "INSERT OR IGNORE INTO session_evidence (session_id, sha256) VALUES (?, ?)",
    );
  }

  /** One transaction for the whole batch: with synchronous=FULL its commit is the batch's one sync. */
  writeBatch(batch: readonly PendingAppend[], atMs: number): void {
    this.raw.transaction(() => {
      for (const p of batch) {
        const e = p.event;
        if (p.create) this.insertSession.run(e.sessionId, p.state.startedAtMs);
        this.insertEvent.run(e.sessionId, e.sequence, e.eventId, e.payload.type, e.atMs, JSON.stringify(e));
        for (const ev of p.evidence) {
          this.insertEvidence.run(ev.sha256, ev.mediaType, ev.byteLength, atMs, ev.inline ?? null);
          this.insertRef.run(e.sessionId, ev.sha256);
        }
        if (e.payload.type === "sessionEnded") this.sealSession.run(p.state.endedAtMs, e.sessionId);
      }
    })();
  }

  /** Every Session row, tombstones included; MAX(sequence) per Session is one index lookup. */
  loadSessions(): StoredSession[] {
    type Row = {
      id: string;
      state: StoredSession["state"];
      started_at_ms: number;
      ended_at_ms: number | null;
      last_sequence: number;
    };
    const query = this.raw.prepare<Row, []>(
      "SELECT s.id, s.state, s.started_at_ms, s.ended_at_ms, COALESCE((SELECT MAX(sequence) FROM events e WHERE e.session_id = s.id), 0) AS last_sequence FROM sessions s",
    );
    try {
      return query.all().map((r) => ({
        id: r.id,
        state: r.state,
        startedAtMs: r.started_at_ms,
        endedAtMs: r.ended_at_ms,
        lastSequence: r.last_sequence,
      }));
    } finally {
      query.finalize();
    }
  }

  finalize(): void {
    for (const st of [this.insertSession, this.insertEvent, this.sealSession, this.insertEvidence, this.insertRef])
      st.finalize();
  }
}
