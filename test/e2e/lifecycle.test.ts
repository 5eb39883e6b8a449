import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, daemonEnv, spawnDaemon } from "../support/daemon.ts";
import { daemonOnUnreadFifo } from "../support/unread-fifo.ts";

const describeLines = (n: number) =>
  Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"system.describe"}\n`).join("");

/** Exit code, or "still running" when the process did not exit within `ms`. */
const exitWithin = (proc: { exited: Promise<number> }, ms: number) =>
  Promise.race([proc.exited, Bun.sleep(ms).then(() => "still running" as const)]);

/** What is left of a stream that an earlier reader let go of, as text. */
async function restOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
  return text;
}

describe("daemon lifecycle on stdio", () => {
  test("end of input shuts down gracefully with exit 0", async () => {
    await using d = spawnDaemon();
    await d.hello();
    expect(await d.close()).toBe(0);
  });

  test("listen.json names the stdio daemon (stdio: true, no endpoints) while it runs, and is removed when it stops", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const file = join(d.dataDir, "listen.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      pid: d.proc.pid,
      version: expect.any(String),
      startedAtMs: expect.any(Number),
      state: "serving",
      stdio: true,
    });
    expect(await d.close()).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const)
    test(`${signal} shuts down gracefully with exit 0 while stdin stays open`, async () => {
      await using d = spawnDaemon({ env: { DEVICERAIL_LOG_LEVEL: "info" } });
      await d.hello();
      d.proc.kill(signal);
      expect(await d.exited).toBe(0);
      expect(await d.nextLine()).toBeNull();
      expect(d.stderr).toContain('"msg":"devicerail stopped"');
    });

  test("a client that closes its end of stdout ends the connection with exit 0 instead of spinning", async () => {
    const f = daemonOnUnreadFifo(describeLines(50_000));
    try {
      // Serving: its answers now go to a reader that goes away.
      await f.serving();
      f.closeReader();
      expect(await exitWithin(f.proc, 5_000)).toBe(0);
      expect(await restOf(f.proc.stderr as ReadableStream<Uint8Array>)).toContain("stdout closed by the client");
    } finally {
      f.cleanup();
    }
  }, 15_000);

  test("SIGTERM exits within the flush grace when the client is attached but never reads", async () => {
    const f = daemonOnUnreadFifo(describeLines(50_000));
    try {
      await f.serving();
      // Enough time to fill the pipe nobody reads and park on its backpressure. Kept as a delay: the
      // daemon does not announce that it parked, and the pipe cannot be looked into without reading it.
      await Bun.sleep(300);
      const t0 = performance.now();
      f.proc.kill("SIGTERM");
      expect(await exitWithin(f.proc, 8_000)).toBe(0);
      expect(performance.now() - t0).toBeLessThan(7_000);
    } finally {
      f.cleanup();
    }
  }, 15_000);

  test("a request answered before EOF is flushed before exit", async () => {
    await using d = spawnDaemon();
    d.writeRaw('{"jsonrpc":"2.0","id":"last","method":"system.describe"}');
    d.proc.stdin.end();
    expect(await d.next()).toEqual({
      jsonrpc: "2.0",
      id: "last",
      error: expect.objectContaining({ code: -32001 }),
    });
    expect(await d.exited).toBe(0);
  });

  test("stdout carries protocol frames only and logs go to stderr as JSON when debug logging is on", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_LOG_LEVEL: "debug" } });
    await d.hello();
    await d.call("system.describe");
    await d.call("nope");
    d.writeRaw("garbage\n");
    await d.next();
    expect(await d.close()).toBe(0);
    const lines: string[] = [];
    for (let l = await d.nextLine(); l !== null; l = await d.nextLine()) lines.push(l);
    expect(lines).toEqual([]);
    const logs = d.stderr.trim().split("\n");
    expect(logs.length).toBeGreaterThanOrEqual(2);
    for (const l of logs)
      expect(JSON.parse(l)).toEqual(expect.objectContaining({ level: expect.any(Number), msg: expect.any(String) }));
  });

  test("an invalid environment setting fails start-up with exit 2 and a clear message", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_SCREENSHOT_POLICY: "sometimes" } });
    expect(await d.exited).toBe(2);
    expect(d.stderr).toContain("DEVICERAIL_SCREENSHOT_POLICY");
  });

  test("--version prints the version and --help the usage on stdout with exit 0", async () => {
    for (const [args, pattern] of [
      [["--version"], /^\d+\.\d+\.\d+(\+[0-9a-z]+)?\n$/],
      [["--help"], /Usage:\n\s+devicerail serve/],
      [["serve", "--help"], /^Usage: devicerail serve/],
    ] as const) {
      await using d = spawnDaemon({ args: [...args] });
      expect(await d.exited).toBe(0);
      const out: string[] = [];
      for (let l = await d.nextLine(); l !== null; l = await d.nextLine()) out.push(l);
      expect(`${out.join("\n")}\n`).toMatch(pattern);
    }
  });

  test("bun src/main.ts serve works from a checkout", async () => {
    const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
      cwd: ROOT,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
      env: daemonEnv(),
    });
    proc.stdin.write('{"jsonrpc":"2.0","id":1,"method":"system.describe"}\n');
    proc.stdin.end();
    const out = await new Response(proc.stdout).text();
    expect(JSON.parse(out).error.data.code).toBe("handshake_required");
    expect(await proc.exited).toBe(0);
  });

  test("an unknown command exits 2 with the usage on stderr", async () => {
    await using d = spawnDaemon({ args: ["frobnicate"] });
    expect(await d.exited).toBe(2);
    expect(d.stderr).toContain("unknown command");
  });
});
