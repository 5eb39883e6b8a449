/**
 * Input on iOS Simulators as they really behave (issue 25, research note F4-F7, F10 and the
 * WebDriverAgent session row of §1.3): AXe's batch taps that re-read the tree, switches that
 * ignore plain coordinate taps, `type` that cannot press Tab and drops a trailing newline, secure
 * fields as the real serializer prints them, expiring WDA sessions and per-action timings.
 * Through the Driver port, over the fake xcrun, AXe and WebDriverAgent.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/index.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import type { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/rpc/rpc-error.ts";
import { type FakeSimulators, type FakeSimulatorsOptions, startFakeSimulators } from "../../support/ios-sim/fake-simulators.ts";

const ctx = (): CallContext => ({ signal: new AbortController().signal, deadline: Date.now() + 20_000, log: silentLogger });

async function attached(sims: FakeSimulators, opts: { wda?: boolean } = {}) {
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: opts.wda ? "/nonexistent/axe" : join(sims.binDir, "axe"),
    ...(opts.wda ? { wdaEndpoint: sims.wda?.url as string } : {}),
    pollMs: 100,
    log: silentLogger,
  });
  await driver.start(() => {}, ctx());
  const udid = sims.device().udid;
  const id = `ios-simulator:${udid}`;
  await driver.connect(id, ctx());
  return { driver, udid, id, [Symbol.asyncDispose]: () => driver.stop() };
}

type A = Awaited<ReturnType<typeof attached>>;
const exec = (a: A, name: string, args: unknown) => a.driver.execute(a.id, { name, arguments: args }, ctx());
const names = async (a: A) => (await a.driver.actions(a.id)).map((d) => d.name);

async function failure(p: Promise<unknown>): Promise<{ code: string; retryable?: boolean; message?: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as DriverError;
    const data = e.error.data as { retryable?: boolean; message?: string; details?: { platformCode?: string } };
    return { code: e.driverCode === "platform_error" ? (data.details?.platformCode ?? "") : e.driverCode, retryable: data.retryable, message: e.error.message };
  }
  return { code: "no error" };
}

const axeCalls = (sims: FakeSimulators, from = 0) => sims.readLog("axe").slice(from).map((r) => r.argv);

async function sims(options: FakeSimulatorsOptions = {}) {
  return startFakeSimulators(options);
}

describe("doubleTap (F4)", () => {
  test("the fake's batch taps are a tree read apart when axeTapTreeReadMs is set", async () => {
    await using s = await sims({ axeTapTreeReadMs: 400 });
    const udid = s.device().udid;
    const r = await s.run("axe", ["batch", "--udid", udid, "--step", "tap -x 201 -y 226", "--step", "tap -x 201 -y 226"]);
    expect(r.exitCode).toBe(0);
    const [first, second] = s.device().input.filter((e) => e.kind === "tap");
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(400);
  });

  test("on AXe doubleTap is not advertised and is refused with ios_double_tap_unsupported, tapping nothing", async () => {
    await using s = await sims({ axeTapTreeReadMs: 400 });
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(await names(a)).not.toContain("doubleTap");
    const from = s.readLog("axe").length;
    const f = await failure(exec(a, "doubleTap", { x: 300, y: 600 }));
    expect(f).toEqual({ code: "ios_double_tap_unsupported", retryable: false, message: expect.stringContaining("300 ms double-tap window") });
    expect(axeCalls(s, from)).toEqual([]);
  });

  test("with WebDriverAgent doubleTap is advertised and lands as one double tap", async () => {
    await using s = await sims({ wda: true });
    await using a = await attached(s, { wda: true });
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(await names(a)).toContain("doubleTap");
    expect(await exec(a, "doubleTap", { x: 603, y: 678 })).toEqual({ output: { accepted: true, x: 603, y: 678 } });
    expect(s.device().input.at(-1)).toMatchObject({ via: "wda", kind: "double-tap" });
  });
});
