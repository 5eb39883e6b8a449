import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ROOT, daemonCommand, daemonEnv, spawnDaemon, tempDataDir } from "../support/daemon.ts";

const FIX =
  "move it aside with its -wal and -shm files, if any (do not delete them: they hold the recorded Sessions), and start again with a new store, or choose another DEVICERAIL_DATA_DIR";

/** Starts the daemon on stdio with no input: one that starts stops at once with 0; a refused one exits 1 with its reason. */
async function startOutcome(dataDir: string): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn(daemonCommand(), {
    cwd: ROOT,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: daemonEnv({ DEVICERAIL_DATA_DIR: dataDir }),
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  return { code, stderr };
}

/** A data directory whose database holds one ended Session of 40 taps. */
async function withContent(): Promise<string> {
  const dataDir = tempDataDir();
  await using d = spawnDaemon({ env: { DEVICERAIL_DATA_DIR: dataDir } });
  await d.hello();
  await d.call("device.connect");
  await d.call("session.start");
  for (let n = 0; n < 40; n++)
    await d.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 640, y: 148 } });
  await d.call("session.end");
  expect(await d.close()).toBe(0);
  return dataDir;
}

const digest = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

describe("daemon start-up on a damaged database", () => {
  test("exits 1 naming the file and how to set it aside, and leaves it in place, when the database is truncated", async () => {
    const dataDir = await withContent();
    const db = join(dataDir, "devicerail.sqlite");
    truncateSync(db, Math.floor(statSync(db).size / 2));
    const before = digest(db);
    const { code, stderr } = await startOutcome(dataDir);
    expect({ code, stderr, kept: existsSync(db) && digest(db) === before }).toEqual({
      code: 1,
      stderr: `devicerail: ${db} is damaged (database disk image is malformed); ${FIX}\n`,
      kept: true,
    });
  });

  test("exits 1 with what PRAGMA quick_check found, naming the file and leaving it in place, when cells of a data page are bit-flipped", async () => {
    const dataDir = await withContent();
    const db = join(dataDir, "devicerail.sqlite");
    // One leaf page of the events table, located by SQLite's own page map; its cell pointers follow the 8-byte header.
    const probe = new Database(db, { readonly: true });
    const page = probe
      .query<{ pageno: number }, []>(
        "SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1",
      )
      .get()?.pageno;
    const pageSize = probe.query<{ page_size: number }, []>("PRAGMA page_size").get()?.page_size ?? 4096;
    probe.close();
    if (page === undefined) throw new Error("the events table has no leaf page");
    const fd = openSync(db, "r+");
    const bytes = Buffer.alloc(16);
    readSync(fd, bytes, 0, 16, (page - 1) * pageSize + 8);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (bytes[i] as number) ^ 0xff;
    writeSync(fd, bytes, 0, 16, (page - 1) * pageSize + 8);
    closeSync(fd);
    const before = digest(db);
    const { code, stderr } = await startOutcome(dataDir);
    const lines = stderr.split("\n");
    expect({
      code,
      lines: lines.length,
      head: lines[0]?.startsWith(`devicerail: ${db} is damaged (PRAGMA quick_check: `),
      namesPage: lines[0]?.includes(`page ${page}`),
      fix: lines[0]?.endsWith(`); ${FIX}`),
      kept: existsSync(db) && digest(db) === before,
    }).toEqual({ code: 1, lines: 2, head: true, namesPage: true, fix: true, kept: true });
  });

  test("starts as before when the database is healthy", async () => {
    const dataDir = await withContent();
    expect(await startOutcome(dataDir)).toEqual({ code: 0, stderr: "" });
  });
});
