/**
 * FarmCatalogue's writes against a real PostgreSQL: what happens between a heartbeat's reading of
 * the pending failures and the end of its transaction must not be lost.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { FarmCatalogue } from "../../src/farm/catalogue.ts";
import { migrateFarm } from "../../src/farm/migrate.ts";
import { describeWithPostgres, startPostgres } from "../support/postgres.ts";

const HOST = "host-1";
const DEVICE = "mock-1";

/**
 * `sql` whose transactions call `afterFailuresWritten` once the `INSERT INTO failures` of a
 * flush has answered, while that transaction is still open.
 */
function withHook(sql: SQL, afterFailuresWritten: () => void): SQL {
  return {
    begin: (fn: (tx: SQL) => Promise<unknown>) =>
      sql.begin((tx) => {
        const hooked = ((strings: TemplateStringsArray, ...values: unknown[]) => {
          const q = tx(strings, ...values);
          if (strings.join("").includes("INSERT INTO failures"))
            return q.then((r: unknown) => (afterFailuresWritten(), r));
          return q;
        }) as unknown as SQL;
        Object.assign(hooked, { array: tx.array.bind(tx) });
        return fn(hooked);
      }),
  } as unknown as SQL;
}

/** The farm's tables with one host and its one device, as a host's first heartbeat leaves them. */
async function farmWithOneDevice(sql: SQL): Promise<void> {
  await migrateFarm(sql);
  await sql`INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state) VALUES (${HOST}, 'h', '0', '127.0.0.1:1', 1, 200, now(), now(), 'up')`;
  await sql`INSERT INTO devices (host_id, device_id, name, platform, connected, present, capabilities, updated_at) VALUES (${HOST}, ${DEVICE}, 'Mock', 'mock', true, true, '[]', now())`;
}

describeWithPostgres("farm catalogue", () => {
  test("a failure seen while a flush is writing is written by the next flush and counts towards quarantine", async () => {
    await using pg = await startPostgres();
    await using sql = new SQL({ url: pg.url, max: 1 });
    await farmWithOneDevice(sql);
    const catalogue = new FarmCatalogue(HOST, { failures: 2, windowMs: 60_000 }, () => DEVICE);

    catalogue.failure(DEVICE, "device did not answer in time", "first");
    let fired = false;
    const first = await catalogue.flush(
      withHook(sql, () => {
        if (fired) return;
        fired = true;
        catalogue.failure(DEVICE, "device did not answer in time", "second");
      }),
    );
    expect([fired, first]).toEqual([true, []]);
    expect(await catalogue.flush(sql)).toEqual([DEVICE]);
    const rows = await sql`SELECT detail FROM failures ORDER BY id`;
    expect(rows.map((r: { detail: string }) => r.detail)).toEqual(["first", "second"]);
    const [device] = await sql`SELECT quarantined_reason FROM devices WHERE device_id = ${DEVICE}`;
    expect(device.quarantined_reason).toBe(
      "2 infrastructure failures within 1 min (last: device did not answer in time)",
    );
  }, 60_000);

  test("failures of a flush whose transaction fails are kept, in order, for the next one", async () => {
    await using pg = await startPostgres();
    await using sql = new SQL({ url: pg.url, max: 1 });
    await farmWithOneDevice(sql);
    const catalogue = new FarmCatalogue(HOST, { failures: 0, windowMs: 60_000 }, () => DEVICE);
    catalogue.failure(DEVICE, "android_device_offline", "a");
    const failing = withHook(sql, () => {
      catalogue.failure(DEVICE, "android_device_offline", "b");
      throw new Error("connection lost");
    });
    await expect(catalogue.flush(failing)).rejects.toThrow("connection lost");
    expect(await sql`SELECT count(*)::int AS n FROM failures`).toEqual([{ n: 0 }]);
    await catalogue.flush(sql);
    const rows = await sql`SELECT detail FROM failures ORDER BY id`;
    expect(rows.map((r: { detail: string }) => r.detail)).toEqual(["a", "b"]);
  }, 60_000);
});
