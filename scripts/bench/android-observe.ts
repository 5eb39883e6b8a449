/**
 * device.observe (screenshot + UI tree) through the daemon against the simulated phone on a real
 * adb server, versus the same `exec-out screencap -p` and `uiautomator dump` done directly with
 * adbkit, in the same run, alternating blocks so that drift hits both sides alike.
 *
 *   bun scripts/bench/android-observe.ts      (BENCH_OBSERVE_CALLS, default 200 per side)
 *
 * The simulated phone answers in about 2 ms, far faster than any phone, so the daemon's fixed
 * cost per observation (two evidence files and one event made durable: five fsyncs) dominates
 * that ratio. A second, shorter run first gives the phone the medians published for real
 * hardware without a helper app (screencap ~300 ms, uiautomator dump ~1.5 s; see
 * research/automation-landscape.md), which is what a phone owner sees (BENCH_REALISTIC_CALLS,
 * default 8; 0 skips it).
 *
 * Last line: `android-observe: daemon p50 X ms, raw p50 Y ms, overhead ratio R` (the fast phone).
 */
import { Adb } from "@devicefarmer/adbkit";
import { ADB_PATH, demoScenario, startAdbServer, startFakeDevice } from "../../test/support/adb-device/index.ts";
import { spawnDaemon } from "../../test/support/daemon.ts";

const CALLS = Number(process.env.BENCH_OBSERVE_CALLS ?? 200);
const REALISTIC_CALLS = Number(process.env.BENCH_REALISTIC_CALLS ?? 8);
const BLOCK = 25;

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

await using server = await startAdbServer();
await using phone = await startFakeDevice(server, { scenario: demoScenario });
await using daemon = spawnDaemon({ env: { DEVICERAIL_ANDROID: "auto", DEVICERAIL_ADB_PATH: ADB_PATH, ANDROID_ADB_SERVER_PORT: String(server.port), DEVICERAIL_LOG_LEVEL: "error" } });
await daemon.hello();
await daemon.call("device.connect");
await daemon.call("session.start");

const device = Adb.createClient({ port: server.port }).getDevice(phone.serial);
const readAll = (p: PromiseLike<NodeJS.ReadableStream>) => Promise.resolve(p).then((s) => Adb.util.readAll(s as never));
const file = "/data/local/tmp/bench-ui.xml";
/** What the driver asks of adb for one observation, minus the daemon around it. */
async function raw(): Promise<void> {
  const [png, xml] = await Promise.all([
    readAll(device.screencap()),
    readAll(device.shell(`rm -f ${file}; uiautomator dump ${file} 2>&1; cat ${file} 2>/dev/null; rm -f ${file}`)),
  ]);
  if (png.length < 100 || !xml.includes("</hierarchy>")) throw new Error("raw observation failed");
}

async function viaDaemon(): Promise<void> {
  const r = await daemon.call("device.observe");
  if (!r.result?.uiSnapshot || !r.result?.screenshot) throw new Error(`observe failed: ${JSON.stringify(r.error ?? r.result)}`);
}

/** p50 of each side over `calls`, alternating blocks of BLOCK calls. */
async function measure(calls: number): Promise<{ daemon: number; raw: number }> {
  const times = { daemon: [] as number[], raw: [] as number[] };
  for (let done = 0; done < calls; done += BLOCK) {
    for (const [side, fn] of [
      ["daemon", viaDaemon],
      ["raw", raw],
    ] as const) {
      for (let i = 0; i < Math.min(BLOCK, calls - done); i++) {
        const t = performance.now();
        await fn();
        times[side].push(performance.now() - t);
      }
    }
  }
  return { daemon: p50(times.daemon), raw: p50(times.raw) };
}

const line = (label: string, m: { daemon: number; raw: number }) =>
  `${label}: daemon p50 ${m.daemon.toFixed(2)} ms, raw p50 ${m.raw.toFixed(2)} ms, overhead ratio ${(m.daemon / m.raw).toFixed(2)}\n`;

// Warm-up: JIT, connections, the renderer's cache.
for (let i = 0; i < 10; i++) {
  await viaDaemon();
  await raw();
}
if (REALISTIC_CALLS > 0) {
  phone.phone.faults.slow.set("screencap", 300);
  phone.phone.faults.slow.set("uiautomator", 1500);
  process.stdout.write(line("android-observe (phone-like latency)", await measure(REALISTIC_CALLS)));
  phone.phone.faults.slow.clear();
}
process.stdout.write(line("android-observe", await measure(CALLS)));
