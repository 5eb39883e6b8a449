/**
 * The Android driver's two paths on the simulated phone behind a real adb server, under the
 * published latency model of a real phone (issue 27): the stock shell (`input` ~226 ms per call,
 * `uiautomator dump` ~2 s: mobilecli #412 and #334, research/automation-landscape.md) and Appium's
 * UiAutomator2 server (tap ~6 ms, page source ~40 ms, the same sources). One cycle is an
 * observation with a UI tree (no screenshot: screencap is the same on both paths) and one tap,
 * through the Driver port.
 *
 *   bun scripts/bench/android-helper.ts
 *     BENCH_CYCLES (default 100 per path), BENCH_SHELL_INPUT_MS (226), BENCH_SHELL_DUMP_MS (2000),
 *     BENCH_HELPER_TAP_MS (6), BENCH_HELPER_TREE_MS (40)
 *
 * devicerail's overhead is measured against a baseline taken in the same run, alternating blocks:
 * the same phone work done without devicerail (adbkit's `shell` running the dump and `input tap`
 * for the shell path; `fetch` of GET /source and POST /appium/gestures/click on the same forward
 * for the helper path). overhead = driver cycle − baseline cycle, so the simulated phone's and the
 * transport's own costs cancel out. The daemon's share above the driver (JSON-RPC, the durable
 * commit) is android-observe.ts's subject.
 *
 * Last line: `android-helper: shell p50 X ms, helper p50 Y ms, overhead p50 Z ms, ratio R`
 * (Z: the helper path's overhead; R: shell p50 / helper p50).
 */
import { Adb } from "@devicefarmer/adbkit";
import { AndroidDriver } from "../../drivers/android/android-driver.ts";
import type { CallContext } from "../../src/driver/driver.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";
import { PINNED_APKS, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "../../test/support/adb-device/apk-catalog.ts";
import { ADB_PATH, demoScenario, startAdbServer, startFakeDevice } from "../../test/support/adb-device/index.ts";
import { installApk } from "../../test/support/adb-device/packages.ts";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CYCLES = num("BENCH_CYCLES", 100);
const MODEL = {
  shellInput: num("BENCH_SHELL_INPUT_MS", 226),
  shellDump: num("BENCH_SHELL_DUMP_MS", 2_000),
  helperTap: num("BENCH_HELPER_TAP_MS", 6),
  helperTree: num("BENCH_HELPER_TREE_MS", 40),
};
const BLOCK = 10;
const TAP = { x: 540, y: 1700 };

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ctx = (): CallContext => ({ signal: new AbortController().signal, deadline: null, log: silentLogger });

await using server = await startAdbServer();

/** A phone and a driver connected to it; `helper`: the server's packages installed, and used. */
async function setUp(helper: boolean) {
  const device = await startFakeDevice(server, { scenario: demoScenario });
  if (helper)
    for (const apk of Object.values(PINNED_APKS))
      if (apk.package === UIA2_SERVER_PACKAGE || apk.package === UIA2_TEST_PACKAGE)
        installApk(device.phone, apk, false);
  const driver = new AndroidDriver({
    adbPath: ADB_PATH,
    serverPort: server.port,
    log: silentLogger,
    helper: helper ? "use" : "off",
  });
  const id = `android-adb:${device.serial}`;
  await driver.start(() => {}, ctx());
  await driver.connect(id, ctx());
  if (helper && !device.phone.uia2.running) throw new Error("the UiAutomator2 server did not start");
  // The latency model, set after connect so that connecting is not what is measured.
  if (helper)
    device.phone.uia2.latencyMs = { ...device.phone.uia2.latencyMs, tap: MODEL.helperTap, source: MODEL.helperTree };
  else {
    device.phone.faults.slow.set("input", MODEL.shellInput);
    device.phone.faults.slow.set("uiautomator", MODEL.shellDump);
  }
  const cycle = async () => {
    const o = await driver.observe(id, { screenshot: false, uiTree: true }, ctx());
    if (!o.uiTree?.nodes.length) throw new Error("no tree");
    const path = (o.metadata?.androidHelper as { path?: string } | undefined)?.path ?? "shell";
    if (path !== (helper ? "uiautomator2" : "shell")) throw new Error(`the cycle went through ${path}`);
    await driver.execute(id, { name: "tap", arguments: TAP }, ctx());
  };
  return { device, driver, id, cycle };
}

const shell = await setUp(false);
const helper = await setUp(true);

// The baselines: the same phone work without devicerail.
const adbDevice = Adb.createClient({ port: server.port }).getDevice(shell.device.serial);
const readAll = (p: PromiseLike<NodeJS.ReadableStream>) => Promise.resolve(p).then((s) => Adb.util.readAll(s as never));
const dumpFile = "/data/local/tmp/bench-helper-ui.xml";
async function shellBaseline(): Promise<void> {
  const xml = await readAll(adbDevice.shell(`uiautomator dump ${dumpFile} 2>&1; cat ${dumpFile}; rm -f ${dumpFile}`));
  if (!xml.includes("</hierarchy>")) throw new Error("baseline dump failed");
  await readAll(adbDevice.shell(`input tap ${TAP.x} ${TAP.y}`));
}
const forwards = (await server.adb(["forward", "--list"])).stdout;
const local = new RegExp(`${helper.device.serial.replace(/[.]/g, "\\.")} tcp:(\\d+) tcp:6790`).exec(forwards)?.[1];
if (!local) throw new Error(`no forward to the UiAutomator2 server: ${forwards}`);
const base = `http://127.0.0.1:${local}`;
const sessionId = helper.device.phone.uia2.sessionId;
async function helperBaseline(): Promise<void> {
  const source = (await (await fetch(`${base}/session/${sessionId}/source`)).json()) as { value: string };
  if (!source.value.includes("</hierarchy>")) throw new Error("baseline source failed");
  const click = await fetch(`${base}/session/${sessionId}/appium/gestures/click`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ offset: TAP }),
  });
  await click.text();
}

