import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDataDir } from "../../support/daemon.ts";

const DB = join(import.meta.dir, "../../../src/core/sessions/db.ts");

/**
 * A process that waits for the wall clock to reach `at` (so all of them open together), opens the
 * database, prints "ok" or "refused", and holds what it got for `holdMs`.
 */
function opener(path: string, at: number, holdMs: number) {
  const script = `
    const { openDatabase, DatabaseLockedError } = await import(${JSON.stringify(DB)});
    while (performance.timeOrigin + performance.now() < ${at}) {}
    try {
      openDatabase(${JSON.stringify(path)});
      console.log("ok");
      await Bun.sleep(${holdMs});
    } catch (e) {
      console.log(e instanceof DatabaseLockedError ? "refused" : "error " + e.message);
    }`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  return new Response(proc.stdout).text().then((t) => t.trim());
}

describe("the database's exclusive lock", () => {
  test("two processes opening a new database at the same instant: exactly one gets it, every round", async () => {
    // Without the retry in openDatabase, both were refused in every round of this test.
    for (let round = 0; round < 8; round++) {
      const path = join(tempDataDir(), "devicerail.sqlite");
      const at = Date.now() + 300;
      const results = await Promise.all([0, 1].map(() => opener(path, at, 800)));
      expect([round, results.toSorted()]).toEqual([round, ["ok", "refused"]]);
    }
  }, 60_000);

  test("a lock held for longer than the wait is refused; one released within it is taken", async () => {
    const path = join(tempDataDir(), "devicerail.sqlite");
    const at = Date.now() + 300;
    // The holder keeps it 2 s, past the 500 ms the second waits.
    expect((await Promise.all([opener(path, at, 2_000), opener(path, at + 50, 0)])).toSorted()).toEqual([
      "ok",
      "refused",
    ]);
    const later = Date.now() + 300;
    // The holder exits 100 ms after opening: the second, still within its wait, gets it.
    expect(await Promise.all([opener(path, later, 100), opener(path, later + 30, 0)])).toEqual(["ok", "ok"]);
  }, 30_000);
});
