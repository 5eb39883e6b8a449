/**
 * `devicerail serve` on stdio as MCP hosts and the protocol README's examples run it: piped NDJSON
 * until EOF is answered in full, and it works while the data directory's background daemon runs
 * (stdio is relayed to that daemon, whose hello still reports transport stdio).
 */
import { describe, expect, test } from "bun:test";
import { isAlive } from "../../src/server/daemon-record.ts";
import { tempDataDir } from "../support/daemon.ts";
import { helloParams } from "../support/hello.ts";
import { cli, cliJson } from "./run.ts";

const line = (id: number | string, method: string, extra: object = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, ...extra });
const hello = line(1, "system.hello", {
  params: helloParams({ optional: ["events.snapshot.v1", "request.control.v1"] }),
});
const tap = (timeoutMs: number) => ({
  timeoutMs,
  params: { id: "0d9c2f0e-7d7b-4f7e-9a53-2b8f3f7f6a10", name: "tap", arguments: { x: 640, y: 360 } },
});
/** The first exchange of docs/protocol/README.md, sent in one go. */
const EXAMPLE = [
  hello,
  line(2, "session.start"),
  line(3, "device.connect"),
  line(4, "device.execute", tap(5000)),
  line(5, "session.end"),
];

/** The answers on stdout, by id. */
function byId(stdout: string): Record<string, any> {
  const out: Record<string, any> = {};
  for (const l of stdout.split("\n").filter((l) => l !== "")) {
    const r = JSON.parse(l);
    out[String(r.id)] = r;
  }
  return out;
}

/** Runs `devicerail serve` with `lines` as all of stdin. */
const serve = (lines: string[], env: Record<string, string>) => cli(["serve"], env, undefined, `${lines.join("\n")}\n`);

/** Both ways serve runs on stdio: in-process (no daemon runs), and relayed to a running background daemon. */
const MODES = ["in-process", "relayed"] as const;
async function dataDirFor(
  mode: (typeof MODES)[number],
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const env = { DEVICERAIL_DATA_DIR: tempDataDir(), ...extra };
  if (mode === "relayed") expect((await cliJson(["daemon", "start"], env)).running).toBe(true);
  return env;
}

describe("devicerail serve on stdio", () => {
  for (const mode of MODES) {
    test(`${mode}: the protocol README's example piped in one go gets every answer before serve exits`, async () => {
      const env = await dataDirFor(mode);
      const r = await serve(EXAMPLE, env);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      const got = byId(r.stdout);
      expect(Object.keys(got).sort()).toEqual(["1", "2", "3", "4", "5"]);
      expect(got["1"].result.transport).toEqual({ kind: "stdio", framing: "ndjson" });
      expect(got["3"].result).toMatchObject({ id: "mock-1", connected: true });
      // The action read before EOF ran to its end: not cancelled by the end of input.
      expect(got["4"].result).toMatchObject({ output: { accepted: true, x: 640, y: 360 } });
      // session.end arrived while the action still ran (docs/protocol/README.md says so).
      expect(got["5"].error.data.code).toBe("session_busy");
    }, 30_000);

    test(`${mode}: a request still running at EOF is answered within its own deadline, not cancelled`, async () => {
      const env = await dataDirFor(mode, { DEVICERAIL_MOCK_HANG: "execute" });
      const t0 = performance.now();
      const r = await serve(
        [hello, line(2, "device.connect"), line(3, "session.start"), line(4, "device.execute", tap(400))],
        env,
      );
      expect([r.code, r.stderr]).toEqual([0, ""]);
      const got = byId(r.stdout);
      expect(got["4"].error.data).toEqual({
        code: "request_timed_out",
        message: "Request timed out after 400 ms",
        retryable: true,
        details: { scope: "request", timeoutMs: 400 },
      });
      expect(performance.now() - t0).toBeGreaterThan(400);
      // Its Session ended with the connection, and the action's end is in its log.
      const sessions = await cliJson(["sessions"], env);
      expect(sessions.sessions[0]).toMatchObject({ id: got["3"].result.id, actions: 1 });
    }, 30_000);

    test(`${mode}: a request without timeoutMs still running at EOF is cancelled after DEVICERAIL_END_OF_INPUT_MS, not waited for forever`, async () => {
      const env = await dataDirFor(mode, { DEVICERAIL_MOCK_HANG: "execute", DEVICERAIL_END_OF_INPUT_MS: "600" });
      const { timeoutMs: _none, ...untimed } = tap(0);
      const t0 = performance.now();
      const r = await serve(
        [
          hello,
          line(2, "device.connect"),
          line(3, "session.start"),
          line(4, "device.execute", untimed),
          line(5, "device.observe", { timeoutMs: 20_000 }),
        ],
        env,
      );
      const elapsed = performance.now() - t0;
      expect([r.code, r.stderr]).toEqual([0, ""]);
      const got = byId(r.stdout);
      // Cancelled as the reference cancels at end of input, but only after the grace.
      expect(got["4"].error.data).toMatchObject({ code: "request_cancelled", details: { reason: "shutdown" } });
      expect(elapsed).toBeGreaterThan(600);
      // A request with its own deadline is not cut short by the grace: observe (not hung) answered.
      expect(got["5"].result).toBeDefined();
      const sessions = await cliJson(["sessions"], env);
      expect(sessions.sessions[0]).toMatchObject({ id: got["3"].result.id, actions: 1 });
    }, 30_000);
  }

  test("while the background daemon runs, serve relays to it byte for byte and leaves it running", async () => {
    const env = await dataDirFor("relayed");
    const { pid } = await cliJson(["daemon", "status"], env);
    // Lines that are answered the same whoever serves them: before the hello, not JSON, CRLF, a letter first.
    const lines = [
      line(1, "system.describe"),
      "garbage",
      `${line(2, "system.hello", { params: { nope: 1 } })}\r`,
      "GET / HTTP/1.1",
      " ",
      "[]",
    ];
    const relayed = await serve(lines, env);
    const inProcess = await serve(lines, { DEVICERAIL_DATA_DIR: tempDataDir() });
    expect([relayed.code, relayed.stderr]).toEqual([0, ""]);
    expect(relayed.stdout.split("\n")).toHaveLength(6);
    expect(relayed.stdout).toBe(inProcess.stdout);
    // The relayed connection's Session was recorded by the daemon, which keeps running.
    const r = await serve([hello, line(2, "session.start"), line(3, "session.end")], env);
    const ended = byId(r.stdout)["3"].result;
    expect(ended).toMatchObject({ state: "ended" });
    expect(isAlive(pid)).toBe(true);
    expect((await cliJson(["sessions"], env)).sessions.map((s: { id: string }) => s.id)).toContain(ended.id);
  }, 30_000);

  test("the background daemon listens on DEVICERAIL_RPC_LISTEN when it is set", async () => {
    // A port that was free a moment ago.
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_RPC_LISTEN: `127.0.0.1:${port}` };
    const started = await cliJson(["daemon", "start"], env);
    expect(started.listeners.tcp).toBe(`127.0.0.1:${port}`);
    // A bad value fails the start with serve's own message.
    const bad = await cli(["daemon", "start"], {
      DEVICERAIL_DATA_DIR: tempDataDir(),
      DEVICERAIL_RPC_LISTEN: "nowhere",
    });
    // A configuration error: exit 2, as for any bad setting (README: exit codes).
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('invalid DEVICERAIL_RPC_LISTEN="nowhere"')]);
  }, 30_000);
});
