/**
 * The allocation queue against a real PostgreSQL (a temporary cluster): hosts and devices are
 * written as rows, as their daemons would, and clients acquire through the same functions the CLI
 * and the daemons use.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { ALIVE_MS, FarmAcquireError, acquire, dispatch, release } from "../../src/farm/allocator.ts";
import { farmKey, verifyCredential } from "../../src/farm/credential.ts";
import { migrateFarm } from "../../src/farm/migrate.ts";
import { type PgCluster, describeWithPostgres, startPostgres } from "../support/postgres.ts";

const LEASE = 30_000;

async function farmWith(
  pg: PgCluster,
  devices: { host: string; id: string; platform?: string; os?: string; name?: string; capabilities?: string[] }[],
) {
  const sql = new SQL({ url: pg.url, max: 8 });
  await migrateFarm(sql);
  for (const host of new Set(devices.map((d) => d.host)))
    await sql`INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state)
      VALUES (${host}, ${`name-${host}`}, '0', ${`127.0.0.1:${1000 + devices.findIndex((d) => d.host === host)}`}, 1, 60000, now(), now(), 'up')`;
  for (const d of devices)
    await sql`INSERT INTO devices (host_id, device_id, name, platform, os_version, os_major, connected, present, capabilities, updated_at)
      VALUES (${d.host}, ${d.id}, ${d.name ?? d.id}, ${d.platform ?? "android"}, ${d.os ?? "14"}, ${Number.parseInt(d.os ?? "14", 10)}, false, true, ${d.capabilities ?? []}::jsonb, now())`;
  return sql;
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof FarmAcquireError) return { reason: e.reason, message: e.message };
    throw e;
  }
  throw new Error("expected the acquire to fail");
};

describeWithPostgres("farm allocation queue", () => {
  test("constraints pick the device; the credential is signed for its host and device", async () => {
    await using pg = await startPostgres();
    await using sql = await farmWith(pg, [
      { host: "h1", id: "p13", os: "13", name: "Pixel 6" },
      { host: "h1", id: "p14", os: "14.1", name: "Pixel 8", capabilities: ["swipe", "tap"] },
      { host: "h2", id: "ios", platform: "ios", os: "17", name: "iPhone 15" },
    ]);
    const a = await acquire(sql, { platform: "android", os: ">=14", priority: 0, waitMs: 0 }, { leaseMs: LEASE });
    expect([a.hostId, a.deviceId, a.host, a.device]).toEqual([
      "h1",
      "p14",
      "name-h1",
      { name: "Pixel 8", platform: "android", osVersion: "14.1" },
    ]);
    expect(verifyCredential(await farmKey(sql), a.credential)).toEqual({ a: a.allocationId, h: "h1", d: "p14" });
    expect((await acquire(sql, { model: "iphone*", priority: 0, waitMs: 0 }, { leaseMs: LEASE })).deviceId).toBe("ios");
    expect(await failure(acquire(sql, { capability: "swipe", priority: 0, waitMs: 0 }, { leaseMs: LEASE }))).toEqual({
      reason: "timedOut",
      message: "no matching device became free within 0 ms",
    });
    expect(
      await failure(acquire(sql, { platform: "android", os: "<13", priority: 0, waitMs: 5_000 }, { leaseMs: LEASE })),
    ).toEqual({
      reason: "noMatchingDevice",
      message: "no device in the farm matches the constraints",
    });
    // Released, the device is free for the next request.
    expect(await release(sql, a.allocationId, "released")).toBe(true);
    expect(await release(sql, a.allocationId, "released")).toBe(false);
    expect((await acquire(sql, { capability: "swipe", priority: 0, waitMs: 0 }, { leaseMs: LEASE })).deviceId).toBe(
      "p14",
    );
  }, 60_000);

  test("100 clients racing for 10 devices: each device goes to one client at a time, and waiters are served as devices come back", async () => {
    await using pg = await startPostgres();
    await using sql = await farmWith(
      pg,
      Array.from({ length: 10 }, (_, i) => ({ host: `h${i % 3}`, id: `d${i}` })),
    );
    const holding = new Set<string>();
    let overlaps = 0;
    const served: string[] = [];
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const a = await acquire(sql, { holder: `c${i}`, priority: 0, waitMs: 60_000 }, { leaseMs: LEASE });
        const key = `${a.hostId}/${a.deviceId}`;
        if (holding.has(key)) overlaps++;
        holding.add(key);
        await Bun.sleep(5);
        holding.delete(key);
        served.push(key);
        await release(sql, a.allocationId, "released");
      }),
    );
    expect([served.length, overlaps]).toEqual([100, 0]);
    const [open] = (await sql`SELECT count(*)::int AS n FROM allocations WHERE released_at IS NULL`) as { n: number }[];
    expect(open?.n).toBe(0);
  }, 120_000);

  test("waiters are served first in, first out within a priority, and a higher priority goes first", async () => {
    await using pg = await startPostgres();
    await using sql = await farmWith(pg, [{ host: "h1", id: "only" }]);
    const first = await acquire(sql, { priority: 0, waitMs: 0 }, { leaseMs: LEASE });
    const order: string[] = [];
    const waiters: Promise<void>[] = [];
    const queued = async (holder: string, priority: number) => {
      const ready = Promise.withResolvers<void>();
      waiters.push(
        acquire(sql, { holder, priority, waitMs: 30_000 }, { leaseMs: LEASE, queued: () => ready.resolve() }).then(
          async (a) => {
            order.push(holder);
            await release(sql, a.allocationId, "released");
          },
        ),
      );
      await ready.promise;
    };
    await queued("low-1", 0);
    await queued("low-2", 0);
    await queued("high", 5);
    await queued("low-3", 0);
    await release(sql, first.allocationId, "released");
    await Promise.all(waiters);
    expect(order).toEqual(["high", "low-1", "low-2", "low-3"]);
  }, 60_000);

  test("a newcomer takes a free device no waiter could use, and queues behind a waiter for one it could", async () => {
    await using pg = await startPostgres();
    await using sql = await farmWith(pg, [
      { host: "h1", id: "pixel" },
      { host: "h1", id: "iphone", platform: "ios", os: "17" },
    ]);
    const held = await acquire(sql, { platform: "android", priority: 0, waitMs: 0 }, { leaseMs: LEASE });
    const order: string[] = [];
    const ready = Promise.withResolvers<void>();
    const waiter = acquire(
      sql,
      { platform: "android", holder: "waiter", priority: 0, waitMs: 30_000 },
      { leaseMs: LEASE, queued: () => ready.resolve() },
    ).then((a) => order.push(`waiter:${a.deviceId}`));
    await ready.promise;
    // Any device will do for this one: the iPhone, which the waiter cannot use, is taken at once.
    expect((await acquire(sql, { holder: "any", priority: 0, waitMs: 0 }, { leaseMs: LEASE })).deviceId).toBe("iphone");
    const queued = Promise.withResolvers<void>();
    const late = acquire(
      sql,
      { platform: "android", holder: "late", priority: 0, waitMs: 30_000 },
      { leaseMs: LEASE, queued: () => queued.resolve() },
    ).then(async (a) => {
      order.push(`late:${a.deviceId}`);
    });
    await queued.promise;
    await release(sql, held.allocationId, "released");
    await waiter;
    expect(order).toEqual(["waiter:pixel"]);
    const [w] = (await sql`SELECT allocation_id FROM requests WHERE holder = 'waiter'`) as { allocation_id: string }[];
    await release(sql, w?.allocation_id as string, "released");
    await late;
    expect(order).toEqual(["waiter:pixel", "late:pixel"]);
  }, 60_000);

  test("a waiting client that stops drops its place; a cancelled one at once; an unclaimed allocation expires", async () => {
    await using pg = await startPostgres();
    await using sql = await farmWith(pg, [{ host: "h1", id: "only" }]);
    const held = await acquire(sql, { priority: 0, waitMs: 0 }, { leaseMs: 2 * ALIVE_MS });
    // A client that queues and then dies: its row stays 'waiting' until alive_until passes.
    await sql`INSERT INTO requests (id, priority, holder, constraints, created_at, deadline, alive_until, state)
      VALUES ('dead', 0, 'dead', '{}'::jsonb, now(), now() + interval '1 hour', now() + make_interval(secs => ${ALIVE_MS} / 1000.0), 'waiting')`;
    const controller = new AbortController();
    const ready = Promise.withResolvers<void>();
    const cancelled = failure(
      acquire(
        sql,
        { holder: "gone", priority: 0, waitMs: 60_000 },
        { leaseMs: LEASE, signal: controller.signal, queued: () => ready.resolve() },
      ),
    );
    await ready.promise;
    controller.abort();
    expect(await cancelled).toEqual({ reason: "cancelled", message: "the request was cancelled" });
    // The held allocation was never claimed: it expires after its lease, later than the dead client's place lapsed, so the live waiter gets the device.
    const next = await acquire(sql, { holder: "alive", priority: 0, waitMs: 20_000 }, { leaseMs: LEASE });
    expect(next.deviceId).toBe("only");
    const states = await sql`SELECT id, state FROM requests WHERE holder IN ('dead', 'gone') ORDER BY id`;
    expect(states.map((r: { state: string }) => r.state)).toEqual(["cancelled", "cancelled"]);
    const [lapsed] = (await sql`SELECT release_reason FROM allocations WHERE id = ${held.allocationId}`) as {
      release_reason: string;
    }[];
    expect(lapsed?.release_reason).toBe("expired");
    expect(await dispatch(sql, LEASE)).toBe(0);
  }, 60_000);
});
