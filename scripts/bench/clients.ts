/**
 * 32 TCP clients on one daemon, each with its own Mock device and Session, each running
 * observe + tap in a loop; meanwhile one more connection measures a cheap call (system.describe)
 * so the p99 of a health check under that load is visible.
 *
 *   bun scripts/bench/clients.ts      (BENCH_CLIENTS default 32, BENCH_CLIENT_SECONDS default 10)
 *
 * Last line: `clients: 32 conns, p99 X ms, throughput Y ops/s` (per-call p99 of observe and tap).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonCommand, ROOT } from "../../test/support/daemon.ts";
import { helloParams } from "../../test/support/hello.ts";
import { TcpClient, listeningPort } from "../../test/support/tcp-client.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_CLIENT_SECONDS ?? 10);
const dataDir = mkdtempSync(join(tmpdir(), "devicerail-bench-clients-"));
const daemon = Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
  cwd: ROOT,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "inherit",
  env: {
    ...process.env,
    DEVICERAIL_DATA_DIR: dataDir,
    DEVICERAIL_LOG_LEVEL: "error",
    DEVICERAIL_ANDROID: "off",
    DEVICERAIL_MOCK_DEVICES: String(CLIENTS),
  },
});
const port = await listeningPort(daemon.stdout);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

async function client(i: number, until: number, times: { observe: number[]; tap: number[] }): Promise<number> {
  const c = await TcpClient.connect(port);
  await c.call("system.hello", helloParams());
  await c.call("device.select", { deviceId: `mock-${i + 1}` });
  await c.call("device.connect");
  const started = await c.call("session.start");
  if (!started.result) throw new Error(`client ${i}: session.start failed: ${JSON.stringify(started.error)}`);
  let ops = 0;
  while (Date.now() < until) {
    let t = performance.now();
    const o = await c.call("device.observe");
    times.observe.push(performance.now() - t);
    t = performance.now();
    const a = await c.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 10, y: 10 } });
    times.tap.push(performance.now() - t);
    if (o.error || a.error) throw new Error(`client ${i}: ${JSON.stringify(o.error ?? a.error)}`);
    ops += 2;
  }
  await c.call("session.end");
  c.close();
  return ops;
}

const times = { observe: [] as number[], tap: [] as number[] };
const health: number[] = [];
const until = Date.now() + SECONDS * 1000;
const probe = await TcpClient.connect(port);
await probe.call("system.hello", helloParams());
const t0 = performance.now();
const work = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, until, times)));
while (Date.now() < until) {
  const t = performance.now();
  await probe.call("system.describe");
  health.push(performance.now() - t);
  await Bun.sleep(20);
}
const ops = (await work).reduce((a, b) => a + b, 0);
const elapsed = (performance.now() - t0) / 1000;
probe.close();
daemon.kill("SIGTERM");
await daemon.exited;
rmSync(dataDir, { recursive: true, force: true });

const all = [...times.observe, ...times.tap];
const f = (n: number) => n.toFixed(2);
process.stdout.write(
  `observe: p50 ${f(quantile(times.observe, 0.5))} ms, p99 ${f(quantile(times.observe, 0.99))} ms (${times.observe.length} calls)\n`,
);
process.stdout.write(
  `tap: p50 ${f(quantile(times.tap, 0.5))} ms, p99 ${f(quantile(times.tap, 0.99))} ms (${times.tap.length} calls)\n`,
);
process.stdout.write(
  `health (system.describe under load): p50 ${f(quantile(health, 0.5))} ms, p99 ${f(quantile(health, 0.99))} ms\n`,
);
process.stdout.write(
  `clients: ${CLIENTS} conns, p99 ${f(quantile(all, 0.99))} ms, throughput ${Math.round(ops / elapsed)} ops/s\n`,
);
