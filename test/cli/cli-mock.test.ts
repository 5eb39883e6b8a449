import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DaemonProcess, daemonCommand, daemonEnv, spawnDaemon, tempDataDir } from "../support/daemon.ts";
import type { Check } from "../../src/cli/doctor-checks.ts";
import { cli, cliJson, sha256, tempCwd } from "./run.ts";

const COMMANDS = [
  "serve",
  "devices",
  "screenshot",
  "ui",
  "tap",
  "swipe",
  "type",
  "key",
  "launch",
  "open-url",
  "find",
  "wait-for",
  "sessions",
  "report",
  "export",
  "doctor",
  "mcp",
];
/** The Mock's own actions, then the semantic ones core adds (the CLI negotiates them, and protected actions for type --secret). */
const MOCK_ACTIONS =
  "tap, inputText, scroll, back, inputSecret, findElement, tapElement, clearElement, setElementValue, waitForElement";

const mockDevice = {
  id: "mock-1",
  name: "DeviceRail Mock Device",
  platform: { kind: "mock" },
  osVersion: "0.1",
  connected: false,
};
const assetRef = (sha: string, mediaType: string) => ({
  id: `sha256:${sha}`,
  mediaType,
  uri: `devicerail://assets/sha256/${sha}`,
  sha256: sha,
});

describe("devicerail --help and usage errors", () => {
  test("every command's --help exits 0 with its usage on stdout", async () => {
    for (const name of COMMANDS) {
      const r = await cli([name, "--help"]);
      expect([name, r.code, r.stderr]).toEqual([name, 0, ""]);
      expect(r.stdout).toStartWith(`Usage: devicerail ${name}`);
      // serve and mcp speak protocols on stdout; there is no other output to make machine-readable.
      if (name !== "serve" && name !== "mcp") expect(r.stdout).toContain("--json");
    }
    const root = await cli(["--help"]);
    expect([
      root.code,
      root.stdout
        .split("\n")
        .filter((l) => /^ {2}devicerail \S/.test(l))
        .map((l) => l.trim().split(/\s+/)[1]),
    ]).toEqual([
      0,
      [
        "serve",
        "serve",
        "daemon",
        "devices",
        "screenshot",
        "ui",
        "tap",
        "launch",
        "tap",
        "wait-for",
        "sessions",
        "sessions",
        "report",
        "report",
        "export",
        "farm",
        "farm",
        "farm",
        "farm",
        "mcp",
        "android",
        "doctor",
        "--version",
        "--help",
      ],
    ]);
  });

  test("an unknown command, a missing argument or a bad number exits 2 with a message and nothing on stdout", async () => {
    const cases: [string[], string][] = [
      [["frobnicate"], "devicerail: unknown command 'frobnicate'"],
      [["tap", "10"], "devicerail: missing required argument 'y'"],
      [
        ["tap", "10", "-3"],
        "devicerail: command-argument value '-3' is invalid for argument 'y'. expected an integer from 0 to 4294967295",
      ],
      [
        ["tap", "10", "abc"],
        "devicerail: command-argument value 'abc' is invalid for argument 'y'. expected an integer from 0 to 4294967295",
      ],
      [
        ["swipe", "1", "2", "3", "4", "--duration", "0"],
        "devicerail: option '--duration <ms>' argument '0' is invalid. expected an integer from 1 to 60000",
      ],
      [
        ["doctor", "--smoke", "-n", "x"],
        "devicerail: option '-n, --cycles <n>' argument 'x' is invalid. expected an integer from 1 to 10000",
      ],
      [["doctor", "-n", "3"], "devicerail: -d, -n and --tap belong to --smoke"],
      [["export"], "devicerail: missing required argument 'session'"],
      [["devices", "extra"], "devicerail: too many arguments for 'devices'. Expected 0 arguments but got 1."],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect([args, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([args, 2, "", message]);
    }
  });

  test("no arguments print the usage and exit 2 when stdin is a terminal", async () => {
    // script(1) gives the command a pseudo-terminal; what it prints comes back on script's stdout.
    const command = daemonCommand([])
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
      .join(" ");
    const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], {
      env: daemonEnv(),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(2);
    expect(out).toStartWith("devicerail ");
    expect(out).toContain("Usage:");
  });

  test("no arguments serve one NDJSON client on stdin when stdin is not a terminal", async () => {
    await using d = new DaemonProcess({ args: [] });
    const hello = await d.hello();
    expect(hello.result.transport).toEqual({ kind: "stdio", framing: "ndjson" });
    expect((await d.call("devices.list")).result.devices.map((x: { id: string }) => x.id)).toEqual(["mock-1"]);
  });

  test("an invalid environment setting is a usage error (exit 2) for the device commands", async () => {
    const r = await cli(["devices"], { DEVICERAIL_SCREENSHOT_POLICY: "sometimes" });
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      "",
      'devicerail: invalid DEVICERAIL_SCREENSHOT_POLICY="sometimes": Invalid type: Expected ("capture" | "omit") but received "sometimes"\n',
    ]);
  });
});

