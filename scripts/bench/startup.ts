/**
 * Cold start of the compiled linux-x64 binary: from spawn until its answer to `system.hello`
 * arrives over stdio, each run a new process with a fresh data directory and DEVICERAIL_ANDROID=off;
 * RSS (VmRSS of /proc/<pid>/status) read right after the hello is answered; the binary's size.
 * Builds dist/devicerail-linux-x64 first when it is missing (BENCH_STARTUP_BIN picks another binary).
 * Last line: `startup: p50 X ms, rss Y MiB, size Z MiB` (targets: X ≤ 60, Y ≤ 60).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HELLO_LINE } from "./hello-line.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = process.env.BENCH_STARTUP_BIN ?? join(ROOT, "dist/devicerail-linux-x64");
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 30);

if (!existsSync(BIN)) {
  if (process.env.BENCH_STARTUP_BIN) throw new Error(`startup: ${BIN} does not exist`);
  process.stderr.write(`startup: ${BIN} is missing; building it\n`);
  const b = Bun.spawnSync([process.execPath, join(ROOT, "scripts/build.ts"), "--target", "linux-x64"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (b.exitCode !== 0 || !existsSync(BIN)) throw new Error("startup: building the linux-x64 binary failed");
}

function vmRssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`startup: no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

async function once(): Promise<{ ms: number; rssKiB: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "devicerail-bench-startup-"));
  const cwd = mkdtempSync(join(tmpdir(), "devicerail-bench-cwd-"));
  try {
    const env = { ...process.env, DEVICERAIL_DATA_DIR: dataDir, DEVICERAIL_ANDROID: "off", DEVICERAIL_LOG_LEVEL: "warn" } as Record<string, string>;
    const started = performance.now();
    const proc = Bun.spawn([BIN, "serve"], { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    // Written at once: the pipe holds it until the daemon reads, so the time includes reading it.
    proc.stdin.write(HELLO_LINE);
    proc.stdin.flush();
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    while (!buf.includes("\n")) {
      const r = await reader.read();
      if (r.done) throw new Error(`startup: the daemon closed stdout before answering hello: ${await new Response(proc.stderr).text()}`);
      buf += decoder.decode(r.value, { stream: true });
    }
    const ms = performance.now() - started;
    const rssKiB = vmRssKiB(proc.pid);
    const answer = JSON.parse(buf.slice(0, buf.indexOf("\n")));
    if (answer.id !== "hello" || !answer.result) throw new Error(`startup: unexpected answer ${buf}`);
    proc.stdin.end();
    const code = await proc.exited;
    if (code !== 0) throw new Error(`startup: the daemon exited ${code}: ${await new Response(proc.stderr).text()}`);
    return { ms, rssKiB };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
const times: number[] = [];
const rss: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const r = await once();
  times.push(r.ms);
  rss.push(r.rssKiB);
}
times.sort((a, b) => a - b);
rss.sort((a, b) => a - b);
const sizeMiB = statSync(BIN).size / 2 ** 20;
const p50 = pct(times, 50);
const rssMiB = pct(rss, 50) / 1024;
process.stdout.write(
  `startup: ${RUNS} runs of ${BIN}: min ${(times[0] as number).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms, max ${(times.at(-1) as number).toFixed(1)} ms; rss min ${((rss[0] as number) / 1024).toFixed(1)} max ${((rss.at(-1) as number) / 1024).toFixed(1)} MiB\n`,
);
process.stdout.write(`startup: p50 ${p50.toFixed(1)} ms, rss ${rssMiB.toFixed(1)} MiB, size ${sizeMiB.toFixed(1)} MiB\n`);
