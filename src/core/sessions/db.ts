import { Database } from "bun:sqlite";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { MIGRATIONS } from "./migrations/index.ts";
import * as tables from "./tables.ts";

export type Db = BunSQLiteDatabase<typeof tables>;

export interface OpenedDatabase {
  raw: Database;
  db: Db;
  /** Whether start-up ran PRAGMA quick_check ("skipped" above QUICK_CHECK_MAX_BYTES). */
  integrity?: "ok" | "skipped";
}

/**
 * The database cannot be used (another daemon holds it, another build wrote it, its disk is full,
 * it is damaged); start-up stops with this message, which names the file and the fix.
 */
export class DatabaseLockedError extends Error {}

/**
 * The largest database checked with PRAGMA quick_check at every start. The check reads every page,
 * so it costs about one read of the file: measured 0.3 s for 195 MB with the file in the page cache
 * and 3 to 4 s with a cold cache (1.3 GB: 1 s and 18 to 22 s). Larger files start unchecked (the daemon
 * logs that it skipped the check) rather than make every start wait that long.
 */
export const QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024;

const FULL = /database or disk is full|SQLITE_FULL|ENOSPC|EDQUOT/;
const DAMAGED = /malformed|file is not a database|SQLITE_CORRUPT|SQLITE_NOTADB/;

/** A failure of the store at `path` the user can fix (full disk, damaged file), as one line naming the file and the fix; null for anything else. */
export function storeProblem(path: string, err: unknown): DatabaseLockedError | null {
  // SQLite's errors carry a code; the stores' RpcErrors the errno or the store's reason in details.
  const e = err as {
    code?: unknown;
    message?: unknown;
    error?: { data?: { details?: { errno?: unknown; reason?: unknown } } };
  };
  const details = e?.error?.data?.details;
  const text = [e?.code, e?.message, details?.errno, details?.reason].filter((x) => typeof x === "string").join(" ");
  const why =
    typeof details?.reason === "string" ? details.reason : typeof e?.message === "string" ? e.message : String(err);
  if (FULL.test(text))
    return new DatabaseLockedError(
      `the disk holding ${path} is full (${why}); free space on it and start again, or choose another DEVICERAIL_DATA_DIR`,
    );
  if (DAMAGED.test(text)) return damaged(path, why);
  return null;
}

function damaged(path: string, why: string): DatabaseLockedError {
  return new DatabaseLockedError(
    `${path} is damaged (${why}); move it aside with its -wal and -shm files, if any (do not delete them: they hold the recorded Sessions), and start again with a new store, or choose another DEVICERAIL_DATA_DIR`,
  );
}

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
export function openDatabase(
  path: string,
  lockWaitMs = 500,
  quickCheckMaxBytes = QUICK_CHECK_MAX_BYTES,
): OpenedDatabase {
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    let raw: Database | null;
    try {
      raw = tryLock(path);
    } catch (err) {
      throw storeProblem(path, err) ?? err;
    }
    if (raw) return configure(raw, path, quickCheckMaxBytes);
    if (Date.now() >= deadline)
      throw new DatabaseLockedError(
        `another devicerail daemon is using ${path}; stop it or choose another DEVICERAIL_DATA_DIR`,
      );
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

function configure(raw: Database, path: string, quickCheckMaxBytes: number): OpenedDatabase {
  raw.run("PRAGMA synchronous = FULL");
  // Fewer, larger checkpoints: each one copies WAL pages into the database and fsyncs it, and at the
  // default (1000 pages) they stalled appends every few hundred commits.
  raw.run("PRAGMA wal_autocheckpoint = 10000");
  raw.run("PRAGMA foreign_keys = ON");
  raw.run("PRAGMA busy_timeout = 5000");
  let integrity: OpenedDatabase["integrity"];
  try {
    integrity = path === ":memory:" ? undefined : quickCheck(raw, path, quickCheckMaxBytes);
    migrate(raw);
  } catch (err) {
    raw.close();
    if (err instanceof DatabaseLockedError) throw err;
    throw (
      storeProblem(path, err) ??
      new DatabaseLockedError(
        `cannot use ${path}: ${(err as Error).message}; move it away or choose another DEVICERAIL_DATA_DIR`,
      )
    );
  }
  return { raw, db: drizzle(raw, { schema: tables }), ...(integrity ? { integrity } : {}) };
}

/**
 * SQLite's structural check (every b-tree page, cell and overflow chain; not the index contents),
 * so a file with damaged pages is refused at start instead of failing reads later. The size comes
 * from SQLite itself: the live file is never opened or stat'ed outside its connection.
 */
function quickCheck(raw: Database, path: string, maxBytes: number): "ok" | "skipped" {
  const pages = raw.query<{ page_count: number }, []>("PRAGMA page_count").get()?.page_count ?? 0;
  const pageSize = raw.query<{ page_size: number }, []>("PRAGMA page_size").get()?.page_size ?? 4096;
  if (pages * pageSize > maxBytes) return "skipped";
  // At most three problems: enough to name the damage, and the check stops early on a wreck.
  const rows = raw.query<{ quick_check: string }, []>("PRAGMA quick_check(3)").all();
  if (rows.length === 1 && rows[0]?.quick_check === "ok") return "ok";
  const found = rows
    .flatMap((r) => r.quick_check.split("\n"))
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line && !line.startsWith("***"))
    .join("; ");
  throw damaged(path, `PRAGMA quick_check: ${found.length > 200 ? `${found.slice(0, 200)}…` : found}`);
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
      raw.run("INSERT INTO devicerail_migrations (tag, hash, applied_at_ms) VALUES (?, ?, ?)", [
        m.tag,
        m.hash,
        Date.now(),
      ]);
    })();
  }
}
