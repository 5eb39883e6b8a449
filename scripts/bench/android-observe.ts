/**
 * device.observe (screenshot + UI tree) through the daemon against the simulated phone on a real
 * adb server, versus the same `exec-out screencap -p` and `uiautomator dump` done directly with
 * adbkit, in the same run, alternating blocks so that drift hits both sides alike.
 *
 *   bun scripts/bench/android-observe.ts      (BENCH_OBSERVE_CALLS, default 200 per side)
 *
 * The simulated phone answers in about 2 ms, far faster than any phone, so the daemon's fixed
 * cost per observation (a JSON-RPC exchange, and one event committed to disk with its UI tree
 * before the answer) dominates that ratio. A second, shorter run first gives the phone the
 * medians published for real hardware without a helper app (screencap ~300 ms, uiautomator dump ~1.5 s; see
 * research/automation-landscape.md), which is what a phone owner sees (BENCH_REALISTIC_CALLS,
 * default 8; 0 skips it).
 *
 * Before the last line it prints floors measured in the same run, which a daemon that answers
 * only after the observation is on disk cannot go below: one JSON-RPC round trip through the same
 * daemon with no device work (devices.list); a bare SQLite commit of one small row, opened as the
 * store opens its database (WAL, synchronous=FULL), which is the disk's share alone; and the
 * durable part of one observation done by the store's own classes, configured as the daemon's, on
 * the same file system as its data directory (screenshot and new UI-tree document committed with
 * the event). "best possible ratio" is (raw + round trip + bare commit) / raw: what a daemon with
 * no cost of its own beyond those two would reach.
 *
 * Last line: `android-observe: daemon p50 X ms, raw p50 Y ms, overhead ratio R` (the fast phone).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Adb } from "@devicefarmer/adbkit";
import { FileEvidenceStore } from "../../src/core/evidence/evidence-store.ts";
import { ObjectStore } from "../../src/core/evidence/object-store.ts";
import { openDatabase } from "../../src/core/sessions/db.ts";
import { EventLog } from "../../src/core/sessions/event-log.ts";
import { MEDIA_TYPE_PNG, MEDIA_TYPE_UI_TREE } from "../../src/protocol/types/evidence.ts";
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
await using daemon = spawnDaemon({
  env: {
    DEVICERAIL_ANDROID: "auto",
    DEVICERAIL_ADB_PATH: ADB_PATH,
    ANDROID_ADB_SERVER_PORT: String(server.port),
    DEVICERAIL_LOG_LEVEL: "error",
  },
});
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
  if (!r.result?.uiSnapshot || !r.result?.screenshot)
    throw new Error(`observe failed: ${JSON.stringify(r.error ?? r.result)}`);
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
const fast = await measure(CALLS);

/** p50 of `calls` sequential runs of fn. */
async function p50Of(calls: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  return p50(times);
}

const rpcFloor = await p50Of(CALLS, async () => {
  const r = await daemon.call("devices.list");
  if (!r.result) throw new Error(`devices.list failed: ${JSON.stringify(r.error)}`);
});

/** What the daemon makes durable for one observation, with its own store classes, beside its data directory. */
async function durableFloor(calls: number): Promise<number> {
  const sample = (await daemon.call("device.observe")).result;
  const png = await readAll(device.screencap());
  const dir = mkdtempSync(join(tmpdir(), "devicerail-bench-floor-"));
  try {
    const opened = openDatabase(join(dir, "floor.sqlite"));
    const log = new EventLog(opened);
    // Configured as the daemon's store is (its default inline limit).
    const evidence = new FileEvidenceStore(await ObjectStore.open(join(dir, "evidence")), log);
    const { session } = await log.startSession({ deviceId: sample.deviceId });
    const treeBytes = new Uint8Array(sample.uiSnapshot.byteLength).fill(0x20);
    const ms = await p50Of(calls, async (i) => {
      // A new document each time, as every observation's tree names its own observationId.
      treeBytes.set(new TextEncoder().encode(`{"n":${i}}`));
      const [shot, tree] = await Promise.all([
        evidence.put(png, MEDIA_TYPE_PNG),
        evidence.put(treeBytes, MEDIA_TYPE_UI_TREE),
      ]);
      const observation = {
        ...sample,
        id: crypto.randomUUID(),
        screenshot: shot.ref,
        uiSnapshot: { ...sample.uiSnapshot, evidence: tree.ref },
      };
      await log.append(session.id, {
        requestId: i,
        deviceId: sample.deviceId,
        payload: { type: "observationCaptured", observation },
        evidence: [shot.row, tree.row],
      });
    });
    await log.close();
    log.dispose();
    opened.raw.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const storeFloor = await durableFloor(CALLS);

/** The disk's own price: a bare SQLite commit of one small row, WAL and synchronous=FULL, as the store opens it. */
async function commitFloor(calls: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-bench-commit-"));
  try {
    const { raw: db } = openDatabase(join(dir, "commit.sqlite"));
    db.run("CREATE TABLE t (n INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO t (body) VALUES (?)");
    const ms = await p50Of(calls, async () => db.transaction(() => insert.run("x".repeat(1_000)))());
    insert.finalize();
    db.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const bareCommit = await commitFloor(CALLS);

const atLeast = fast.raw + rpcFloor + bareCommit;
process.stdout.write(
  `android-observe (floors, same run): JSON-RPC round trip p50 ${rpcFloor.toFixed(2)} ms, bare durable commit p50 ${bareCommit.toFixed(2)} ms, ` +
    `durable observation (store code) p50 ${storeFloor.toFixed(2)} ms; raw + round trip + bare commit ${atLeast.toFixed(2)} ms, best possible ratio ${(atLeast / fast.raw).toFixed(2)}\n`,
);
process.stdout.write(line("android-observe", fast));
