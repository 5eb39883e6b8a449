/**
 * RPC throughput and latency of the daemon over stdio against a bare Bun NDJSON echo process,
 * both measured in this run: 100,000 pipelined system.describe calls, then sequential round trips.
 * Last line: `rpc: daemon X req/s, echo Y req/s, ratio R` (R = X / Y; target ≥ 0.5).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HELLO_LINE } from "./hello-line.ts";

const ROOT = join(import.meta.dir, "../..");
// A private data directory, so the run neither collides with a daemon in use nor leaves Sessions behind.
const DATA_DIR = mkdtempSync(join(tmpdir(), "devicerail-bench-"));
process.on("exit", () => rmSync(DATA_DIR, { recursive: true, force: true }));
const PIPELINED = Number(process.env.BENCH_RPC_CALLS ?? 100_000);
const SEQUENTIAL = Number(process.env.BENCH_RPC_SEQUENTIAL ?? 2_000);
const describeLine = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"system.describe"}\n`;
// sessions.list builds a fresh result every call: validated and encoded each time (no memo).
const listLine = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"sessions.list"}\n`;

class Peer {
  readonly proc;
  private reader;
  private pendingLines = 0;
  /** The most recent complete line, decoded lazily: the client must not be the bottleneck. */
  private lastLineBytes = new Uint8Array(0);
  private tail = new Uint8Array(0);

  constructor(cmd: string[]) {
    this.proc = Bun.spawn(cmd, {
      cwd: ROOT,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
      env: { ...process.env, DEVICERAIL_LOG_LEVEL: "error", DEVICERAIL_DATA_DIR: DATA_DIR },
    });
    this.reader = this.proc.stdout.getReader();
  }

  get lastLine(): string {
    return new TextDecoder().decode(this.lastLineBytes);
  }

  write(s: string): void {
    this.proc.stdin.write(s);
    this.proc.stdin.flush();
  }

  /** Waits until `n` more newline-terminated lines have arrived (counted on bytes, not decoded). */
  async readLines(n: number): Promise<void> {
    while (this.pendingLines < n) {
      const { done, value } = await this.reader.read();
      if (done) throw new Error("peer closed stdout");
      let count = 0;
      let last = -1;
      let prev = -1;
      for (let i = value.indexOf(10); i >= 0; i = value.indexOf(10, i + 1)) {
        count++;
        prev = last;
        last = i;
      }
      this.pendingLines += count;
      if (count === 0) {
        this.tail = Buffer.concat([this.tail, value]);
        continue;
      }
      this.lastLineBytes =
        prev >= 0 ? value.slice(prev + 1, last) : Buffer.concat([this.tail, value.subarray(0, last)]);
      this.tail = value.slice(last + 1);
    }
    this.pendingLines -= n;
  }

  async close(): Promise<void> {
    this.proc.stdin.end();
    await this.proc.exited;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function measure(name: string, cmd: string[], handshake: boolean, line = describeLine) {
  const peer = new Peer(cmd);
  if (handshake) {
    peer.write(HELLO_LINE);
    await peer.readLines(1);
  }
  // Warm-up so the JIT has seen the hot path in both processes.
  let warm = "";
  for (let i = 0; i < 5_000; i++) warm += line(i);
  peer.write(warm);
  await peer.readLines(5_000);

  let batch = "";
  for (let i = 0; i < PIPELINED; i++) batch += line(i);
  // Median of three runs, the same for both peers: one run of the echo lasts ~0.1 s, where a
  // single scheduling hiccup on a 2-core machine would decide the ratio.
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    peer.write(batch);
    await peer.readLines(PIPELINED);
    runs.push(performance.now() - t0);
  }
  const pipelinedMs = runs.sort((x, y) => x - y)[1] as number;
  if (handshake && !peer.lastLine.includes('"result"'))
    throw new Error(`unexpected daemon answer: ${peer.lastLine.slice(0, 200)}`);

  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const s = performance.now();
    peer.write(line(i));
    await peer.readLines(1);
    latencies.push(performance.now() - s);
  }
  latencies.sort((a, b) => a - b);
  await peer.close();
  const rps = PIPELINED / (pipelinedMs / 1000);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  console.log(
    `${name}: ${PIPELINED} pipelined in ${pipelinedMs.toFixed(0)} ms (median of 3) = ${rps.toFixed(0)} req/s; sequential p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms`,
  );
  return rps;
}

const daemonCmd = process.env.DEVICERAIL_TEST_BIN
  ? [process.env.DEVICERAIL_TEST_BIN, "serve"]
  : [process.execPath, join(ROOT, "src/main.ts"), "serve"];
const echo = await measure("echo", [process.execPath, join(import.meta.dir, "ndjson-echo.ts")], false);
await measure("daemon sessions.list (unmemoized results)", daemonCmd, true, listLine);
const daemon = await measure("daemon", daemonCmd, true);
console.log(
  `rpc: daemon ${daemon.toFixed(0)} req/s, echo ${echo.toFixed(0)} req/s, ratio ${(daemon / echo).toFixed(2)}`,
);
