/**
 * A farm's faults on a real PostgreSQL: a host killed with SIGKILL, a queued client killed, the
 * database going away and coming back, and hosts whose clocks are hours apart.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import type { Allocation } from "../../src/farm/allocator.ts";
import { daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { type PgCluster, describeWithPostgres, startPostgres } from "../support/postgres.ts";
import { pollUntil } from "../support/wait.ts";
import { cli } from "../cli/run.ts";
import {
  HEARTBEAT_MS,
  LEASE_MS,
  TOKEN,
  acquireCli,
  available,
  claimSession as claim,
  farmDevices as devices,
  farmEnv,
  farmHosts as hosts,
  startHost,
  tap,
} from "./farm-hosts.ts";
import { RpcSocket } from "./serve-daemon.ts";

/** `devicerail farm acquire` as a separate process that waits in the queue. */
function queuedAcquire(pg: PgCluster, holder: string) {
  const proc = Bun.spawn(
    daemonCommand(["farm", "acquire", "--platform", "mock", "--wait", "60s", "--holder", holder, "--json"]),
    {
      env: daemonEnv({ DEVICERAIL_DATA_DIR: tempDataDir(), ...farmEnv(pg) }),
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { proc, output };
}
const requestState = (db: SQL, holder: string) =>
  db`SELECT state FROM requests WHERE holder = ${holder}`.then((r: { state: string }[]) => r[0]?.state);

describeWithPostgres("farm faults", () => {
  test("a host killed with SIGKILL: its allocations lapse and its devices go, a killed queued client loses its place, and the live waiter is served on another host", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "a");
    const c = await startHost(pg, "c");
    await available(pg, 2);
    const onA = await acquireCli(pg, ["--model", "a-*", "--holder", "h1"]);
    const onC = await acquireCli(pg, ["--model", "c-*", "--holder", "h2"]);
    const h1 = await claim(onA);
    await claim(onC);
    await using db = new SQL({ url: pg.url, max: 1 });

    const dead = queuedAcquire(pg, "dead-waiter");
    await pollUntil(
      "the dead waiter queued",
      () => requestState(db, "dead-waiter"),
      (s) => s === "waiting",
      10_000,
    );
    dead.proc.kill("SIGKILL");
    const live = queuedAcquire(pg, "live-waiter");
    await pollUntil(
      "the live waiter queued",
      () => requestState(db, "live-waiter"),
      (s) => s === "waiting",
      10_000,
    );

    const t0 = performance.now();
    c.proc.kill("SIGKILL");
    await pollUntil(
      "C's allocation lapsed",
      () => db`SELECT release_reason FROM allocations WHERE id = ${onC.allocationId}`,
      (r) => r[0]?.release_reason === "host gone",
      10_000,
    );
    const lapseMs = performance.now() - t0;
    const gone = await pollUntil(
      "C's device gone",
      () => devices(pg),
      (ds) => ds.find((d) => d.deviceId === "c-mock-1")?.state === "gone",
      5_000,
    );
    expect(gone.find((d) => d.deviceId === "c-mock-1")).toEqual(
      expect.objectContaining({ state: "gone", holder: null }),
    );
    // The killed client's place lapses (it stopped renewing it) before the device it waited for is free.
    await pollUntil(
      "the dead waiter dropped",
      () => requestState(db, "dead-waiter"),
      (s) => s === "cancelled",
      10_000,
    );
    const t1 = performance.now();
    h1.close();
    const [stdout, stderr, code] = await live.output;
    const servedMs = performance.now() - t1;
    expect([code, stderr]).toEqual([0, ""]);
    const served = (JSON.parse(stdout) as { allocation: Allocation }).allocation;
    expect([served.deviceId, served.endpoint]).toEqual(["a-mock-1", `127.0.0.1:${a.port}`]);
    console.log(
      `farm: SIGKILLed host's allocation lapsed after ${lapseMs.toFixed(0)} ms (heartbeat ${HEARTBEAT_MS} ms); the waiter was served ${servedMs.toFixed(0)} ms after the holder left`,
    );
    expect(lapseMs).toBeLessThan(3 * HEARTBEAT_MS + 2_000);
    await c[Symbol.asyncDispose]();
  }, 90_000);

  test("a host killed and started again at once frees what its earlier run held", async () => {
    await using pg = await startPostgres();
    const dataDir = tempDataDir();
    const first = await startHost(pg, "r", { DEVICERAIL_DATA_DIR: dataDir });
    await available(pg, 1);
    const held = await acquireCli(pg, ["--platform", "mock"]);
    await claim(held);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    // Back before it missed three heartbeats: never shown gone, so only the new run can tell.
    await using again = await startHost(pg, "r", { DEVICERAIL_DATA_DIR: dataDir });
    await using db = new SQL({ url: pg.url, max: 1 });
    await pollUntil(
      "the old run's allocation released",
      () => db`SELECT release_reason FROM allocations WHERE id = ${held.allocationId}`,
      (r) => r[0]?.release_reason === "host restarted",
      10_000,
    );
    expect((await acquireCli(pg, ["--platform", "mock"])).endpoint).toBe(`127.0.0.1:${again.port}`);
  }, 60_000);

  test("the database away: farm calls fail with a typed error, a granted client keeps its device for one lease and then gets a typed error, and everything comes back without duplicates", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "a");
    await available(pg, 1);
    const held = await acquireCli(pg, ["--platform", "mock"]);
    const client = await claim(held);
    expect((await tap(client)).result?.after?.deviceId).toBe("a-mock-1");

    await pg.kill();
    const t0 = performance.now();
    const http = await fetch(`http://127.0.0.1:${a.port}/farm/acquire`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` },
      body: "{}",
    });
    expect([http.status, ((await http.json()) as { error: { data: unknown } }).error.data]).toEqual([
      503,
      {
        code: "farm_unavailable",
        message: expect.stringMatching(/^the farm database at 127\.0\.0\.1:\d+\/\S+ is unreachable$/),
        retryable: true,
        details: {},
      },
    ]);
    const viaCli = await cli(["farm", "acquire"], farmEnv(pg));
    expect([viaCli.code, viaCli.stderr]).toEqual([
      1,
      expect.stringMatching(/^devicerail: the farm database at 127\.0\.0\.1:\d+\/\S+ is unreachable: /),
    ]);
    // Within its lease the holder keeps working; past it the host cannot know it still holds the device.
    expect((await tap(client)).result?.after?.deviceId).toBe("a-mock-1");
    const lapsed = await pollUntil(
      "the holder refused",
      () => tap(client),
      (r) => r.error !== undefined,
      LEASE_MS + 5_000,
    );
    const lapsedMs = performance.now() - t0;
    expect(lapsed.error?.data).toEqual(
      expect.objectContaining({
        code: "device_lease_expired",
        details: {
          reason: "farmAllocationLapsed",
          allocationId: held.allocationId,
          cause: "expired: the farm database could not renew it in time",
        },
      }),
    );
    console.log(
      `farm: with the database away a granted client kept its device ${lapsedMs.toFixed(0)} ms (lease ${LEASE_MS} ms)`,
    );
    expect(lapsedMs).toBeGreaterThan(LEASE_MS - 500);
    // The host's own clients are served throughout, and the device it freed is theirs to lease.
    const local = await RpcSocket.connect({ port: a.port }, { tokenLine: TOKEN });
    await local.hello();
    await local.call("device.connect");
    expect((await local.call("session.start")).result?.state).toBe("active");

    await pg.restart();
    const busy = await pollUntil(
      "the host back, its device busy locally",
      () => devices(pg),
      (ds) => ds[0]?.state === "busy",
      15_000,
    );
    expect(busy.map((d) => [d.deviceId, d.state])).toEqual([["a-mock-1", "busy"]]);
    expect((await cli(["farm", "acquire", "--platform", "mock"], farmEnv(pg))).code).toBe(1);
    await local.call("session.end");
    await available(pg, 1);
    expect((await acquireCli(pg, ["--platform", "mock"])).deviceId).toBe("a-mock-1");
    await using db = new SQL({ url: pg.url, max: 1 });
    expect(
      await db`SELECT (SELECT count(*) FROM hosts)::int AS hosts, (SELECT count(*) FROM devices)::int AS devices`,
    ).toEqual([{ hosts: 1, devices: 1 }]);
    const [old] = await db`SELECT release_reason FROM allocations WHERE id = ${held.allocationId}`;
    expect(old).toEqual({ release_reason: "expired" });
    client.close();
    local.close();
  }, 90_000);
});

/** libfaketime (Debian's libfaketime) shifts a process's clock; .ci/run installs it. */
const FAKETIME = ["x86_64", "aarch64"]
  .map((arch) => `/usr/lib/${arch}-linux-gnu/faketime/libfaketime.so.1`)
  .find((p) => existsSync(p));
/** Like describeWithPostgres for libfaketime: missing under CI=true is a failure, elsewhere a skip. */
function describeWithFaketime(name: string, body: () => void): void {
  if (FAKETIME) return describeWithPostgres(name, body);
  if (["true", "1"].includes((process.env.CI ?? "").toLowerCase()))
    return describe(name, () =>
      test("libfaketime is installed", () => {
        throw new Error(
          "no libfaketime: install Debian's libfaketime package (apt-get install -y libfaketime); this test must not be skipped in CI",
        );
      }),
    );
  describe.skip(name, body);
}

describeWithFaketime("farm hosts whose clocks disagree", () => {
  test("hosts two hours ahead and ninety minutes behind stay up, serve their allocations and renew them", async () => {
    await using pg = await startPostgres();
    await using ahead = await startHost(pg, "ahead", { LD_PRELOAD: FAKETIME as string, FAKETIME: "+2h" });
    await using behind = await startHost(pg, "behind", { LD_PRELOAD: FAKETIME as string, FAKETIME: "-90m" });
    await available(pg, 2);
    const clients = await Promise.all(
      ["ahead-*", "behind-*"].map(async (m) => claim(await acquireCli(pg, ["--model", m]))),
    );
    // Longer than a lease and than three heartbeats: renewals and liveness are judged by the database's clock.
    await Bun.sleep(LEASE_MS + 1_000);
    expect(await Promise.all(clients.map(async (c) => (await tap(c)).result?.after?.deviceId))).toEqual([
      "ahead-mock-1",
      "behind-mock-1",
    ]);
    expect((await hosts(pg)).map((h) => [h.endpoint, h.state]).sort()).toEqual(
      [`127.0.0.1:${ahead.port}`, `127.0.0.1:${behind.port}`].map((e) => [e, "up"]).sort(),
    );
    expect((await devices(pg)).map((d) => d.state)).toEqual(["allocated", "allocated"]);
    for (const c of clients) c.close();
  }, 90_000);
});