describe("devicerail devices, screenshot and ui on the Mock", () => {
  test("devices --json is the devices.list result, as GET /devices gives it; on a pipe rows are tab-separated", async () => {
    expect(await cliJson(["devices"])).toEqual({ devices: [mockDevice], selectedDeviceId: null });
    const r = await cli(["devices"]);
    expect([r.code, r.stdout]).toEqual([0, "mock-1\tmock\tDeviceRail Mock Device\t0.1\tavailable\t-\n"]);
  });

  test("devices shows the Session that holds a device", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK_HANG: "execute" };
    const held = Bun.spawn(daemonCommand(["tap", "1", "1"]), {
      env: daemonEnv(env),
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      let row = "";
      const deadline = Date.now() + 10_000;
      // The Session leases the device a moment before its connect finishes: wait for both.
      while (!/\tconnected\t[0-9a-f-]{36}\n$/.test(row) && Date.now() < deadline)
        row = (await cli(["devices"], env)).stdout;
      const { sessions } = await cliJson(["sessions"], env);
      expect(row).toBe(`mock-1\tmock\tDeviceRail Mock Device\t0.1\tconnected\t${sessions[0].id}\n`);
    } finally {
      held.kill("SIGKILL");
    }
  });

  test("screenshot writes the PNG whose digest is the observation's screenshot sha256", async () => {
    const cwd = tempCwd();
    const { file, observation } = await cliJson(["screenshot", "-o", "shot.png"], {}, cwd);
    const bytes = readFileSync(join(cwd, "shot.png"));
    expect(file).toBe("shot.png");
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(observation).toEqual(
      expect.objectContaining({
        deviceId: "mock-1",
        viewport: { width: 1280, height: 720, scaleFactor: 1 },
        screenshot: assetRef(sha256(bytes), "image/png"),
      }),
    );
  });

  test("-o naming a missing folder is a usage error before any device work; -o naming a folder writes into it", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const missing = await cli(["screenshot", "-o", "/nonexistent-folder/x.png"], env);
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([
      2,
      "",
      "devicerail: cannot write /nonexistent-folder/x.png: the folder /nonexistent-folder does not exist\n",
    ]);
    expect(await cliJson(["sessions"], env)).toEqual({ sessions: [] });
    const dir = tempCwd();
    const r = await cli(["screenshot", "-o", dir], env);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^screenshot-\d{8}-\d{6}\.png$/)]);
  });

  test("screenshot without -o writes ./screenshot-<time>.png and says so", async () => {
    const cwd = tempCwd();
    const r = await cli(["screenshot"], {}, cwd);
    const files = readdirSync(cwd);
    expect(files).toEqual([expect.stringMatching(/^screenshot-\d{8}-\d{6}\.png$/)]);
    const digest = sha256(readFileSync(join(cwd, files[0] as string)));
    expect([r.code, r.stdout]).toEqual([0, `${files[0]}: 1280×720 screenshot of mock-1 (sha256 ${digest})\n`]);
  });

  test("ui prints the tree indented by depth with text, identifiers and bounds; --json the UiSnapshot", async () => {
    const r = await cli(["ui"]);
    expect([r.code, r.stdout]).toEqual([
      0,
      [
        "    Window [0,0,1280,720]",
        '@e1   Text "Sign in" #title [400,40,480,64]',
        '@e2   TextField "User name" #username [400,120,480,56]',
        '@e3   SecureTextField "Password" #password [400,192,480,56] [password]',
        '@e4   Button "Sign in" #sign_in [400,264,480,56] [disabled]',
        "",
      ].join("\n"),
    ]);
    const snapshot = await cliJson(["ui", "-d", "mock-1"]);
    expect(snapshot).toEqual({
      formatVersion: 1,
      observationId: expect.any(String),
      context: { contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "login-1" },
      rootStableNodeIds: ["login"],
      nodes: expect.any(Array),
    });
    expect(
      snapshot.nodes.map((n: { stableNodeId: string; parentStableNodeId: string | null }) => [
        n.stableNodeId,
        n.parentStableNodeId,
      ]),
    ).toEqual([
      ["login", null],
      ["login/title", "login"],
      ["login/username", "login"],
      ["login/password", "login"],
      ["login/sign_in", "login"],
    ]);
  });

  test("colour only with FORCE_COLOR, and never with NO_COLOR", async () => {
    expect((await cli(["ui"])).stdout).not.toContain("\x1b[");
    expect((await cli(["ui"], { FORCE_COLOR: "1" })).stdout).toContain("\x1b[1mWindow\x1b[22m");
    expect((await cli(["ui"], { FORCE_COLOR: "1", NO_COLOR: "1" })).stdout).not.toContain("\x1b[");
  });
});

