import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { SessionQueries } from "./session-queries.ts";
import { events, evidence, sessionEvidence, sessions } from "./tables.ts";

/**
 * Deletes one Session's log and its Evidence references in one transaction, leaving a tombstone
 * so the id is never reused. Returns, sorted, the digests no Session references any more: their
 * rows are gone and the caller removes their files. The caller checks that the Session ended.
 */
export function deleteSessionRows(db: Db, sessionId: string): string[] {
  return db.transaction((tx) => {
    const committed = new SessionQueries(tx);
    const refs = [...committed.evidenceOf(sessionId)];
    tx.delete(events).where(eq(events.sessionId, sessionId)).run();
    tx.delete(sessionEvidence).where(eq(sessionEvidence.sessionId, sessionId)).run();
    const orphans = refs.filter((sha) => !committed.isReferenced(sha));
    for (const sha of orphans) tx.delete(evidence).where(eq(evidence.sha256, sha)).run();
    tx.update(sessions).set({ state: "deleted" }).where(eq(sessions.id, sessionId)).run();
    return orphans.sort();
  });
}
