import { Database } from "bun:sqlite";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { MIGRATIONS } from "./migrations/index.ts";
import * as tables from "./tables.ts";

export type Db = BunSQLiteDatabase<typeof tables>;

export interface OpenedDatabase {
  raw: Database;
  db: Db;
}

/** The database cannot be used (another daemon holds it, or another build wrote it); start-up stops with this message. */
export class DatabaseLockedError extends Error {}

/**
 * Opens (or creates) the event store: WAL, synchronous=FULL (a commit returns only once it is on
 * disk), foreign keys, and an exclusive lock held for the life of the process, so a second daemon
 * on the same data directory is refused instead of interleaving writes. The lock is the
 * database's own file lock, so the kernel releases it when a daemon dies, even by SIGKILL.
 *
 * Two daemons opening a new database at the same instant can each hold the shared lock the other
 * needs upgraded, and both would be refused (1 start in 5 of a pair, measured). So a refused open
 * closes (releasing what it held) and tries again after a random pause, for up to `lockWaitMs`:
 * one of them wins, the other is refused only if the lock is still held then.
 */
export function openDatabase(path: string, lockWaitMs = 500): OpenedDatabase {
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    const raw = tryLock(path);
    if (raw) return configure(raw, path);
    if (Date.now() >= deadline) throw new DatabaseLockedError(`another devicerail daemon is using ${path}; stop it or choose another DEVICERAIL_DATA_DIR`);
    Bun.sleepSync(5 + Math.random() * 25);
  }
}

/** The database with its exclusive lock taken, or null when another connection holds (or contends for) it. */
function tryLock(path: string): Database | null {
  const raw = new Database(path, { create: true, strict: true });
  try {
    raw.run("PRAGMA busy_timeout = 0");
    if (path !== ":memory:") {
      // Exclusive locking must be chosen before WAL so the WAL index lives in this process only.
      raw.run("PRAGMA locking_mode = EXCLUSIVE");
      raw.run("PRAGMA journal_mode = WAL");
      raw.run("BEGIN IMMEDIATE");
      raw.run("COMMIT");
    }
    return raw;
  } catch (err) {
    raw.close();
    if (/locked|busy/i.test(String((err as Error).message))) return null;
    throw err;
  }
}

function configure(raw: Database, path: string): OpenedDatabase {
  raw.run("PRAGMA synchronous = FULL");
  // Fewer, larger checkpoints: each one copies WAL pages into the database and fsyncs it, and at the
  // default (1000 pages) they stalled appends every few hundred commits.
  raw.run("PRAGMA wal_autocheckpoint = 10000");
  raw.run("PRAGMA foreign_keys = ON");
  raw.run("PRAGMA busy_timeout = 5000");
  try {
    migrate(raw);
  } catch (err) {
    raw.close();
    throw new DatabaseLockedError(`cannot use ${path}: ${(err as Error).message}; move it away or choose another DEVICERAIL_DATA_DIR`);
  }
  return { raw, db: drizzle(raw, { schema: tables }) };
}

/** Applies the embedded migrations that are not recorded yet, each in its own transaction. */
export function migrate(raw: Database): void {
  raw.run(
    "CREATE TABLE IF NOT EXISTS devicerail_migrations (tag TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)",
  );
  const applied = new Map(
    raw
      .query<{ tag: string; hash: string }, []>("SELECT tag, hash FROM devicerail_migrations")
      .all()
      .map((r) => [r.tag, r.hash]),
  );
  for (const m of MIGRATIONS) {
    const seen = applied.get(m.tag);
    if (seen !== undefined) {
      if (seen !== m.hash) throw new Error(`migration ${m.tag} differs from the one applied to this database`);
      continue;
    }
    raw.transaction(() => {
      for (const statement of m.sql.split("--> statement-breakpoint")) if (statement.trim()) raw.run(statement);
      raw.run("INSERT INTO devicerail_migrations (tag, hash, applied_at_ms) VALUES (?, ?, ?)", [m.tag, m.hash, Date.now()]);
    })();
  }
}
