/**
 * Allocation across farm hosts on a real PostgreSQL: daemons with their own data directories on
 * loopback ports, Mock devices with distinct ids on each and the simulated Android phone (real adb
 * server) on one. Clients acquire with the CLI and over HTTP, connect to the owning host with the
 * credential, and operators block, release and clear devices.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { FarmSessionRow } from "../../src/cli/farm-command.ts";
import type { Allocation } from "../../src/farm/allocator.ts";
import { ADB_PATH, adbServerForFile, demoScenario, startFakeDevice } from "../support/adb-device/index.ts";
import { type PgCluster, describeWithPostgres, startPostgres } from "../support/postgres.ts";
import { helloParams } from "../support/hello.ts";
import { pollUntil, until } from "../support/wait.ts";
import { cliJson } from "../cli/run.ts";
import {
  LEASE_MS,
  TOKEN,
  acquireCli,
  available,
  claim,
  deviceRow,
  farmCli,
  farmDevices,
  startHost,
  tap,
} from "./farm-hosts.ts";
import { RpcSocket } from "./serve-daemon.ts";

const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();
const postJson = (port: number, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
    signal,
  });

describeWithPostgres("farm allocation", () => {
  test("a client acquires by constraints, drives only its device through the owning host, keeps it while its Session lives, and the farm catalogues the Session", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "a", { DEVICERAIL_MOCK_DEVICES: "2" });
    await using b = await startHost(pg, "b");
    await using c = await startHost(pg, "c");
    await available(pg, 4);

    const got = await acquireCli(pg, ["--platform", "mock", "--model", "b-*", "--holder", "ci-job-7"]);
    expect(got).toEqual({
      allocationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      hostId: expect.any(String),
      host: expect.any(String),
      endpoint: `127.0.0.1:${b.port}`,
      deviceId: "b-mock-1",
      device: { name: "DeviceRail Mock Device", platform: "mock", osVersion: "0.1" },
      credential: expect.stringMatching(/^drf1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
      leaseMs: LEASE_MS,
      waitedMs: expect.any(Number),
    });
    expect(await deviceRow(pg, "b-mock-1")).toEqual(
      expect.objectContaining({ state: "allocated", holder: "ci-job-7", allocationId: got.allocationId, health: "ok" }),
    );

    // The credential opens the owning host only, and only as issued.
    for (const [port, token] of [
      [a.port, got.credential],
      [b.port, `${got.credential.slice(0, -2)}xx`],
    ] as const) {
      const wrong = await RpcSocket.connect({ port }, { tokenLine: token });
      await wrong.closed;
      expect(wrong.received).toBe("");
    }

    const client = await claim(got);
    // The same credential opens JSON-RPC over WebSocket on the owning host too, limited the same way;
    // closing one of its connections keeps the allocation for the others.
    const ws = new WebSocket(`ws://127.0.0.1:${b.port}/rpc`, {
      headers: { Authorization: `Bearer ${got.credential}` },
    } as unknown as string[]);
    const wsAnswers: unknown[] = [];
    ws.onmessage = (m) => wsAnswers.push(JSON.parse(String(m.data)));
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() }));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "devices.list" }));
    await until("two WebSocket answers", () => wsAnswers.length === 2, 5_000);
    expect((wsAnswers[1] as { result: { devices: { id: string }[] } }).result.devices.map((d) => d.id)).toEqual([
      "b-mock-1",
    ]);
    ws.close();
    const http = await fetch(`http://127.0.0.1:${b.port}/devices`, {
      headers: { Authorization: `Bearer ${got.credential}` },
    });
    expect(http.status).toBe(401);

    expect((await client.call("devices.list")).result).toEqual({
      devices: [
        {
          id: "b-mock-1",
          name: "DeviceRail Mock Device",
          platform: { kind: "mock" },
          osVersion: "0.1",
          connected: true,
        },
      ],
      selectedDeviceId: "b-mock-1",
    });
    expect((await client.call("device.select", { deviceId: "b-mock-2" })).error?.data.code).toBe("device_not_found");
    expect((await client.call("sessions.list")).error?.data).toEqual(
      expect.objectContaining({
        code: "permission_denied",
        details: { reason: "farmAllocationScope", method: "sessions.list", deviceId: "b-mock-1" },
      }),
    );
    const session = (await client.call("session.start")).result;
    expect((await tap(client)).result?.after?.deviceId).toBe("b-mock-1");
    // Past one lease: the owning host renewed it at its heartbeats.
    await Bun.sleep(LEASE_MS + 500);
    expect((await tap(client)).result?.after?.deviceId).toBe("b-mock-1");
    expect((await client.call("session.export", { sessionId: session.id })).result.session.id).toBe(session.id);
    await using db = new SQL({ url: pg.url, max: 1 });
    const [held] =
      await db`SELECT claimed_at IS NOT NULL AS claimed, expires_at > now() AS live, released_at FROM allocations WHERE id = ${got.allocationId}`;
    expect(held).toEqual({ claimed: true, live: true, released_at: null });

    // Its Session ends: the allocation is released, and the connection holds nothing any more.
    expect((await client.call("session.end")).result.state).toBe("ended");
    const after = await tap(client);
    expect(after.error?.data).toEqual(
      expect.objectContaining({
        code: "device_lease_expired",
        details: expect.objectContaining({ reason: "farmAllocationLapsed", allocationId: got.allocationId }),
      }),
    );
    client.close();
    // Released by the owning host as the Session's end is committed (not before session.end answers).
    const [released] = await pollUntil(
      "released",
      () => db`SELECT release_reason, session_id FROM allocations WHERE id = ${got.allocationId}`,
      (r) => r[0]?.release_reason !== null,
      5_000,
    );
    expect(released).toEqual({ release_reason: "session ended", session_id: session.id });

    const catalogue = await pollUntil(
      "the Session in the farm's catalogue",
      async () =>
        (await cliJson<{ sessions: FarmSessionRow[] }>(["farm", "sessions"], { DEVICERAIL_FARM_URL: pg.url })).sessions,
      (s) => s.some((x) => x.sessionId === session.id && x.outcome === "completed"),
      10_000,
    );
    const row = catalogue.find((x) => x.sessionId === session.id);
    expect(row).toEqual(
      expect.objectContaining({
        hostId: got.hostId,
        deviceId: "b-mock-1",
        holder: "ci-job-7",
        allocationId: got.allocationId,
        outcome: "completed",
        report: `http://127.0.0.1:${b.port}/sessions/${session.id}/report`,
      }),
    );
    const page = await fetch(row?.report as string, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const table = await farmCli(pg, ["sessions"]);
    expect(table.stdout).toMatch(
      new RegExp(
        `^${session.id}\\t\\S+\\tb-mock-1\\tci-job-7\\t\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\tcompleted\\thttp://127\\.0\\.0\\.1:${b.port}/sessions/${session.id}/report\\n$`,
      ),
    );
    void c;
  }, 90_000);

  test("over HTTP on any host: a waiting client is served when a holder's connection drops, and one that gives up leaves the queue at once", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "a");
    await using b = await startHost(pg, "b");
    await available(pg, 2);
    const first = (await json(postJson(a.port, "/farm/acquire", { platform: "mock", holder: "h1" })))
      .allocation as Allocation;
    const second = (await json(postJson(b.port, "/farm/acquire", { platform: "mock", holder: "h2" })))
      .allocation as Allocation;
    expect([first.deviceId, second.deviceId].sort()).toEqual(["a-mock-1", "b-mock-1"]);

    // Nothing free: a client that waits and then hangs up leaves no place behind.
    await using db = new SQL({ url: pg.url, max: 1 });
    const quitter = new AbortController();
    const quitting = postJson(
      a.port,
      "/farm/acquire",
      { platform: "mock", waitMs: 30_000, holder: "quitter" },
      quitter.signal,
    ).catch((e: Error) => e.name);
    await pollUntil(
      "the quitter queued",
      () => db`SELECT state FROM requests WHERE holder = 'quitter'`,
      (r) => r[0]?.state === "waiting",
      5_000,
    );
    quitter.abort();
    expect(await quitting).toBe("AbortError");
    await pollUntil(
      "the quitter's place dropped",
      () => db`SELECT state FROM requests WHERE holder = 'quitter'`,
      (r) => r[0]?.state === "cancelled",
      5_000,
    );

    const waiting = postJson(b.port, "/farm/acquire", { platform: "mock", waitMs: 30_000, holder: "waiter" });
    await pollUntil(
      "the waiter queued",
      () => db`SELECT state FROM requests WHERE holder = 'waiter'`,
      (r) => r[0]?.state === "waiting",
      5_000,
    );
    const holder = await claim(first);
    expect((await holder.call("session.start")).result.state).toBe("active");
    const t0 = performance.now();
    holder.terminate();
    const answer = await waiting;
    const servedMs = performance.now() - t0;
    expect(answer.status).toBe(200);
    const served = (await json(answer)).allocation as Allocation;
    expect([served.deviceId, served.endpoint]).toEqual([first.deviceId, first.endpoint]);
    console.log(`farm: a holder's connection dropped → the waiting client served in ${servedMs.toFixed(0)} ms`);
    const [gone] = await db`SELECT release_reason FROM allocations WHERE id = ${first.allocationId}`;
    expect(gone).toEqual({ release_reason: "connection closed" });

    // Typed errors for what cannot be served.
    const none = await postJson(a.port, "/farm/acquire", { platform: "ios" });
    // The farm's own codes are −32099 (docs/protocol/errors.md#extensions); the protocol's keep their numbers.
    expect([none.status, (await json(none)).error]).toEqual([
      404,
      expect.objectContaining({ code: -32099, data: expect.objectContaining({ code: "farm_no_matching_device" }) }),
    ]);
    const busy = await postJson(a.port, "/farm/acquire", { platform: "mock", waitMs: 200 });
    expect([busy.status, (await json(busy)).error.data]).toEqual([
      408,
      expect.objectContaining({ code: "farm_acquire_timed_out", retryable: true }),
    ]);
    const bad = await postJson(a.port, "/farm/acquire", { os: "fourteen" });
    expect([bad.status, (await json(bad)).error]).toEqual([
      400,
      expect.objectContaining({ code: -32602, data: expect.objectContaining({ code: "invalid_params" }) }),
    ]);
    // PostgreSQL refuses NUL in text: the request is refused before it reaches the database.
    for (const field of ["platform", "model", "host", "capability", "device", "holder"]) {
      const nul = await postJson(a.port, "/farm/acquire", { [field]: "x\u0000y" });
      expect([field, nul.status, (await json(nul)).error.data]).toEqual([
        field,
        400,
        expect.objectContaining({ code: "invalid_params", retryable: false }),
      ]);
    }
    const released = await postJson(b.port, "/farm/release", { allocationId: served.allocationId });
    expect(await json(released)).toEqual({ released: true });
  }, 90_000);

  test("operators block and unblock a device and take one from its holder; the holder's next call is a typed error and the device goes to the next client", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "a", { DEVICERAIL_MOCK_DEVICES: "2" });
    await available(pg, 2);
    const blocked = await farmCli(pg, ["block", "a-mock-2", "--reason", "cracked screen"]);
    expect([blocked.code, blocked.stdout]).toEqual([
      0,
      expect.stringMatching(/^blocked \S+\/a-mock-2: cracked screen; a holder keeps it until it releases\n$/),
    ]);
    expect(await deviceRow(pg, "a-mock-2")).toEqual(
      expect.objectContaining({ state: "blocked", health: "blocked: cracked screen" }),
    );
    const refused = await farmCli(pg, ["acquire", "--device", "a-mock-2"]);
    expect([refused.code, refused.stderr.trim()]).toEqual([
      1,
      "devicerail: no matching device became free within 0 ms; 1 matching device(s) stayed busy, blocked or quarantined",
    ]);
    expect((await farmCli(pg, ["block", "a-mock-9", "--reason", "x"])).stderr.trim()).toBe(
      "devicerail: no device a-mock-9 in the farm: see `devicerail farm devices`",
    );
    expect((await farmCli(pg, ["block", "a-mock-1"])).stderr.trim()).toBe(
      "devicerail: farm block needs --reason TEXT (it is recorded)",
    );

    const held = await acquireCli(pg, ["--platform", "mock", "--holder", "stuck-job"]);
    expect(held.deviceId).toBe("a-mock-1");
    const holder = await claim(held);
    expect((await holder.call("session.start")).result.state).toBe("active");
    expect((await farmCli(pg, ["release", "a-mock-1"])).stderr.trim()).toBe(
      "devicerail: releasing a device someone holds needs --force --reason TEXT (or give the allocation id to release your own)",
    );
    const forced = await farmCli(pg, ["release", "a-mock-1", "--force", "--reason", "job hung for 2 h"]);
    expect([forced.code, forced.stdout]).toEqual([0, `released allocation ${held.allocationId} (held by stuck-job)\n`]);
    // The owning host learns it at its next heartbeat; from then on the holder is refused.
    const lapsed = await pollUntil(
      "the holder refused",
      () => tap(holder),
      (r) => r.error !== undefined,
      5_000,
    );
    expect(lapsed.error?.data).toEqual(
      expect.objectContaining({
        code: "device_lease_expired",
        details: {
          reason: "farmAllocationLapsed",
          allocationId: held.allocationId,
          cause: "released by an operator (forced: job hung for 2 h)",
        },
      }),
    );
    // Its Session was ended so the next client can lease the device at once.
    const next = await acquireCli(pg, ["--device", "a-mock-1", "--wait", "5s"]);
    const nextClient = await claim(next);
    expect((await nextClient.call("session.start")).result.state).toBe("active");
    nextClient.close();

    const cleared = await farmCli(pg, ["unblock", "a-mock-2"]);
    expect(cleared.stdout).toMatch(/^unblocked \S+\/a-mock-2 \(was blocked: cracked screen\)\n$/);
    expect((await deviceRow(pg, "a-mock-2"))?.state).toBe("available");
    await using db = new SQL({ url: pg.url, max: 1 });
    const audit = await db`SELECT action, device_id, reason, actor FROM audit ORDER BY id`;
    expect(
      audit.map((r: { action: string; device_id: string; reason: string }) => [r.action, r.device_id, r.reason]),
    ).toEqual([
      ["block", "a-mock-2", "cracked screen"],
      ["release", "a-mock-1", "job hung for 2 h (held by stuck-job)"],
      ["unblock", "a-mock-2", "cleared"],
    ]);
    expect(audit[0].actor).toMatch(/^.+@.+$/);
    holder.close();
  }, 90_000);

  test("a device that keeps failing is quarantined until an operator clears it", async () => {
    await using pg = await startPostgres();
    await using a = await startHost(pg, "q", {
      DEVICERAIL_MOCK_HANG: "execute",
      DEVICERAIL_FARM_QUARANTINE_FAILURES: "2",
      DEVICERAIL_FARM_QUARANTINE_WINDOW_MS: "60000",
    });
    await available(pg, 1);
    const held = await acquireCli(pg, ["--platform", "mock"]);
    const client = await claim(held);
    await client.call("session.start");
    // The Mock never finishes these actions: each times out, as a phone that stopped answering.
    for (let i = 0; i < 2; i++)
      expect((await tap(client, { actionTimeoutMs: 100 })).error?.data.code).toBe("action_timed_out");
    const row = await pollUntil(
      "quarantined",
      () => deviceRow(pg, "q-mock-1"),
      (d) => d?.health.startsWith("quarantined") === true,
      10_000,
    );
    expect(row?.health).toBe(
      "quarantined: 2 infrastructure failures within 1 min (last: device did not answer in time)",
    );
    // Its holder keeps it; once given back it is not handed out again.
    await client.call("session.end");
    client.close();
    expect(
      (
        await pollUntil(
          "given back",
          () => deviceRow(pg, "q-mock-1"),
          (d) => d?.state === "quarantined",
          5_000,
        )
      )?.state,
    ).toBe("quarantined");
    expect((await farmCli(pg, ["acquire", "--platform", "mock"])).code).toBe(1);
    const cleared = await farmCli(pg, ["unblock", "q-mock-1", "--reason", "replaced the cable"]);
    expect(cleared.stdout).toMatch(
      /^unblocked \S+\/q-mock-1 \(was quarantined: 2 infrastructure failures within 1 min \(last: device did not answer in time\)\)\n$/,
    );
    expect(await deviceRow(pg, "q-mock-1")).toEqual(expect.objectContaining({ state: "available", health: "ok" }));
    expect((await acquireCli(pg, ["--platform", "mock"])).deviceId).toBe("q-mock-1");
    void a;
  }, 90_000);
});

describe("farm allocation with an Android phone", () => {
  const adb = adbServerForFile();
  /** Host "b", which sees the phones of this file's adb server beside its Mock device. */
  const phoneHost = (pg: PgCluster, extra: Record<string, string>) =>
    startHost(pg, "b", {
      DEVICERAIL_ANDROID: "auto",
      DEVICERAIL_ADB_PATH: ADB_PATH,
      ANDROID_ADB_SERVER_PORT: String(adb.server().port),
      DEVICERAIL_MOCK: "on",
      ...extra,
    });
  describeWithPostgres("constraints", () => {
    test("an OS range picks the phone on the host it is plugged into, among three hosts, and its credential drives it there", async () => {
      await using pg = await startPostgres();
      await using a = await startHost(pg, "a");
      await using c = await startHost(pg, "c");
      await using b = await phoneHost(pg, { DEVICERAIL_FARM_QUARANTINE_FAILURES: "1" });
      const phone = await startFakeDevice(adb.server(), {
        scenario: demoScenario,
        props: { "ro.product.model": "Pixel_Farm", "ro.build.version.release": "14" },
      });
      const id = `android-adb:${phone.serial}`;
      await pollUntil(
        "the phone in the farm",
        () => farmDevices(pg),
        (ds) => ds.some((d) => d.deviceId === id && d.name === "Pixel Farm" && d.state === "available"),
        15_000,
      );
      const old = await farmCli(pg, ["acquire", "--platform", "android", "--os", "<14"]);
      expect([old.code, old.stderr.trim()]).toEqual([
        1,
        "devicerail: no device in the farm matches platform=android os=<14: see `devicerail farm devices`",
      ]);
      const got = await acquireCli(pg, ["--platform", "android", "--os", ">=14", "--capability", "swipe"]);
      expect([got.deviceId, got.endpoint, got.device]).toEqual([
        id,
        `127.0.0.1:${b.port}`,
        { name: "Pixel Farm", platform: "android", osVersion: "14" },
      ]);
      const client = await claim(got);
      await client.call("session.start");
      const observed = await client.call("device.observe");
      expect(observed.result?.screenshot).toEqual(expect.objectContaining({ mediaType: "image/png" }));
      // Unplugged (or gone offline) while held: an infrastructure failure, and with the threshold at 1, quarantine.
      await phone[Symbol.asyncDispose]();
      const lost = await pollUntil(
        "the phone's failure counted",
        () => farmDevices(pg),
        (ds) => ds.find((d) => d.deviceId === id)?.health !== "ok",
        15_000,
      );
      expect(lost.find((d) => d.deviceId === id)).toEqual(
        expect.objectContaining({
          state: "absent",
          health: "quarantined: 1 infrastructure failure within 10 min (last: device lost)",
        }),
      );
      client.close();
      void [a, c];
    }, 90_000);

    test("a phone whose battery stays under the threshold is quarantined, and the farm shows its level", async () => {
      await using pg = await startPostgres();
      await using b = await phoneHost(pg, {
        DEVICERAIL_FARM_QUARANTINE_FAILURES: "2",
        DEVICERAIL_FARM_MIN_BATTERY: "20",
      });
      await using phone = await startFakeDevice(adb.server(), {
        scenario: demoScenario,
        battery: 57,
        props: { "ro.product.model": "Pixel_Farm" },
      });
      const id = `android-adb:${phone.serial}`;
      const row = async () => (await farmDevices(pg)).find((d) => d.deviceId === id);
      expect(await pollUntil("the phone's battery in the farm", row, (d) => d?.battery === 57, 15_000)).toEqual(
        expect.objectContaining({ state: "available", health: "ok", battery: 57 }),
      );
      expect((await farmDevices(pg)).find((d) => d.deviceId === "b-mock-1")?.battery).toBeNull();
      phone.phone.battery = 9;
      // Read about every 12 heartbeats (2.4 s here): two low readings quarantine it.
      const low = await pollUntil("quarantined for its battery", row, (d) => d?.state === "quarantined", 20_000);
      expect(low).toEqual(
        expect.objectContaining({
          battery: 9,
          health: "quarantined: 2 infrastructure failures within 10 min (last: battery low)",
        }),
      );
      void b;
    }, 90_000);
  });
});
