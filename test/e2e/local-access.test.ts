/**
 * Only the owner reaches the daemon the CLI starts: another local user (`nobody`, through setpriv)
 * finds its TCP port as anyone can (/proc/net/tcp is world-readable) and tries every route and
 * transport on it, and gets refused each time, while the owner's commands keep working. The Unix
 * socket, with its modes deliberately loosened, still closes another uid's connection unread.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { type DaemonRecord, readRecord } from "../../src/server/daemon-record.ts";
import { helloParams, tempDataDir } from "../support/daemon.ts";
import { until } from "../support/wait.ts";
import { cli, cliJson } from "../cli/run.ts";
import { ServeDaemon, within } from "./serve-daemon.ts";

const NOBODY = 65_534;
const setpriv = Bun.which("setpriv");
const asRoot = process.getuid?.() === 0;
const usable = asRoot && setpriv !== null;
if (!usable && process.env.CI === "true")
  throw new Error(
    `the local-access tests must run as root with setpriv (util-linux) under CI (root: ${asRoot}, setpriv: ${setpriv})`,
  );

/** Attempts another uid made that the daemon refused, summed over the file for the closing figure. */
let refusedAttempts = 0;
afterAll(() => {
  if (usable) console.log(`local-access: ${refusedAttempts} attempts by another local user (uid ${NOBODY}) refused`);
});

/**
 * What `nobody` gets from each try, as { name: what came back }: an HTTP status, or for a raw
 * stream the bytes answered before the daemon closed it. Runs as a separate process so its uid is
 * really another one, with an environment that holds nothing of the owner's.
 */
const ATTACKER = String.raw`
const t = JSON.parse(process.env.TARGET);
const out = { pid: process.pid, uid: process.getuid(), results: {} };
const stream = (connect, first) => new Promise((resolve) => {
  let bytes = "";
  const settle = () => resolve({ answered: bytes.length, closed: true });
  // An answer is all it takes to be let in: the first one ends the try.
  connect({ socket: { open(s) { if (first) s.write(first); }, data(s, c) { bytes += new TextDecoder().decode(c); resolve({ answered: bytes.length, closed: false }); s.terminate(); }, close: settle, error: settle } })
    // A connection reset as it is set up is the daemon closing it too, before a byte was answered.
    .catch((e) => resolve(e.code === "ECONNRESET" ? { answered: bytes.length, closed: true } : { error: e.code ?? String(e) }));
  setTimeout(() => resolve({ answered: bytes.length, closed: false }), 8000).unref();
});
const hello = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: t.hello }) + "\n";
const base = "http://127.0.0.1:" + t.port;
const status = async (path, init = {}) => { try { return (await fetch(base + path, { ...init, signal: AbortSignal.timeout(5000) })).status; } catch (e) { return String(e); } };
const json = { "Content-Type": "application/json" };
if (t.port) {
  const tcp = (o) => Bun.connect({ hostname: "127.0.0.1", port: t.port, ...o });
  out.results["tcp ndjson hello"] = await stream(tcp, hello);
  out.results["tcp ndjson hello with a guessed token"] = await stream(tcp, "DEVICERAIL-TOKEN " + "0".repeat(43) + "\n" + hello);
  out.results["GET /devices"] = await status("/devices");
  out.results["GET /devices/{id}/screenshot.png"] = await status("/devices/" + t.device + "/screenshot.png");
  out.results["GET /devices/{id}/ui"] = await status("/devices/" + t.device + "/ui");
  out.results["POST /devices/{id}/actions/tap"] = await status("/devices/" + t.device + "/actions/tap", { method: "POST", headers: json, body: JSON.stringify({ x: 1, y: 1 }) });
  out.results["GET /sessions"] = await status("/sessions");
  out.results["GET /sessions/{id}/events"] = await status("/sessions/" + t.session + "/events");
  out.results["GET /sessions/{id}/export"] = await status("/sessions/" + t.session + "/export");
  out.results["GET /sessions/{id}/report"] = await status("/sessions/" + t.session + "/report");
  out.results["GET /evidence/{sha}"] = await status("/evidence/" + t.sha);
  out.results["GET /rpc WebSocket upgrade"] = await status("/rpc", { headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" } });
  out.results["POST /mcp initialize"] = await status("/mcp", { method: "POST", headers: { ...json, Accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) });
  out.results["GET /devices with a guessed bearer token"] = await status("/devices", { headers: { Authorization: "Bearer " + "0".repeat(43) } });
}
if (t.socket) out.results["unix ndjson hello"] = await stream((o) => Bun.connect({ unix: t.socket, ...o }), hello);
if (t.burst) {
  const all = await Promise.all(Array.from({ length: t.burst }, () => stream((o) => Bun.connect({ unix: t.socket, ...o }), hello)));
  out.results["unix burst answered"] = all.filter((r) => r.answered !== 0 || r.closed !== true).length;
}
console.log(JSON.stringify(out));
`;

