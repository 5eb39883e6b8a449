/**
 * The daemon's memory while it renders or reads a large Session. Two Sessions of about 150 MB
 * each (1 GB each with --gb) on the Mock: one recorded over JSON-RPC as the issue's client did it
 * (inputText actions of 900,000 characters, whose arguments the log keeps, and an observation every
 * 20 actions so there are screenshots and trees), one by an MCP client (session_verdict with
 * 16,000-character summaries), whose Session resource only that client may read. Then, one path at
 * a time, the daemon's peak RSS (VmHWM, reset through /proc/PID/clear_refs before each; Linux,
 * as root or the daemon's owner) against its RSS just before, for:
 *
 *   live report   GET /sessions/{id}/report, the page read to its end
 *   devicerail report --junit   this process as the CLI (HTML file and JUnit XML)
 *   HTTP export   GET /sessions/{id}/export, the whole Session
 *   RPC export    session.export pages through a CLI client
 *   MCP resource  devicerail://sessions/{id}, every page through the official SDK client
 *
 *   bun scripts/bench/report-memory.ts [--gb]
 *
 * Last line: `report-memory: <size> MB Session, peak extra X MiB (<path>), ratio R` where R is the
 * largest extra against the 64 MiB ceiling (≤ 1 passes).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CoreClient, openClient } from "../../src/cli/client.ts";
import { reportCommand } from "../../src/cli/report-command.ts";
import { ROOT, daemonCommand } from "../../test/support/daemon.ts";
import { listeningPort } from "../../test/support/tcp-client.ts";

const GB = process.argv.includes("--gb");
const TARGET_BYTES = (GB ? 1_000 : 150) * 1_000_000;
const CEILING_MIB = 64;
const TEXT_CHARS = 900_000;
const SUMMARY_CHARS = 16_000;
const MIB = 1_048_576;

const dataDir = mkdtempSync(join(tmpdir(), "devicerail-bench-report-memory-"));
const out = mkdtempSync(join(tmpdir(), "devicerail-bench-report-files-"));
const env = {
  ...process.env,
  DEVICERAIL_DATA_DIR: dataDir,
  DEVICERAIL_LOG_LEVEL: "error",
  DEVICERAIL_ANDROID: "off",
  DEVICERAIL_IOS: "off",
  DEVICERAIL_MOCK_DEVICES: "2",
};
Object.assign(process.env, { DEVICERAIL_DATA_DIR: dataDir, DEVICERAIL_ANDROID: "off", DEVICERAIL_IOS: "off" });

const kib = (pid: number, field: "VmRSS" | "VmHWM") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const mib = (bytes: number) => (bytes / MIB).toFixed(1);

/** `serve` on the data directory: a first one records the JSON-RPC Session, a fresh one is measured. */
async function startDaemon() {
  const proc = Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
    cwd: ROOT,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  return { proc, base: `http://127.0.0.1:${await listeningPort(proc.stdout)}` };
}
let daemon = await startDaemon();
let { base } = daemon;
let pid = daemon.proc.pid;

/** The daemon's RSS once it has settled: the lowest of a second's samples. */
async function settled(): Promise<number> {
  let low = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i++) {
    low = Math.min(low, kib(pid, "VmRSS"));
    await Bun.sleep(100);
  }
  return low;
}

let idle = 0;

interface Row {
  path: string;
  before: number;
  peak: number;
  ms: number;
  detail: string;
}
const rows: Row[] = [];

async function measure(path: string, work: () => Promise<string>): Promise<void> {
  const before = await settled();
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const t = performance.now();
  const detail = await work();
  const ms = performance.now() - t;
  const peak = Math.max(kib(pid, "VmHWM"), before);
  rows.push({ path, before, peak, ms, detail });
  process.stdout.write(
    `${path}: before ${mib(before)} MiB, peak ${mib(peak)} MiB, extra ${mib(peak - before)} MiB (${mib(peak - idle)} above idle), ${(ms / 1000).toFixed(1)} s (${detail})\n`,
  );
}

/** The issue's client: large typed texts, the arguments of which the log keeps. */
async function recordRpc(c: CoreClient, bytes = TARGET_BYTES): Promise<string> {
  await c.call("device.select", { deviceId: "mock-1" });
  await c.call("device.connect");
  const { id } = await c.call("session.start");
  const text = "x".repeat(TEXT_CHARS);
  for (let i = 0; i * TEXT_CHARS < bytes; i++) {
    if (i % 20 === 0) await c.call("device.observe");
    await c.call("device.execute", { id: crypto.randomUUID(), name: "inputText", arguments: { text } });
  }
  await c.call("session.end", { outcome: "completed" });
  return id;
}

