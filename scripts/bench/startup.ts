/**
 * How fast the CLI starts, against bare compiled Bun programs doing the same job, built and run in
 * this same run (issue 26, item 7). Three pairs, each run BENCH_STARTUP_RUNS times (default 15),
 * the pair's two programs alternating so that drift hits both alike; medians compared:
 *
 * - version: `devicerail --version` against a program that prints a version string;
 * - client: `devicerail devices` against the running daemon of a fresh data directory, against a
 *   program that reads that daemon's listen.json, connects to its Unix socket, sends system.hello
 *   and devices.list and prints one row per device;
 * - serve: `devicerail serve` (stdio) from spawn until it answered system.hello and, its stdin
 *   ended, exited; against a program that answers one NDJSON line on stdout and exits at end of
 *   input (node:process streams, as a stdio server is written).
 *
 * Wall time is spawn to exit; memory is the child's peak RSS as GNU time reports it (Debian package
 * `time`). Not Bun's resourceUsage(): a child spawned from Bun inherits Bun's own peak as the floor of
 * its ru_maxrss (Linux keeps the pre-exec high-water mark), which hides any program smaller than the
 * benchmark itself; /usr/bin/time forks from a small process, so its floor is about 2 MiB.
 * The baselines are compiled like the product (minified, bytecode, ESM). The product is built from
 * this checkout first (scripts/build.ts) unless BENCH_STARTUP_BIN names a binary.
 * Targets: version ≤ 2× and ≤ +8 MiB, client ≤ 3× and ≤ +15 MiB, serve ≤ 2.5× and ≤ +25 MiB.
 * Last line: `startup: version X×, client Y×, serve Z×, rss +A/+B/+C MiB, size S MiB`.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HELLO_LINE } from "./hello-line.ts";

const ROOT = join(import.meta.dir, "../..");
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);
const work = mkdtempSync(join(tmpdir(), "devicerail-bench-startup-"));
const log = (s: string) => process.stderr.write(`${s}\n`);

function build(args: string[], what: string) {
  const b = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (b.exitCode !== 0) throw new Error(`startup: building ${what} failed: ${b.stderr.toString()}`);
}

let BIN = process.env.BENCH_STARTUP_BIN ?? "";
if (!BIN) {
  build([join(ROOT, "scripts/build.ts"), "--target", "linux-x64", "--outdir", join(work, "dist")], "devicerail");
  BIN = join(work, "dist/devicerail-linux-x64");
}

// The client's hello asks for what devices.list needs (device routing), as `devicerail devices` does.
const CLIENT_HELLO = HELLO_LINE.replace(
  '"optional":["events.snapshot.v1"]',
  '"optional":["events.snapshot.v1","device.routing.v1"]',
);
if (CLIENT_HELLO === HELLO_LINE) throw new Error("startup: hello-line.ts changed; update CLIENT_HELLO");
const BARE: Record<string, string> = {
  version: `console.log("0.1.0+0000000");\n`,
  client: `
const dataDir = process.env.DEVICERAIL_DATA_DIR;
const record = JSON.parse(await Bun.file(dataDir + "/listen.json").text());
let buf = "";
const answers = [];
const { promise, resolve } = Promise.withResolvers();
const socket = await Bun.connect({
  unix: record.socket,
  socket: {
    data(_s, chunk) {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf("\\n")) >= 0) {
        answers.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
        if (answers.length === 2) resolve();
      }
    },
  },
});
socket.write(${JSON.stringify(CLIENT_HELLO)} + JSON.stringify({ jsonrpc: "2.0", id: 2, method: "devices.list", params: {} }) + "\\n");
await promise;
socket.end();
if (!answers[1].result) throw new Error(JSON.stringify(answers[1]));
for (const d of answers[1].result.devices) console.log([d.id, d.platform, d.name, d.state].join("\\t"));
`,
  serve: `
let buf = "";
let answered = false;
process.stdin.on("data", (chunk) => {
  buf += chunk.toString();
  if (!answered && buf.includes("\\n")) {
    const req = JSON.parse(buf.slice(0, buf.indexOf("\\n")));
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { server: { name: "bare", version: "0" } } }) + "\\n");
    answered = true;
  }
});
process.stdin.on("end", () => process.exit(0));
`,
};
const bare: Record<string, string> = {};
for (const [name, source] of Object.entries(BARE)) {
  const src = join(work, `bare-${name}.ts`);
  writeFileSync(src, source);
  bare[name] = join(work, `bare-${name}`);
  build(
    ["build", "--compile", "--minify", "--bytecode", "--format=esm", src, "--outfile", bare[name] as string],
    `the bare ${name} program`,
  );
}

type Sample = { ms: number; rssKiB: number };
type Env = Record<string, string>;

const TIME = "/usr/bin/time";
if (!(await Bun.file(TIME).exists())) throw new Error("startup: needs GNU time for peak RSS: apt-get install -y time");
let runs = 0;

async function runToExit(command: string[], env: Env, stdin?: "hello"): Promise<Sample> {
  const rssFile = join(work, `rss-${runs++}`);
  const cmd = [TIME, "-f", "%M", "-o", rssFile, ...command];
  const started = performance.now();
  const proc = Bun.spawn(cmd, { cwd: work, env, stdin: stdin ? "pipe" : "ignore", stdout: "pipe", stderr: "pipe" });
  const stdout = (async () => {
    if (!stdin) return new Response(proc.stdout).text();
    const sink = proc.stdin as import("bun").FileSink;
    sink.write(HELLO_LINE);
    sink.flush();
    // Input ends once the hello is answered, as a client that asked one question would do.
    const reader = proc.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const r = await reader.read();
      if (r.done) break;
      text += new TextDecoder().decode(r.value);
    }
    sink.end();
    for (;;) if ((await reader.read()).done) break;
    return text;
  })();
  const [code, out] = await Promise.all([proc.exited, stdout]);
  const ms = performance.now() - started;
  if (code !== 0)
    throw new Error(`startup: ${command.join(" ")} exited ${code}: ${await new Response(proc.stderr).text()}`);
  if (!out.trim()) throw new Error(`startup: ${cmd.join(" ")} printed nothing`);
  if (stdin && !/"id":"hello","result"/.test(out))
    throw new Error(`startup: ${cmd.join(" ")} did not answer hello: ${out}`);
  const rssKiB = Number((await Bun.file(rssFile).text()).trim().split("\n").at(-1));
  if (!Number.isFinite(rssKiB) || rssKiB <= 0)
    throw new Error(`startup: no peak RSS from ${TIME} for ${command.join(" ")}`);
  return { ms, rssKiB };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function pair(name: string, product: () => Promise<Sample>, baseline: () => Promise<Sample>) {
  await product(); // warm the page cache for both
  await baseline();
  const p: Sample[] = [];
  const b: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    p.push(await product());
    b.push(await baseline());
  }
  const r = {
    ms: median(p.map((s) => s.ms)),
    baseMs: median(b.map((s) => s.ms)),
    mib: median(p.map((s) => s.rssKiB)) / 1024,
    baseMib: median(b.map((s) => s.rssKiB)) / 1024,
  };
  log(
    `startup: ${name}: devicerail ${r.ms.toFixed(1)} ms ${r.mib.toFixed(1)} MiB, bare ${r.baseMs.toFixed(1)} ms ${r.baseMib.toFixed(1)} MiB (medians of ${RUNS})`,
  );
  return { ratio: r.ms / r.baseMs, plusMib: r.mib - r.baseMib };
}

const base: Env = { ...(process.env as Env), DEVICERAIL_ANDROID: "off", DEVICERAIL_LOG_LEVEL: "warn" };
delete base.DEVICERAIL_RPC_LISTEN;
delete base.DEVICERAIL_TOKEN;
const fresh = () => mkdtempSync(join(work, "data-"));

try {
  const version = await pair(
    "version",
    () => runToExit([BIN, "--version"], base),
    () => runToExit([bare.version as string], base),
  );

  // One daemon for every client run, as a shell script of many commands meets it.
  const clientEnv = { ...base, DEVICERAIL_DATA_DIR: fresh() };
  const start = Bun.spawnSync([BIN, "daemon", "start"], { env: clientEnv, cwd: work, stdout: "pipe", stderr: "pipe" });
  if (start.exitCode !== 0) throw new Error(`startup: daemon start failed: ${start.stderr.toString()}`);
  let client: { ratio: number; plusMib: number };
  try {
    client = await pair(
      "client (devices)",
      () => runToExit([BIN, "devices"], clientEnv),
      () => runToExit([bare.client as string], clientEnv),
    );
  } finally {
    Bun.spawnSync([BIN, "daemon", "stop"], { env: clientEnv, cwd: work, stdout: "ignore", stderr: "ignore" });
  }

  const serve = await pair(
    "serve (stdio, hello, end of input)",
    () => runToExit([BIN, "serve"], { ...base, DEVICERAIL_DATA_DIR: fresh() }, "hello"),
    () => runToExit([bare.serve as string], base, "hello"),
  );

  const targets = [
    ["version", version, 2, 8],
    ["client", client, 3, 15],
    ["serve", serve, 2.5, 25],
  ] as const;
  for (const [name, r, x, mib] of targets)
    log(
      `startup: ${name} ${r.ratio <= x && r.plusMib <= mib ? "meets" : "MISSES"} its target (≤ ${x}× and ≤ +${mib} MiB)`,
    );
  const sizeMiB = statSync(BIN).size / 2 ** 20;
  const mib = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(1)}`;
  console.log(
    `startup: version ${version.ratio.toFixed(2)}×, client ${client.ratio.toFixed(2)}×, serve ${serve.ratio.toFixed(2)}×, ` +
      `rss ${mib(version.plusMib)}/${mib(client.plusMib)}/${mib(serve.plusMib)} MiB, size ${sizeMiB.toFixed(1)} MiB`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