interface Attack {
  pid: number;
  uid: number;
  results: Record<string, number | string | { answered?: number; closed?: boolean; error?: string }>;
}

async function asNobody(target: {
  port?: number;
  socket?: string;
  burst?: number;
  session?: string;
  sha?: string;
  device?: string;
}): Promise<Attack> {
  const child = Bun.spawn(
    [setpriv as string, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", ATTACKER],
    {
      stdout: "pipe",
      stderr: "pipe",
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: "/tmp",
        TARGET: JSON.stringify({ ...target, hello: helloParams() }),
      },
    },
  );
  const [out, err, code] = await within(
    Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]),
    60_000,
    "the attacker as nobody did not finish",
  );
  if (code !== 0) throw new Error(`the attacker as nobody exited ${code}: ${err}`);
  return JSON.parse(out) as Attack;
}

/** The TCP ports listening on 127.0.0.1, as any local user reads them. */
function listeningPorts(): number[] {
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1]?.startsWith("0100007F:") && f[3] === "0A")
    .map((f) => Number.parseInt((f[1] as string).split(":")[1] as string, 16));
}

const suite = usable ? describe : describe.skip;

suite("the daemon the CLI starts, seen by another local user", () => {
  test("every route and transport on its TCP port refuses another user while the owner's commands work, when the daemon was started by `daemon start`", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const started = await cliJson(["daemon", "start"], env);
    const record = readRecord(env.DEVICERAIL_DATA_DIR) as DaemonRecord;
    expect(record.tokenFile).toBe(join(env.DEVICERAIL_DATA_DIR, "daemon.token"));
    expect(statSync(record.tokenFile as string).mode & 0o777).toBe(0o600);
    const token = readFileSync(record.tokenFile as string, "utf8").trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The record is what tools read to find the daemon: it names the file, never the secret.
    expect(readFileSync(join(env.DEVICERAIL_DATA_DIR, "listen.json"), "utf8")).not.toContain(token);
    expect(listeningPorts()).toContain(record.port as number);
    expect(started.listeners).toEqual({
      socket: join(env.DEVICERAIL_DATA_DIR, "daemon.sock"),
      tcp: `127.0.0.1:${record.port}`,
      tokenFile: record.tokenFile,
    });
    expect((await cli(["daemon", "status"], env)).stdout).toContain(
      `  tcp             127.0.0.1:${record.port} (requires the token in ${record.tokenFile})\n`,
    );

    // Something worth stealing: a Session with an action and a screenshot.
    const shot = await cliJson(["screenshot", "-o", join(env.DEVICERAIL_DATA_DIR, "shot.png")], env);
    expect((await cli(["tap", "640", "148"], env)).code).toBe(0);
    const before = (await cliJson(["sessions"], env)).sessions;
    expect(before.length).toBe(2);

    const attack = await asNobody({
      port: record.port,
      session: before[0].id,
      sha: shot.observation.screenshot.sha256,
      device: "mock-1",
    });
    expect(attack.uid).toBe(NOBODY);
    const refusedStream = { answered: 0, closed: true };
    expect(attack.results).toEqual({
      "tcp ndjson hello": refusedStream,
      "tcp ndjson hello with a guessed token": refusedStream,
      "GET /devices": 401,
      "GET /devices/{id}/screenshot.png": 401,
      "GET /devices/{id}/ui": 401,
      "POST /devices/{id}/actions/tap": 401,
      "GET /sessions": 401,
      "GET /sessions/{id}/events": 401,
      "GET /sessions/{id}/export": 401,
      "GET /sessions/{id}/report": 401,
      "GET /evidence/{sha}": 401,
      "GET /rpc WebSocket upgrade": 401,
      "POST /mcp initialize": 401,
      "GET /devices with a guessed bearer token": 401,
    });
    refusedAttempts += Object.keys(attack.results).length;

    // The owner's commands still work, and nothing the other user tried left a trace.
    expect((await cli(["devices"], env)).stdout).toStartWith("mock-1\t");
    expect((await cli(["tap", "640", "220"], env)).code).toBe(0);
    const after = (await cliJson(["sessions"], env)).sessions;
    expect(after.map((s: { id: string }) => s.id).slice(1)).toEqual(before.map((s: { id: string }) => s.id));
    expect(after[0].actions).toBe(1);

    // The token reached no argv, no environment of the daemon, and no log line.
    expect(readFileSync(`/proc/${started.pid}/cmdline`, "utf8")).not.toContain(token);
    expect(readFileSync(`/proc/${started.pid}/environ`, "utf8")).not.toContain(token);
    expect(readFileSync(join(env.DEVICERAIL_DATA_DIR, "daemon.log"), "utf8")).not.toContain(token);

    expect((await cliJson(["daemon", "stop"], env)).stopped).toBe(true);
    expect(existsSync(record.tokenFile as string)).toBe(false);
  }, 120_000);

  test("a connection from another uid is closed before any answer and logged once with its uid and pid, when the socket's modes let it connect", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    await cliJson(["daemon", "start"], env);
    const socket = (readRecord(env.DEVICERAIL_DATA_DIR) as DaemonRecord).socket as string;
    // Without the peer check, these modes would let any user in: this is the check on its own.
    expect(dirname(socket)).toBe(env.DEVICERAIL_DATA_DIR);
    chmodSync(env.DEVICERAIL_DATA_DIR, 0o777);
    chmodSync(socket, 0o666);

    const attack = await asNobody({ socket });
    expect(attack.results).toEqual({ "unix ndjson hello": { answered: 0, closed: true } });
    refusedAttempts += 1;

    const log = join(env.DEVICERAIL_DATA_DIR, "daemon.log");
    const refusals = () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes("Unix socket connection from another user refused"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await until("the refusal logged", () => refusals().length > 0);
    expect(refusals().map(({ peerUid, peerGid, peerPid }) => ({ peerUid, peerGid, peerPid }))).toEqual([
      { peerUid: NOBODY, peerGid: NOBODY, peerPid: attack.pid },
    ]);

    // A flood of such connections is refused just the same, without a log line for each.
    const BURST = 50;
    const flood = await asNobody({ socket, burst: BURST });
    expect(flood.results).toEqual({ "unix ndjson hello": { answered: 0, closed: true }, "unix burst answered": 0 });
    refusedAttempts += BURST + 1;
    const summed = () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes("more Unix socket connections from other users refused"))
        .reduce((n, l) => n + (JSON.parse(l) as { refused: number }).refused, 0);
    await until("every refusal logged or counted", () => refusals().length + summed() === BURST + 2, 10_000);
    // Ten lines a second at most: the burst spans one or two such windows.
    expect(refusals().length - 1).toBeLessThanOrEqual(2 * 10);

    // The owner still gets in on the same socket.
    const r = await cli(["devices"], env);
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(/^mock-1\t/)]);
  }, 60_000);
});

