/**
 * One daemon per data directory, every command its client: commands start the daemon in the
 * background when none runs, attach to one that runs (a foreground `serve` included), recover
 * what a dead one left behind, and report one of another version.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "bun";
import { type DaemonRecord, isAlive, readRecord } from "../../src/server/daemon-record.ts";
import { until } from "../support/wait.ts";
import { daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { ServeDaemon } from "../e2e/serve-daemon.ts";
import { cli, cliJson } from "./run.ts";

// A stopped daemon is a zombie until init reaps it; that counts as gone (see isAlive).
const alive = isAlive;
const record = (dataDir: string) => readRecord(dataDir) as DaemonRecord;

describe("devicerail daemon", () => {
  test("status exits 3 when no daemon runs; start starts one in the background and status reports it", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const none = await cli(["daemon", "status"], env);
    expect([none.code, none.stdout]).toEqual([3, `no devicerail daemon runs on ${env.DEVICERAIL_DATA_DIR}\n`]);
    expect(await cliJson(["daemon", "status"], env).catch((e: Error) => e.message)).toContain("exited 3");

    const started = await cliJson(["daemon", "start"], env);
    expect(started).toMatchObject({
      running: true,
      started: true,
      dataDir: env.DEVICERAIL_DATA_DIR,
      devices: ["mock-1"],
      openSessions: [],
    });
    expect(started.listeners.socket).toBe(join(env.DEVICERAIL_DATA_DIR, "daemon.sock"));
    expect(started.listeners.tcp).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(alive(started.pid)).toBe(true);

    const again = await cliJson(["daemon", "start"], env);
    expect([again.started, again.pid]).toEqual([false, started.pid]);
    const status = await cliJson(["daemon", "status"], env);
    expect([status.pid, status.version, status.uptimeMs >= 0]).toEqual([started.pid, started.version, true]);

    const stopped = await cliJson(["daemon", "stop"], env);
    expect(stopped).toEqual({ stopped: true, dataDir: env.DEVICERAIL_DATA_DIR, pid: started.pid });
    expect(alive(started.pid)).toBe(false);
    expect(existsSync(join(env.DEVICERAIL_DATA_DIR, "listen.json"))).toBe(false);
    expect((await cli(["daemon", "stop"], env)).stdout).toBe(
      `no devicerail daemon runs on ${env.DEVICERAIL_DATA_DIR}\n`,
    );
  }, 30_000);

  test("separate commands drive one app: tap, type, tap, type, tap signs in on the Mock", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    // The Mock's sign-in screen: user name field, password field, Sign in button (1280×720).
    for (const args of [
      ["tap", "640", "148"],
      ["type", "alice"],
      ["tap", "640", "220"],
      ["type", "hunter2"],
      ["tap", "640", "292"],
    ]) {
      const r = await cli(args, env);
      expect([args, r.code, r.stderr]).toEqual([args, 0, ""]);
    }
    const tree = await cliJson(["ui"], env);
    const texts = tree.nodes.map((n: { text: string | null }) => n.text).filter(Boolean);
    expect(texts).toContain("Welcome, alice");
    // Each one-shot command was its own Session, all on the same daemon.
    const { sessions } = await cliJson(["sessions"], env);
    expect(sessions.map((s: { actions: number; outcome: string }) => [s.actions, s.outcome])).toEqual([
      [0, "completed"],
      ...Array(5).fill([1, "completed"]),
    ]);
  }, 60_000);

  test("parallel commands on one device take turns instead of failing", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        cli(["screenshot", "-o", join(env.DEVICERAIL_DATA_DIR, `shot-${i}.png`)], env),
      ),
    );
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(Array(4).fill([0, ""]));
    // One daemon served all four: its record names one pid, and the log shows one start.
    expect(alive(record(env.DEVICERAIL_DATA_DIR).pid)).toBe(true);
    const log = readFileSync(join(env.DEVICERAIL_DATA_DIR, "daemon.log"), "utf8");
    expect(log.split("\n").filter((l) => l.startsWith('{"listening":'))).toHaveLength(1);
  }, 60_000);

  test("commands started at the same instant on a new data directory all succeed, whichever daemon wins", async () => {
    // Each starts a daemon; the one holding the lock serves them all. Before the daemon wrote its
    // record at once (and the store retried a contended open), both daemons of a pair could be refused.
    for (let round = 0; round < 3; round++) {
      const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
      const runs = await Promise.all([cli(["tap", "1", "1"], env), cli(["devices"], env), cli(["ui"], env)]);
      expect([round, runs.map((r) => [r.code, r.stderr])]).toEqual([round, Array(3).fill([0, ""])]);
      expect(record(env.DEVICERAIL_DATA_DIR)).toMatchObject({ state: "serving" });
    }
  }, 90_000);

  test("commands attach to a serve running in the foreground and record their Sessions in it", async () => {
    const dataDir = tempDataDir();
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_DATA_DIR: dataDir });
    const r = await cli(["tap", "1", "1"], { DEVICERAIL_DATA_DIR: dataDir });
    expect(r.code).toBe(0);
    expect(record(dataDir).pid).toBe(d.proc.pid);
    const status = await cliJson(["daemon", "status"], { DEVICERAIL_DATA_DIR: dataDir });
    expect([status.pid, status.listeners.tcp]).toEqual([d.proc.pid, `127.0.0.1:${d.port}`]);
  }, 30_000);

  test("a record and socket left by a dead daemon are recovered: the next command starts a new one", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const first = await cliJson(["daemon", "start"], env);
    process.kill(first.pid, "SIGKILL");
    await until("the killed daemon to be gone", () => !alive(first.pid));
    expect(existsSync(join(env.DEVICERAIL_DATA_DIR, "listen.json"))).toBe(true);
    const r = await cli(["tap", "1", "1"], env);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const now = record(env.DEVICERAIL_DATA_DIR);
    expect(now.pid).not.toBe(first.pid);
    expect(alive(now.pid)).toBe(true);
  }, 30_000);

  test("a daemon of another version is reported, and the command still runs against it", async () => {
    const dataDir = tempDataDir();
    // A stand-in daemon that answers like devicerail 0.0.1 would.
    const answers: Record<string, unknown> = {
      "system.hello": {
        connectionId: crypto.randomUUID(),
        protocol: { selected: { major: 1, minor: 5 } },
        server: { name: "devicerail-daemon", version: "0.0.1" },
        transport: { kind: "tcp", framing: "ndjson" },
        features: { enabled: ["device.routing.v1", "events.snapshot.v1"] },
      },
      "devices.list": { devices: [], selectedDeviceId: null },
      "devicerail.sessions.list": { sessions: [] },
    };
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(s: Socket<undefined>, chunk) {
          for (const line of new TextDecoder().decode(chunk).split("\n").filter(Boolean)) {
            const m = JSON.parse(line) as { id: number; method: string };
            s.write(`${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: answers[m.method] })}\n`);
          }
        },
      },
    });
    try {
      writeFileSync(
        join(dataDir, "listen.json"),
        JSON.stringify({
          pid: process.pid,
          version: "0.0.1",
          startedAtMs: Date.now(),
          host: "127.0.0.1",
          port: server.port,
        }),
      );
      const r = await cli(["devices"], { DEVICERAIL_DATA_DIR: dataDir });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("the running devicerail daemon is version 0.0.1, this command is");
      expect(r.stderr).toContain("devicerail daemon stop");
      expect(r.stdout).toBe("no devices\n");
    } finally {
      server.stop(true);
    }
  }, 30_000);

  test("a daemon that cannot start says why, with its log", async () => {
    const env = {
      DEVICERAIL_DATA_DIR: tempDataDir(),
      DEVICERAIL_ANDROID: "required",
      DEVICERAIL_ADB_PATH: "/nonexistent/adb",
      ANDROID_ADB_SERVER_PORT: "1",
    };
    const r = await cli(["devices"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the devicerail daemon could not start (exit 1)");
    expect(r.stderr).toContain("DEVICERAIL_ANDROID=required");
    expect(r.stderr).toContain(join(env.DEVICERAIL_DATA_DIR, "daemon.log"));
  }, 30_000);

  test("the device is chosen with -d before or after the command, or ANDROID_SERIAL; several and none chosen is a clear error", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK: "on", DEVICERAIL_MOCK_DEVICES: "2" };
    const none = await cli(["tap", "1", "1"], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("device_selection_required");
    expect(none.stderr).toContain("available devices: mock-1, mock-2 (choose one with -d)");
    for (const [args, extra] of [
      [["-d", "mock-2", "tap", "1", "1"], {}],
      [["tap", "-d", "mock-2", "1", "1"], {}],
      [["tap", "1", "1"], { ANDROID_SERIAL: "mock-2" }],
      [["--device", "mock-1", "tap", "1", "1"], { ANDROID_SERIAL: "mock-2" }],
    ] as const) {
      const r = await cli([...args], { ...env, ...extra });
      expect([args, r.code]).toEqual([args, 0]);
    }
    const { sessions } = await cliJson(["sessions"], env);
    expect(sessions.map((s: { deviceId: string }) => s.deviceId)).toEqual(["mock-1", "mock-2", "mock-2", "mock-2"]);
  }, 60_000);

  test("sessions --follow prints the next Session's events as they happen and ends with it", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    await cliJson(["daemon", "start"], env);
    const follow = Bun.spawn(daemonCommand(["sessions", "--follow", "--json"]), {
      env: daemonEnv(env),
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = (async () => {
      let text = "";
      for await (const chunk of follow.stderr) {
        text += new TextDecoder().decode(chunk);
        if (text.includes("waiting for one to start")) return text;
      }
      return text;
    })();
    expect(await stderr).toContain("no active Session; waiting for one to start");
    expect((await cli(["tap", "640", "148"], env)).code).toBe(0);
    expect(await follow.exited).toBe(0);
    const events = (await new Response(follow.stdout).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.map((e: { payload: { type: string } }) => e.payload.type)).toEqual([
      "sessionStarted",
      "actionStarted",
      "actionCompleted",
      "sessionEnded",
    ]);
  }, 30_000);

  test("sessions prune deletes ended Sessions by count or age, and needs to be told which", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    for (let i = 0; i < 3; i++) expect((await cli(["tap", "1", "1"], env)).code).toBe(0);
    const before = (await cliJson(["sessions"], env)).sessions.map((s: { id: string }) => s.id);
    expect(await cliJson(["sessions", "prune", "--older-than", "1h", "--dry-run"], env)).toEqual({
      deleted: [],
      dryRun: true,
    });
    expect(await cliJson(["sessions", "prune", "--keep", "1"], env)).toEqual({
      deleted: before.slice(1),
      dryRun: false,
    });
    expect((await cliJson(["sessions"], env)).sessions.map((s: { id: string }) => s.id)).toEqual(before.slice(0, 1));
    const neither = await cli(["sessions", "prune"], env);
    expect([neither.code, neither.stderr]).toEqual([
      2,
      "devicerail: say which Sessions to delete: --older-than AGE or --keep N (one of them)\n",
    ]);
    const bad = await cli(["sessions", "prune", "--older-than", "soon", "--json"], env);
    expect(bad.code).toBe(2);
    const message = expect.stringContaining("expected an age such as 7d, 12h or 30m");
    expect(JSON.parse(bad.stdout)).toEqual({
      error: { code: -32097, message, data: { code: "usage_error", message, retryable: false, details: null } },
    });
  }, 30_000);
});