describe("one-shot actions on the Mock", () => {
  test("tap returns an ActionResult, is recorded as a Session, and export writes it with its evidence", async () => {
    const dataDir = tempDataDir();
    const env = { DEVICERAIL_DATA_DIR: dataDir };
    const result = await cliJson(["tap", "640", "300"], env);
    expect(result).toEqual(
      expect.objectContaining({
        callId: expect.any(String),
        output: { accepted: true, x: 640, y: 300 },
        after: expect.objectContaining({ deviceId: "mock-1" }),
      }),
    );
    const { sessions } = await cliJson(["sessions"], env);
    const summary = {
      id: expect.any(String),
      state: "ended",
      startedAtMs: expect.any(Number),
      endedAtMs: expect.any(Number),
      eventCount: 4,
      lastSequence: 4,
      deviceId: "mock-1",
      durationMs: expect.any(Number),
      actions: 1,
      errors: 0,
      outcome: "completed",
      reason: null,
      verdict: null,
    };
    expect(sessions).toEqual([summary]);
    const id = sessions[0].id;
    const table = await cli(["sessions"], env);
    const started = `${new Date(sessions[0].startedAtMs).toISOString().slice(0, 19)}Z`;
    expect(table.stdout).toMatch(new RegExp(`^${id}\\tmock-1\\t${started}\\t\\d+ ms\\t1\\t0\\tcompleted\\n$`));
    const { eventCount, lastSequence, endedAtMs, startedAtMs, state } = sessions[0];

    const out = join(tempCwd(), "export");
    const manifest = await cliJson(["export", id, "-o", out], env);
    const events = readFileSync(join(out, "events.ndjson"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.map((e) => [e.sequence, e.payload.type])).toEqual([
      [1, "sessionStarted"],
      [2, "actionStarted"],
      [3, "actionCompleted"],
      [4, "sessionEnded"],
    ]);
    expect(events[2].payload.outcome.result.callId).toBe(result.callId);
    const files = readdirSync(join(out, "evidence")).sort();
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) expect(`${sha256(readFileSync(join(out, "evidence", f)))}.${f.split(".")[1]}`).toBe(f);
    // The after observation's screenshot and UI tree are among them, named by their digest.
    expect(files).toContain(`${result.after.screenshot.sha256}.png`);
    expect(files).toContain(`${result.after.uiSnapshot.evidence.sha256}.json`);
    expect(manifest).toEqual({
      dir: out,
      format: "devicerail-session-export",
      formatVersion: 1,
      session: { id, state, startedAtMs, endedAtMs, eventCount, lastSequence },
      events: "events.ndjson",
      evidence: expect.any(Array),
    });
    expect(manifest.evidence.map((e: { file: string }) => e.file).sort()).toEqual(files.map((f) => `evidence/${f}`));
    expect(readdirSync(out).sort()).toEqual(["README.txt", "events.ndjson", "evidence", "manifest.json"]);

    // The folder exists now: as on every command, the generated name goes inside it; that one
    // exists the time after, and a folder with content is never written over.
    const again = await cliJson(["export", id, "-o", out], env);
    expect(again.dir).toBe(join(out, `devicerail-session-${id}`));
    const third = await cli(["export", id, "-o", out], env);
    expect([third.code, third.stderr]).toEqual([
      2,
      `devicerail: ${again.dir} already exists and is not empty; choose another folder with -o DIR\n`,
    ]);
    expect(readdirSync(out).sort()).toEqual([
      "README.txt",
      `devicerail-session-${id}`,
      "events.ndjson",
      "evidence",
      "manifest.json",
    ]);
    const unknown = await cli(["export", "00000000-0000-4000-8000-000000000000", "-o", join(tempCwd(), "x")], env);
    expect([unknown.code, unknown.stderr.split(":").slice(0, 3).join(":")]).toEqual([
      1,
      "devicerail: session_not_found: session not found",
    ]);
  });

  test("type and key back run the Mock's actions; each prints what it did", async () => {
    const typed = await cliJson(["type", "hello"]);
    expect(typed.output).toEqual({ accepted: true, characters: 5 });
    const r = await cli(["key", "back"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^ok key back on mock-1 \(back, \d+ ms, session [0-9a-f-]{36}\)\noutput: \{"accepted":true\}\nafter: observation [0-9a-f-]{36} \(screenshot sha256 [0-9a-f]{64}\)\n$/,
    );
  });

  test("an action the Mock lacks fails with exit 1 listing its actions, and records no Session", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const cases: [string[], string][] = [
      [["swipe", "1", "2", "3", "4"], "swipe action (needed for swipe 1,2 → 3,4 in 300 ms)"],
      [["key", "enter"], "keyPress action (needed for key enter)"],
      [["launch", "com.example.app"], "launch action (needed for launch com.example.app)"],
      [["open-url", "https://example.com"], "openUrl action (needed for open-url https://example.com)"],
    ];
    for (const [args, what] of cases) {
      const r = await cli(args, env);
      expect([r.code, r.stdout, r.stderr]).toEqual([
        1,
        "",
        `devicerail: device mock-1 has no ${what}; its actions are: ${MOCK_ACTIONS}\n`,
      ]);
    }
    expect(await cliJson(["sessions"], env)).toEqual({ sessions: [] });
  });

  test("a daemon error exits 1 with what to fix, no method or number; --json prints the JSON-RPC error on stdout", async () => {
    const r = await cli(["tap", "1", "1", "-d", "mock-9", "--json"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "devicerail: device_not_found: device is not registered: mock-9\n  list the devices with `devicerail devices`\n",
    );
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: -32011, message: expect.any(String), data: expect.objectContaining({ code: "device_not_found" }) },
    });
    // The protocol's view (the method, the number) only when debugging.
    const debug = await cli(["tap", "1", "1", "-d", "mock-9"], { DEVICERAIL_DEBUG: "1" });
    expect(debug.stderr).toEndWith("\n  (debug: device.select answered JSON-RPC error -32011)\n");
  });

  test("two Mock devices need -d, and the error names them", async () => {
    const r = await cli(["tap", "1", "1"], { DEVICERAIL_MOCK_DEVICES: "2" });
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith("devicerail: device_selection_required: ");
    expect(r.stderr).toEndWith("\n  available devices: mock-1, mock-2 (choose one with -d)\n");
    expect((await cliJson(["tap", "1", "1", "-d", "mock-2"], { DEVICERAIL_MOCK_DEVICES: "2" })).after.deviceId).toBe(
      "mock-2",
    );
  });

  test("a data directory held by a daemon serving stdio only fails the commands with exit 1 and says so", async () => {
    const dataDir = tempDataDir();
    await using d = spawnDaemon({ env: { DEVICERAIL_DATA_DIR: dataDir } });
    await d.hello();
    const pid = d.proc.pid;
    const message = `devicerail: ${dataDir} is held by a devicerail daemon (pid ${pid}) serving stdio only; stop it, or set DEVICERAIL_DATA_DIR to another folder\n`;
    for (const args of [["tap", "1", "1"], ["devices"]]) {
      const r = await cli(args, { DEVICERAIL_DATA_DIR: dataDir });
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 1, "", message]);
    }
    const doctor = await cliJson(["doctor"], { DEVICERAIL_DATA_DIR: dataDir });
    expect(doctor.checks.find((c: { name: string }) => c.name === "data directory")).toEqual({
      name: "data directory",
      status: "warn",
      detail: `${dataDir}: in use by a devicerail daemon that commands cannot reach (pid ${pid}, serving stdio only)`,
      fix: "commands attach to a daemon that serves a socket: stop that one (devicerail daemon start starts one), or set DEVICERAIL_DATA_DIR to another folder",
    });
  }, 30_000);
});

