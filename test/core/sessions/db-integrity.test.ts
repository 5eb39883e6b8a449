import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseLockedError, openDatabase, storeProblem } from "../../../src/core/sessions/db.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";
import { EventLog } from "../../../src/core/sessions/event-log.ts";

const dir = mkdtempSync(join(tmpdir(), "devicerail-db-integrity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FIX =
  "move it aside with its -wal and -shm files, if any (do not delete them: they hold the recorded Sessions), and start again with a new store, or choose another DEVICERAIL_DATA_DIR";

/** A closed database holding one Session of 400 events, spread over many b-tree pages. */
async function withContent(name: string): Promise<string> {
  const path = join(dir, name);
  const opened = openDatabase(path);
  const log = new EventLog(opened);
  const { session } = await log.startSession();
  await Promise.all(
    Array.from({ length: 400 }, (_, n) =>
      log.append(session.id, {
        payload: {
          type: "error",
          error: { code: "x", message: `event ${n} ${"·".repeat(200)}`, retryable: false, details: null },
        },
      }),
    ),
  );
  await log.close();
  log.dispose();
  opened.raw.close();
  return path;
}

/** The failure openDatabase answers, as class and message. */
function refusal(path: string, maxBytes?: number): { refused: boolean; message: string } {
  try {
    openDatabase(path, 500, maxBytes).raw.close();
    return { refused: false, message: "opened" };
  } catch (err) {
    return { refused: err instanceof DatabaseLockedError, message: (err as Error).message };
  }
}

/** The page number of one leaf page of the events table (SQLite's own page map, dbstat). */
function eventsLeafPage(path: string): { page: number; pageSize: number } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db
      .query<{ pageno: number }, []>(
        "SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 2",
      )
      .get();
    const size = db.query<{ page_size: number }, []>("PRAGMA page_size").get();
    if (!row || !size) throw new Error("the test database has no events leaf page");
    return { page: row.pageno, pageSize: size.page_size };
  } finally {
    db.close();
  }
}

/** Inverts every bit of `length` bytes at `offset`. */
function flip(path: string, offset: number, length: number): void {
  const fd = openSync(path, "r+");
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, offset);
    for (let i = 0; i < length; i++) bytes[i] = (bytes[i] as number) ^ 0xff;
    writeSync(fd, bytes, 0, length, offset);
  } finally {
    closeSync(fd);
  }
}

const digest = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

describe("openDatabase", () => {
  test("opens a healthy database and reports the integrity check as ok when it is within the checked size", async () => {
    const path = await withContent("healthy.sqlite");
    const opened = openDatabase(path);
    const integrity = opened.integrity;
    opened.raw.close();
    expect(integrity).toBe("ok");
  });

  test("skips the integrity check when the database is larger than the checked size", async () => {
    const path = await withContent("large.sqlite");
    const opened = openDatabase(path, 500, 4096);
    const integrity = opened.integrity;
    opened.raw.close();
    expect(integrity).toBe("skipped");
  });

  test("refuses a database with bit-flipped cells in a data page, naming the file and leaving it in place, when quick_check finds them", async () => {
    const path = await withContent("flipped.sqlite");
    const { page, pageSize } = eventsLeafPage(path);
    // The leaf's 8-byte header is followed by its cell pointer array: flipped pointers leave the page.
    flip(path, (page - 1) * pageSize + 8, 16);
    const before = digest(path);
    const answer = refusal(path);
    expect({
      refused: answer.refused,
      head: answer.message.slice(0, `${path} is damaged (PRAGMA quick_check: `.length),
      fix: answer.message.endsWith(`); ${FIX}`),
    }).toEqual({
      refused: true,
      head: `${path} is damaged (PRAGMA quick_check: `,
      fix: true,
    });
    expect({
      oneLine: !answer.message.includes("\n"),
      names: answer.message.includes(`page ${page}`),
      unchanged: digest(path) === before,
    }).toEqual({ oneLine: true, names: true, unchanged: true });
  });

  test("refuses a truncated database, naming the file and leaving it in place, when half of it is missing", async () => {
    const path = await withContent("truncated.sqlite");
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const before = digest(path);
    const answer = refusal(path);
    expect({ ...answer, unchanged: digest(path) === before }).toEqual({
      refused: true,
      message: `${path} is damaged (database disk image is malformed); ${FIX}`,
      unchanged: true,
    });
  });

  test("refuses a file that is not a database, naming it, when its header is not SQLite's", () => {
    const path = join(dir, "not-a-database.sqlite");
    writeFileSync(path, "these bytes were never a SQLite database, nor its header, nor any page of one\n".repeat(100));
    expect(refusal(path)).toEqual({ refused: true, message: `${path} is damaged (file is not a database); ${FIX}` });
  });

  test("refuses a database whose page header is flipped, in the copy only, when the original is healthy", async () => {
    const path = await withContent("original.sqlite");
    const copy = join(dir, "copy.sqlite");
    copyFileSync(path, copy);
    const { page, pageSize } = eventsLeafPage(copy);
    flip(copy, (page - 1) * pageSize, 1);
    expect({ copy: refusal(copy).refused, original: refusal(path) }).toEqual({
      copy: true,
      original: { refused: false, message: "opened" },
    });
  });
});

describe("storeProblem", () => {
  test("names the file and says to free space when recovery's terminal event met a full disk", () => {
    const err = new RpcError("action_outcome_unknown", {
      arg: "c-1",
      details: { callId: "c-1", reason: "event store failed: database or disk is full" },
    });
    const problem = storeProblem("/data/devicerail.sqlite", err);
    expect({ refused: problem instanceof DatabaseLockedError, message: problem?.message }).toEqual({
      refused: true,
      message:
        "the disk holding /data/devicerail.sqlite is full (event store failed: database or disk is full); free space on it and start again, or choose another DEVICERAIL_DATA_DIR",
    });
  });

  test("names the folder when an Evidence write met a full disk", () => {
    const err = new RpcError("evidence_io_error", { details: { operation: "mkdir", errno: "ENOSPC" } });
    expect(storeProblem("/data/evidence", err)?.message).toBe(
      "the disk holding /data/evidence is full (evidence store I/O failed); free space on it and start again, or choose another DEVICERAIL_DATA_DIR",
    );
  });

  test("leaves other failures alone when they are not about space or damage", () => {
    expect(storeProblem("/data/devicerail.sqlite", new Error("EACCES: permission denied"))).toBeNull();
  });
});