describe("serve --listen without a token", () => {
  test("warns on stderr that every local user can reach it, and doctor flags the running daemon, when no token is set", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    expect(d.stderr).toContain(
      "devicerail: warning: the TCP listener 127.0.0.1:0 has no token, so every local user of this machine can reach it",
    );
    const doctor = await cliJson(["doctor"], { DEVICERAIL_DATA_DIR: d.dataDir });
    expect(doctor.checks.find((c: { name: string }) => c.name === "daemon TCP port")).toEqual({
      name: "daemon TCP port",
      status: "warn",
      detail: `the daemon (pid ${d.proc.pid}) serves 127.0.0.1:${d.port} with no token: every local user of this machine can list, export and delete its Sessions and drive its devices`,
      fix: "restart it with a token: `devicerail daemon stop` (commands then start one that requires <data dir>/daemon.token), or set DEVICERAIL_TOKEN for serve --listen",
    });
  }, 30_000);

  test("says nothing of the kind and doctor finds the port guarded, when DEVICERAIL_TOKEN is set", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], {
      DEVICERAIL_TOKEN: "a-token-of-the-users-own-choice",
    });
    expect(d.stderr).not.toContain("warning");
    const doctor = await cliJson(["doctor"], { DEVICERAIL_DATA_DIR: d.dataDir });
    expect(doctor.checks.find((c: { name: string }) => c.name === "daemon TCP port")).toEqual({
      name: "daemon TCP port",
      status: "ok",
      detail: `127.0.0.1:${d.port} requires a token (DEVICERAIL_TOKEN)`,
      fix: null,
    });
  }, 30_000);
});