/** p50 of each side over CYCLES, alternating blocks of BLOCK cycles. */
async function measure(driver: () => Promise<void>, baseline: () => Promise<void>) {
  const t = { driver: [] as number[], baseline: [] as number[] };
  for (let done = 0; done < CYCLES; done += BLOCK)
    for (const [side, fn] of [
      ["driver", driver],
      ["baseline", baseline],
    ] as const)
      for (let i = 0; i < Math.min(BLOCK, CYCLES - done); i++) {
        const started = performance.now();
        await fn();
        t[side].push(performance.now() - started);
      }
  const overheads = t.driver.map((d, i) => d - (t.baseline[i] as number));
  return { driver: p50(t.driver), baseline: p50(t.baseline), overhead: p50(overheads) };
}

for (let i = 0; i < 3; i++) await helper.cycle();
await shell.cycle();
const h = await measure(helper.cycle, helperBaseline);
const s = await measure(shell.cycle, shellBaseline);
await shell.driver.stop();
await helper.driver.stop();
await shell.device[Symbol.asyncDispose]();
await helper.device[Symbol.asyncDispose]();

const f = (n: number) => n.toFixed(1);
process.stdout.write(
  `android-helper model: shell input ${MODEL.shellInput} ms, uiautomator dump ${MODEL.shellDump} ms; helper tap ${MODEL.helperTap} ms, page source ${MODEL.helperTree} ms; ${CYCLES} cycles (observe with tree + tap) per path\n` +
    `android-helper shell path: driver p50 ${f(s.driver)} ms, baseline (adbkit, same work) p50 ${f(s.baseline)} ms, overhead p50 ${f(s.overhead)} ms\n` +
    `android-helper helper path: driver p50 ${f(h.driver)} ms, baseline (fetch, same forward) p50 ${f(h.baseline)} ms, overhead p50 ${f(h.overhead)} ms\n` +
    `android-helper: shell p50 ${f(s.driver)} ms, helper p50 ${f(h.driver)} ms, overhead p50 ${f(h.overhead)} ms, ratio ${(s.driver / h.driver).toFixed(1)}\n`,
);
