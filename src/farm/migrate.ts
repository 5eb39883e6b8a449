/**
 * Brings a farm database to this version's tables: the embedded migrations (migrations/index.ts,
 * generated) not yet applied, in one transaction under a transaction-scoped advisory lock, so
 * hosts joining at the same moment apply each migration once. A migration already applied with
 * other SQL (a farm of mixed versions gone wrong) is refused rather than guessed at.
 */
import type { SQL } from "bun";
import { MIGRATIONS } from "./migrations/index.ts";

/** Any constant will do; it only has to be the same for every devicerail host. */
const MIGRATION_LOCK = 0x64657672;

export class FarmSchemaError extends Error {}

export async function migrateFarm(sql: SQL): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS devicerail_farm_migrations (tag text PRIMARY KEY, hash text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const applied = new Map<string, string>(
      ((await tx`SELECT tag, hash FROM devicerail_farm_migrations`) as { tag: string; hash: string }[]).map((r) => [
        r.tag,
        r.hash,
      ]),
    );
    let count = 0;
    for (const m of MIGRATIONS) {
      const hash = applied.get(m.tag);
      if (hash !== undefined) {
        if (hash !== m.hash)
          throw new FarmSchemaError(
            `the farm database applied migration ${m.tag} with other SQL than this devicerail's`,
          );
        continue;
      }
      for (const statement of m.sql.split("--> statement-breakpoint")) if (statement.trim()) await tx.unsafe(statement);
      await tx`INSERT INTO devicerail_farm_migrations (tag, hash) VALUES (${m.tag}, ${m.hash})`;
      count++;
    }
    return count;
  });
}