describe("the daemon the CLI starts with DEVICERAIL_TOKEN set", () => {
  test("uses the user's token on both listeners and writes no token file, and commands with it work, when DEVICERAIL_TOKEN is set", async () => {
    const token = "the-users-own-token-0123456789";
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_TOKEN: token };
    await cliJson(["daemon", "start"], env);
    const record = readRecord(env.DEVICERAIL_DATA_DIR) as DaemonRecord;
    expect([record.tokenFile, existsSync(join(env.DEVICERAIL_DATA_DIR, "daemon.token"))]).toEqual([undefined, false]);
    expect((await cli(["tap", "1", "1"], env)).code).toBe(0);
    const http = await fetch(`http://127.0.0.1:${record.port}/devices`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(http.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${record.port}/devices`)).status).toBe(401);
    // Without the token a command cannot reach it, and says what to set.
    const without = await cli(["devices"], { DEVICERAIL_DATA_DIR: env.DEVICERAIL_DATA_DIR });
    expect([without.code, without.stderr]).toEqual([
      1,
      expect.stringContaining("(if it requires a token, set DEVICERAIL_TOKEN)"),
    ]);
  }, 60_000);
});

describe("sessions --open", () => {
  test("prints and opens a single-use ticket for the live page, never the token, when the daemon's port requires a token", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    expect((await cli(["tap", "1", "1"], env)).code).toBe(0);
    const [session] = (await cliJson(["sessions"], env)).sessions;
    // No browser opener on PATH: the command says where to go instead.
    const r = await cli(["sessions", "--open", session.id], { ...env, PATH: "/nonexistent" });
    const port = (readRecord(env.DEVICERAIL_DATA_DIR) as DaemonRecord).port;
    const url = r.stdout.trim();
    expect(url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/sessions/${session.id}/report\\?ticket=[A-Za-z0-9_-]{32}$`),
    );
    expect([r.code, r.stderr]).toEqual([0, `devicerail: could not start a browser; open ${url}\n`]);
    const token = readFileSync(join(env.DEVICERAIL_DATA_DIR, "daemon.token"), "utf8").trim();
    expect(`${r.stdout}${r.stderr}`).not.toContain(token);
    // The ticket is a key to that page only, and once: another user who read it from an argv gets less than the token.
    const first = await fetch(url, { redirect: "manual" });
    expect([first.status, first.headers.get("location")]).toEqual([
      303,
      expect.stringMatching(new RegExp(`^/sessions/${session.id}/report\\?view=`)),
    ]);
    expect((await fetch(url, { redirect: "manual" })).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/sessions`)).status).toBe(401);
    await cli(["daemon", "stop"], env);
  }, 60_000);

  test("prints and opens the live page's URL when the daemon's port requires no token", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const env = { DEVICERAIL_DATA_DIR: d.dataDir, PATH: "/nonexistent" };
    expect((await cli(["tap", "1", "1"], env)).code).toBe(0);
    const [session] = (await cliJson(["sessions"], env)).sessions;
    const r = await cli(["sessions", "--open", session.id], env);
    const url = `http://127.0.0.1:${d.port}/sessions/${session.id}/report`;
    expect([r.code, r.stdout, r.stderr]).toEqual([
      0,
      `${url}\n`,
      `devicerail: could not start a browser; open ${url}\n`,
    ]);
  }, 60_000);
});

describe("the token file of the daemon the CLI starts", () => {
  test("start-up fails naming the file and the fix when the token cannot be written", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    mkdirSync(join(env.DEVICERAIL_DATA_DIR, "daemon.token"));
    const r = await cli(["devices"], env);
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toContain("the devicerail daemon could not start (exit 1)");
    expect(r.stderr).toContain(`cannot write the token file ${join(env.DEVICERAIL_DATA_DIR, "daemon.token")}: `);
    expect(r.stderr).toContain("free space in the data directory or fix its permissions");
    // Nothing was left listening without its token.
    expect(readRecord(env.DEVICERAIL_DATA_DIR)).toBeNull();
  }, 30_000);
});
