/**
 * Daemons joining a farm on a real PostgreSQL (a temporary cluster of Debian's postgresql):
 * registration with devices, hot-plug, a host killed with SIGKILL shown gone, a restarted host's
 * new epoch without duplicate rows, and a database that goes away and comes back while the
 * daemons keep serving their own clients.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { type FarmDeviceRow, type FarmHostRow } from "../../src/cli/farm-command.ts";
import { adbServerForFile, demoScenario, startFakeDevice } from "../support/adb-device/index.ts";
import { ADB_PATH } from "../support/adb-device/index.ts";
import { tempDataDir } from "../support/daemon.ts";
import { type PgCluster, describeWithPostgres, startPostgres } from "../support/postgres.ts";
import { pollUntil, until } from "../support/wait.ts";
import { cli, cliJson } from "../cli/run.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

const TOKEN = "farm-test-token-0123456789abcdef";
const HEARTBEAT_MS = 200;

const farmEnv = (pg: PgCluster, extra: Record<string, string> = {}) => ({
  DEVICERAIL_FARM_URL: pg.url,
  DEVICERAIL_TOKEN: TOKEN,
  DEVICERAIL_FARM_HEARTBEAT_MS: String(HEARTBEAT_MS),
  ...extra,
});

const hosts = async (pg: PgCluster) =>
  (await cliJson<{ hosts: FarmHostRow[] }>(["farm", "hosts"], { DEVICERAIL_FARM_URL: pg.url })).hosts;
const devices = async (pg: PgCluster) =>
  (await cliJson<{ devices: FarmDeviceRow[] }>(["farm", "devices"], { DEVICERAIL_FARM_URL: pg.url })).devices;
const hostOn = (all: FarmHostRow[], port: number) => all.find((h) => h.endpoint === `127.0.0.1:${port}`);
const brief = (ds: FarmDeviceRow[]): string[][] =>
  ds
    .map((d) => [d.endpoint.split(":")[1] ?? "", d.deviceId, d.platform, d.state])
    .sort((a, b) => String(a).localeCompare(String(b)));

describeWithPostgres("a farm on PostgreSQL", () => {
  test("hosts register with their devices, and a host killed with SIGKILL is gone with its devices after three missed heartbeats", async () => {
    await using pg = await startPostgres();
    await using a = await ServeDaemon.start(["--listen", "127.0.0.1:0"], farmEnv(pg, { DEVICERAIL_MOCK_DEVICES: "2" }));
    await using b = await ServeDaemon.start(["--listen", "127.0.0.1:0"], farmEnv(pg));
    // A host's row and its devices' rows are written one after the other: wait for both.
    const up = await pollUntil(
      "both hosts up with their devices",
      () => hosts(pg),
      (all) => hostOn(all, a.port)?.devices === 2 && hostOn(all, b.port)?.devices === 1,
      10_000,
    );
    expect(hostOn(up, a.port)).toEqual(
      expect.objectContaining({ state: "up", epoch: 1, devices: 2, version: expect.any(String) }),
    );
    expect(hostOn(up, b.port)).toEqual(expect.objectContaining({ state: "up", epoch: 1, devices: 1 }));
    expect(brief(await devices(pg))).toEqual(
      [
        [String(b.port), "mock-1", "mock", "available"],
        [String(a.port), "mock-1", "mock", "available"],
        [String(a.port), "mock-2", "mock", "available"],
      ].sort((x, y) => String(x).localeCompare(String(y))),
    );

    const t0 = performance.now();
    b.proc.kill("SIGKILL");
    await pollUntil(
      "the killed host gone",
      () => hosts(pg),
      (all) => hostOn(all, b.port)?.state === "gone",
      10_000,
    );
    const goneMs = performance.now() - t0;
    console.log(
      `farm: SIGKILLed host shown gone after ${goneMs.toFixed(0)} ms (heartbeat ${HEARTBEAT_MS} ms, gone after 3 missed)`,
    );
    // The last heartbeat came at most one interval before the kill; three missed ones make it gone.
    expect(goneMs).toBeGreaterThan(HEARTBEAT_MS);
    expect(goneMs).toBeLessThan(3 * HEARTBEAT_MS + 2_000);
    const after = await devices(pg);
    expect(after.filter((d) => d.endpoint.endsWith(`:${b.port}`)).map((d) => d.state)).toEqual(["gone"]);
    expect(hostOn(await hosts(pg), a.port)?.state).toBe("up");
  }, 60_000);

  test("a restarted host keeps its id with a new epoch and no second row; a clean stop leaves it as left", async () => {
    await using pg = await startPostgres();
    const dataDir = tempDataDir();
    // Stopped with SIGTERM, not disposed: disposing would remove the data directory that holds the host's id.
    const d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], farmEnv(pg, { DEVICERAIL_DATA_DIR: dataDir }));
    const first = hostOn(
      await pollUntil(
        "registered",
        () => hosts(pg),
        (all) => hostOn(all, d.port)?.state === "up",
        10_000,
      ),
      d.port,
    );
    expect(await d.stop()).toBe(0);
    const left = await hosts(pg);
    expect(left.map((h) => [h.id, h.state, h.devices])).toEqual([[first?.id as string, "left", 0]]);
    await using again = await ServeDaemon.start(
      ["--listen", "127.0.0.1:0"],
      farmEnv(pg, { DEVICERAIL_DATA_DIR: dataDir }),
    );
    const back = await pollUntil(
      "registered again with its device",
      () => hosts(pg),
      (all) => hostOn(all, again.port)?.state === "up" && hostOn(all, again.port)?.devices === 1,
      10_000,
    );
    expect(back.map((h) => [h.id, h.state, h.epoch, h.devices])).toEqual([[first?.id as string, "up", 2, 1]]);
    await using db = new SQL({ url: pg.url, max: 1 });
    expect(await db`SELECT count(*)::int AS n FROM devices`).toEqual([{ n: 1 }]);
  }, 60_000);

  test("while the database is away the daemon serves its clients, and it re-registers with the same epoch when it returns", async () => {
    await using pg = await startPostgres();
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], farmEnv(pg));
    const before = hostOn(
      await pollUntil(
        "registered",
        () => hosts(pg),
        (all) => hostOn(all, d.port)?.state === "up",
        10_000,
      ),
      d.port,
    ) as FarmHostRow;
    await pg.kill();
    // The farm is unreachable, its CLI says so, and the host's own clients are served as ever.
    const down = await cli(["farm", "hosts"], { DEVICERAIL_FARM_URL: pg.url });
    expect([down.code, down.stderr]).toEqual([
      1,
      expect.stringMatching(/^devicerail: the farm database at 127\.0\.0\.1:\d+\/\S+ is unreachable: /),
    ]);
    const c = await RpcSocket.connect({ port: d.port }, { tokenLine: TOKEN });
    await c.hello();
    expect((await c.call("devices.list")).result.devices.map((x: { id: string }) => x.id)).toEqual(["mock-1"]);
    c.close();
    // stderr is state, not a request: until() gives the reader a turn between looks.
    await until("the outage logged", () => d.stderr.includes("farm database unreachable"), 10_000);
    const lastSeenDown = before.lastSeenMs;
    await pg.restart();
    const back = await pollUntil(
      "heartbeating again",
      () => hosts(pg),
      (all) => (hostOn(all, d.port)?.lastSeenMs ?? 0) > lastSeenDown && hostOn(all, d.port)?.state === "up",
      15_000,
    );
    expect(back.map((h) => [h.id, h.epoch, h.devices])).toEqual([[before.id, before.epoch, 1]]);
    expect(d.stderr.match(/farm database unreachable/g)?.length).toBe(1);
    // The database password never reaches the log: the URL is logged as host, port and database only.
    expect(d.stderr).not.toContain(pg.url);
  }, 60_000);

  test("farm mode refuses to start without a token or a TCP listener, and the CLI says what to set", async () => {
    await using pg = await startPostgres();
    const noToken = await cli(["serve", "--listen", "127.0.0.1:0"], { DEVICERAIL_FARM_URL: pg.url });
    expect([noToken.code, noToken.stderr.trim()]).toEqual([
      2,
      "devicerail: DEVICERAIL_FARM_URL needs DEVICERAIL_TOKEN: a farm host must authenticate its clients",
    ]);
    const noCli = await cli(["farm", "hosts"]);
    expect([noCli.code, noCli.stderr.trim()]).toEqual([
      2,
      "devicerail: set DEVICERAIL_FARM_URL to the farm's postgres:// URL",
    ]);
    const bad = await cli(["farm", "devices"], { DEVICERAIL_FARM_URL: "mysql://u:secretpw@h/db" });
    expect([bad.code, bad.stderr.includes("secretpw"), bad.stderr.trim()]).toEqual([
      2,
      false,
      "devicerail: invalid DEVICERAIL_FARM_URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
    ]);
  }, 60_000);
});

describe("a farm host with an Android phone", () => {
  const adb = adbServerForFile();
  describeWithPostgres("hot-plug", () => {
    test("a phone plugged into a farm host shows in the farm within a heartbeat, and leaves when unplugged", async () => {
      await using pg = await startPostgres();
      await using d = await ServeDaemon.start(
        ["--listen", "127.0.0.1:0"],
        farmEnv(pg, {
          DEVICERAIL_ANDROID: "auto",
          DEVICERAIL_ADB_PATH: ADB_PATH,
          ANDROID_ADB_SERVER_PORT: String(adb.server().port),
        }),
      );
      await pollUntil(
        "registered",
        () => hosts(pg),
        (all) => hostOn(all, d.port)?.state === "up",
        10_000,
      );
      const phone = await startFakeDevice(adb.server(), {
        scenario: demoScenario,
        props: { "ro.product.model": "Pixel_Farm" },
      });
      const id = `android-adb:${phone.serial}`;
      // adb reports a phone "offline" for a moment while it connects; the farm shows that too, then the phone as it settles.
      const seen = await pollUntil(
        "the phone in the farm",
        () => devices(pg),
        (ds) => ds.some((x) => x.deviceId === id && x.name === "Pixel Farm"),
        10_000,
      );
      expect(seen.find((x) => x.deviceId === id)).toEqual(
        expect.objectContaining({ platform: "android", name: "Pixel Farm", state: "available" }),
      );
      await phone[Symbol.asyncDispose]();
      await pollUntil(
        "the phone absent",
        () => devices(pg),
        (ds) => ds.find((x) => x.deviceId === id)?.state === "absent",
        15_000,
      );
    }, 60_000);
  });
});