describe("devicerail doctor on the Mock", () => {
  test("--json reports each check; nothing failed, so it exits 0", async () => {
    const dataDir = tempDataDir();
    const r = await cli(["doctor", "--json"], { DEVICERAIL_DATA_DIR: dataDir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      checks: [
        { name: "adb", status: "skip", detail: "DEVICERAIL_ANDROID=off: Android devices are not used", fix: null },
        { name: "iOS simulator tools", status: "skip", detail: "not macOS", fix: null },
        { name: "data directory", status: "ok", detail: `${dataDir}: writable, lock free`, fix: null },
        {
          name: "listen address",
          status: "skip",
          detail: "DEVICERAIL_RPC_LISTEN is not set (serve uses stdio)",
          fix: null,
        },
        {
          name: "daemon TCP port",
          status: "skip",
          detail: "no devicerail daemon runs on this data directory",
          fix: null,
        },
        {
          name: "daemon socket",
          status: "ok",
          detail: `the Unix socket admits your uid (${process.getuid?.()}) and root only: the peer's uid is checked on every connection, besides the 0600 socket in a 0700 folder`,
          fix: null,
        },
      ],
    });
  });

  test("a bad setting and a listen port in use are failures with fixes, and the exit code is 1", async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const env = { DEVICERAIL_RPC_LISTEN: `127.0.0.1:${server.port}`, DEVICERAIL_MOCK_HANG: "sometimes" };
      const r = await cli(["doctor", "--json"], env);
      const checks: Check[] = JSON.parse(r.stdout).checks;
      expect(r.code).toBe(1);
      expect(checks.filter((c) => c.name === "configuration" || c.name === "listen address")).toEqual([
        {
          name: "configuration",
          status: "fail",
          detail: expect.stringMatching(/^invalid DEVICERAIL_MOCK_HANG="sometimes"/),
          fix: "correct DEVICERAIL_MOCK_HANG or unset it",
        },
        {
          name: "listen address",
          status: "fail",
          detail: `127.0.0.1:${server.port} cannot be bound: EADDRINUSE (already in use, perhaps by a running daemon)`,
          fix: "stop what listens there, or choose another port in DEVICERAIL_RPC_LISTEN",
        },
      ]);
      const text = await cli(["doctor"], env);
      expect(text.stdout).toContain(`fail  listen address       127.0.0.1:${server.port} cannot be bound: EADDRINUSE`);
      expect(text.stdout).toEndWith("\n2 failed, 0 warning(s), 2 ok\n");
    } finally {
      server.stop(true);
    }
  });

  test("--smoke runs N observe cycles, touching nothing, and reports p50/p95 and the paste for a bug report", async () => {
    const stat = { p50Ms: expect.any(Number), p95Ms: expect.any(Number) };
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const r = await cliJson(["doctor", "--smoke", "-d", "mock-1", "-n", "4"], env);
    expect(r.smoke).toEqual({
      deviceId: "mock-1",
      cycles: 4,
      observe: stat,
      tap: null,
      tapAt: null,
      report: expect.any(Object),
    });
    // No tap on a screen nobody has looked at: the Session holds no action.
    const { sessions } = await cliJson(["sessions"], env);
    expect(sessions.map((x: { actions: number }) => x.actions)).toEqual([0]);
    // The paste a bug report asks for: the device, what it offers, what the last observation said.
    const report = r.smoke.report;
    expect(report.device).toEqual({ name: expect.any(String), platform: "mock", osVersion: expect.anything() });
    expect(report.actions).toContain("tap");
    expect(report.observation.viewport).toEqual({
      width: expect.any(Number),
      height: expect.any(Number),
      scaleFactor: expect.any(Number),
    });
    expect(report.observation.uiNodes).toBeGreaterThan(0);
    expect(report.tapOutput).toBeNull();
    expect(r.smoke.observe.p95Ms).toBeGreaterThanOrEqual(r.smoke.observe.p50Ms);
    expect(r.checks.at(-1)).toEqual({
      name: "smoke",
      status: "ok",
      detail: expect.stringMatching(/^4 cycles on mock-1: observe p50 [\d.]+ ms, no taps \(--tap X,Y to time one\)$/),
      fix: null,
    });
    const text = await cli(["doctor", "--smoke", "-n", "3"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /\nsmoke: 3 observe cycles on mock-1\n {2}observe {2}p50 \d+\.\d ms {2}p95 \d+\.\d ms\n {2}tap {6}none: nothing on the device was touched \(--tap X,Y times a tap there\)\n$/,
    );
  });

  test("--smoke --tap X,Y also taps there in each cycle and times it; a malformed point is a usage error", async () => {
    const stat = { p50Ms: expect.any(Number), p95Ms: expect.any(Number) };
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const r = await cliJson(["doctor", "--smoke", "-n", "3", "--tap", "640,300"], env);
    expect(r.smoke).toEqual(expect.objectContaining({ cycles: 3, tap: stat, tapAt: { x: 640, y: 300 } }));
    expect(r.smoke.report.tapOutput).toEqual({ accepted: true, x: 640, y: 300 });
    expect(r.smoke.tap.p95Ms).toBeGreaterThanOrEqual(r.smoke.tap.p50Ms);
    const { sessions } = await cliJson(["sessions"], env);
    expect(sessions.map((x: { actions: number }) => x.actions)).toEqual([3]);
    const text = await cli(["doctor", "--smoke", "-n", "2", "--tap", "640,300"], env);
    expect(text.stdout).toMatch(
      /\nsmoke: 2 observe \+ tap cycles on mock-1\n {2}observe {2}p50 \d+\.\d ms {2}p95 \d+\.\d ms\n {2}tap {6}p50 \d+\.\d ms {2}p95 \d+\.\d ms {2}\(at 640,300\)\n$/,
    );
    for (const [args, message] of [
      [
        ["doctor", "--smoke", "--tap", "640"],
        "devicerail: option '--tap <x,y>' argument '640' is invalid. expected X,Y in screen pixels, e.g. 540,1200",
      ],
      [["doctor", "--tap", "1,2"], "devicerail: -d, -n and --tap belong to --smoke"],
    ] as const) {
      const bad = await cli([...args], env);
      expect([bad.code, bad.stdout, bad.stderr.split("\n")[0]]).toEqual([2, "", message]);
    }
  });
});

test("export's folder is self-contained: its README names the files", async () => {
  const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
  await cliJson(["screenshot", "-o", join(tempCwd(), "s.png")], env);
  const {
    sessions: [session],
  } = await cliJson(["sessions"], env);
  const out = join(tempCwd(), "e");
  const r = await cli(["export", session.id, "-o", out], env);
  expect([r.code, r.stdout]).toEqual([0, `${out}: 3 events, 2 evidence file(s)\n`]);
  const readme = readFileSync(join(out, "README.txt"), "utf8");
  expect(readme).toStartWith(`DeviceRail Session ${session.id}\n`);
  expect(readme).toContain("events.ndjson   the Session's events");
});