async function mcpClient(): Promise<Client> {
  const client = new Client({ name: "bench-report-memory", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

/** An MCP client's Session of long verdicts, 16 calls at a time. */
async function recordMcp(client: Client): Promise<string> {
  const summary = "v".repeat(SUMMARY_CHARS);
  const first = await client.callTool({ name: "device_observe", arguments: { deviceId: "mock-2", screenshot: false } });
  const sessionId = (first.structuredContent as { sessionId: string }).sessionId;
  const calls = Math.ceil(TARGET_BYTES / SUMMARY_CHARS);
  for (let i = 0; i < calls; i += 16)
    await Promise.all(
      Array.from({ length: Math.min(16, calls - i) }, (_, k) =>
        client.callTool({
          name: "session_verdict",
          arguments: { deviceId: "mock-2", status: "pass", summary: `${i + k} ${summary}` },
        }),
      ),
    );
  return sessionId;
}

/** Runs `work` with this process's stdout silenced (the report command prints its summary). */
async function silently(work: () => Promise<unknown>): Promise<void> {
  const real = process.stdout.write.bind(process.stdout);
  process.stdout.write = () => true;
  try {
    await work();
  } finally {
    process.stdout.write = real;
  }
}

/** Reads a body to its end, counting its bytes. */
async function drain(res: Response): Promise<number> {
  if (!res.ok || !res.body) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  return bytes;
}

const dbBytes = () =>
  readdirSync(dataDir)
    .filter((f) => /\.(sqlite|db)(-wal)?$/.test(f))
    .reduce((n, f) => n + statSync(join(dataDir, f)).size, 0);

let c = await openClient(env, { timeoutMs: 120_000 });
let mcp: Client | null = null;
try {
  process.stdout.write(`daemon idle with an empty store: ${mib(await settled())} MiB RSS\n`);
  // A small Session first: the fresh daemon reads it once on every path before it is measured,
  // so what loading and compiling that code costs once is part of idle, not of a read.
  const small = await recordRpc(c, TEXT_CHARS + 1);
  c.close();
  c = await openClient(env, { timeoutMs: 120_000 });
  let t = performance.now();
  const rpcSession = await recordRpc(c);
  process.stdout.write(
    `recorded ${rpcSession} over JSON-RPC in ${((performance.now() - t) / 1000).toFixed(1)} s; database ${mib(dbBytes())} MiB\n`,
  );
  // What recording left in the daemon is no part of reading: the Session is read by a fresh daemon.
  c.close();
  daemon.proc.kill("SIGTERM");
  await daemon.proc.exited;
  daemon = await startDaemon();
  ({ base } = daemon);
  pid = daemon.proc.pid;
  c = await openClient(env, { timeoutMs: 120_000 });
  await drain(await fetch(`${base}/sessions/${small}/report`));
  await drain(await fetch(`${base}/sessions/${small}/export`));
  await silently(() =>
    reportCommand([small], { output: join(out, "small.html"), junit: join(out, "small.xml"), json: true }),
  );
  idle = await settled();
  process.stdout.write(
    `fresh daemon idle with the Session stored, after one small report and export: ${mib(idle)} MiB RSS\n`,
  );

  await measure(
    "live report (GET /sessions/{id}/report)",
    async () => `${mib(await drain(await fetch(`${base}/sessions/${rpcSession}/report`)))} MiB page`,
  );
  await measure("devicerail report --junit (HTML and JUnit files)", async () => {
    const html = join(out, "report.html");
    const junit = join(out, "junit.xml");
    const cli = kib(process.pid, "VmRSS");
    await silently(() => reportCommand([rpcSession], { output: html, junit, json: true }));
    return `${mib(statSync(html).size)} MiB HTML, ${mib(statSync(junit).size)} MiB JUnit; this CLI process went from ${mib(cli)} to ${mib(kib(process.pid, "VmHWM"))} MiB at most`;
  });
  await measure(
    "HTTP export (GET /sessions/{id}/export)",
    async () => `${mib(await drain(await fetch(`${base}/sessions/${rpcSession}/export`)))} MiB JSON`,
  );
  await measure("RPC export (session.export pages)", async () => {
    let after: number | undefined;
    let events = 0;
    for (;;) {
      const page = await c.call("session.export", {
        sessionId: rpcSession,
        limit: 1000,
        ...(after ? { afterSequence: after } : {}),
      });
      events += page.events.length;
      if (page.nextAfterSequence === undefined) return `${events} events`;
      after = page.nextAfterSequence;
    }
  });

  // An MCP client reads only its own Session: it records one on this daemon, and is measured from there.
  const client = await mcpClient();
  mcp = client;
  t = performance.now();
  const mcpSession = await recordMcp(client);
  process.stdout.write(
    `recorded ${mcpSession} over MCP in ${((performance.now() - t) / 1000).toFixed(1)} s; database ${mib(dbBytes())} MiB\n`,
  );
  await measure("MCP resource (devicerail://sessions/{id}, every page)", async () => {
    let uri: string | undefined = `devicerail://sessions/${mcpSession}`;
    let pages = 0;
    let bytes = 0;
    while (uri) {
      const text: string = ((await client.readResource({ uri })).contents[0] as { text: string }).text;
      bytes += text.length;
      pages++;
      uri = (JSON.parse(text) as { next?: string }).next;
    }
    return `${pages} pages, ${mib(bytes)} MiB`;
  });
  await measure(
    "live report of the MCP Session",
    async () => `${mib(await drain(await fetch(`${base}/sessions/${mcpSession}/report`)))} MiB page`,
  );

  const worst = rows.reduce((a, b) => (b.peak - b.before > a.peak - a.before ? b : a));
  const extra = (worst.peak - worst.before) / MIB;
  process.stdout.write(
    `report-memory: ${GB ? 1000 : 150} MB Sessions, idle ${mib(idle)} MiB, peak extra ${extra.toFixed(1)} MiB (${worst.path}), ratio ${(extra / CEILING_MIB).toFixed(2)} of the ${CEILING_MIB} MiB ceiling\n`,
  );
} finally {
  c.close();
  await mcp?.close().catch(() => {});
  daemon.proc.kill("SIGTERM");
  await daemon.proc.exited;
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
