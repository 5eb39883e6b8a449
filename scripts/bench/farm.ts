/**
 * The farm under load, against a real PostgreSQL (a temporary cluster of Debian's postgresql with
 * pg_stat_statements): HOSTS simulated hosts × DEVICES devices register and heartbeat through the
 * daemon's own FarmMember (every 5 s, as shipped), while CLIENTS clients acquire a device (any
 * Android 14 or later) and release it, in a loop, for SECONDS seconds, through the same code the
 * CLI and the daemons' POST /farm/acquire use. Baseline in the same run: the p99 of a one-row
 * SELECT from the same client pool under the same load; the ratio is acquire p99 / that.
 *
 *   bun scripts/bench/farm.ts [--hosts 50] [--devices 20] [--clients 200] [--seconds 30]
 *
 * Last line exactly: `farm: 1000 devices, 200 clients, acquire p99 X ms, db load Y queries/s`
 * (Y: statements the server executed per second, from pg_stat_statements, BEGIN/COMMIT included).
 */
import { SQL } from "bun";
import { parseArgs } from "node:util";
import { acquire, release } from "../../src/farm/allocator.ts";
import { type FarmDevice, FarmMember } from "../../src/farm/member.ts";
import { migrateFarm } from "../../src/farm/migrate.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";
import { startPostgres } from "../../test/support/postgres.ts";

const { values } = parseArgs({
  options: {
    hosts: { type: "string" },
    devices: { type: "string" },
    clients: { type: "string" },
    seconds: { type: "string" },
  },
});
const HOSTS = Number(values.hosts ?? 50);
const DEVICES = Number(values.devices ?? 20);
const CLIENTS = Number(values.clients ?? 200);
const SECONDS = Number(values.seconds ?? 30);
const HEARTBEAT_MS = 5_000;
const LEASE_MS = 30_000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

await using pg = await startPostgres({
  settings: {
    shared_preload_libraries: "pg_stat_statements",
    max_connections: String(HOSTS * 2 + 120),
    "pg_stat_statements.track_utility": "on",
  },
});
const admin = new SQL({ url: pg.url, max: 1 });
await migrateFarm(admin);
await admin`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;

// Hosts: the daemon's membership code, each with its own connection, its devices Android 12 … 15.
const members = Array.from({ length: HOSTS }, (_, h) => {
  const devices: FarmDevice[] = Array.from({ length: DEVICES }, (_, d) => ({
    id: `android-adb:h${h}-d${d}`,
    name: `Pixel ${6 + (d % 4)}`,
    platform: "android",
    osVersion: String(12 + (d % 4)),
    connected: true,
    leasedLocally: false,
    capabilities: ["tap", "swipe", "inputText"],
    battery: 80,
  }));
  return new FarmMember({
    url: pg.url,
    hostId: crypto.randomUUID(),
    hostName: `host-${h}`,
    version: "bench",
    endpoint: `10.0.${Math.floor(h / 250)}.${h % 250}:7700`,
    heartbeatMs: HEARTBEAT_MS,
    log: silentLogger,
    devices: async () => devices,
  });
});
await Promise.all(members.map((m) => m.start()));
const [registered] = (await admin`SELECT count(*)::int AS n FROM devices WHERE present`) as { n: number }[];
if (registered?.n !== HOSTS * DEVICES)
  throw new Error(`expected ${HOSTS * DEVICES} devices registered, found ${registered?.n}`);
// As autovacuum would have by the time a real farm is busy: without statistics the planner takes the
// fresh device table for a tiny one.
await admin`ANALYZE`;

// Clients: one pool, as many CI jobs' connections would be, but bounded so the server's limit holds.
const clients = new SQL({ url: pg.url, max: Math.min(CLIENTS, 100), prepare: false });
await clients`SELECT 1`;
await admin`SELECT pg_stat_statements_reset()`;
const started = performance.now();
const deadline = started + SECONDS * 1_000;
const acquireMs: number[] = [];
const baselineMs: number[] = [];
let failures = 0;
const clientLoop = async (i: number) => {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    try {
      const a = await acquire(
        clients,
        { platform: "android", os: ">=14", holder: `job-${i}`, priority: 0, waitMs: 10_000 },
        { leaseMs: LEASE_MS },
      );
      acquireMs.push(performance.now() - t0);
      await release(clients, a.allocationId, "released");
    } catch {
      failures++;
    }
  }
};
const baselineLoop = async () => {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    await clients`SELECT now()`;
    baselineMs.push(performance.now() - t0);
    await Bun.sleep(20);
  }
};
await Promise.all([...Array.from({ length: CLIENTS }, (_, i) => clientLoop(i)), baselineLoop()]);
const elapsedS = (performance.now() - started) / 1_000;
const [stats] = (await admin`SELECT coalesce(sum(calls), 0)::bigint AS calls FROM pg_stat_statements`) as {
  calls: string;
}[];
const queriesPerS = Number(stats?.calls ?? 0) / elapsedS;
const [open] = (await admin`SELECT count(*)::int AS n FROM allocations WHERE released_at IS NULL`) as { n: number }[];
const top = (await admin`
  SELECT calls::int AS calls, round(total_exec_time)::int AS ms, regexp_replace(left(query, 70), '[[:space:]]+', ' ', 'g') AS query
  FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 6`) as { calls: number; ms: number; query: string }[];
await Promise.all(members.map((m) => m.stop()));
await clients.close();
await admin.close();

const p99 = pct(acquireMs, 99);
const base99 = pct(baselineMs, 99);
for (const t of top) console.log(`  ${String(t.calls).padStart(7)} calls ${String(t.ms).padStart(6)} ms  ${t.query}`);
console.log(
  `hosts ${HOSTS} × devices ${DEVICES}, heartbeat ${HEARTBEAT_MS / 1000} s; ${CLIENTS} clients for ${elapsedS.toFixed(1)} s`,
);
console.log(
  `acquires ${acquireMs.length} (${(acquireMs.length / elapsedS).toFixed(0)}/s), failed ${failures}, left open ${open?.n}; p50 ${pct(acquireMs, 50).toFixed(1)} ms, p95 ${pct(acquireMs, 95).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
);
console.log(
  `baseline SELECT p99 ${base99.toFixed(1)} ms under the same load; ratio acquire/baseline ${(p99 / base99).toFixed(2)}; ${(queriesPerS / Math.max(1, acquireMs.length / elapsedS)).toFixed(1)} queries per acquire+release`,
);
console.log(
  `farm: ${HOSTS * DEVICES} devices, ${CLIENTS} clients, acquire p99 ${p99.toFixed(1)} ms, db load ${queriesPerS.toFixed(0)} queries/s`,
);
