/**
 * The empty accessibility tree of a fresh iOS 26 Simulator (research F3): about 8 s after boot
 * (XcodeBuildMCP #290, PR #312), and for good for an app launched before that until it is
 * relaunched (#408). One bounded wait after connect, then a typed omission with the screenshot
 * kept, and no new wait on every observation.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Hid } from "../../../drivers/ios-simulator/backends.ts";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import { AxReadiness } from "../../../drivers/ios-simulator/readiness.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import type { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { DEMO_BUNDLE, type DeviceSpec, type FakeSimulators, startFakeSimulators } from "../../support/ios-sim/index.ts";

const ctx = (): CallContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 30_000,
  log: silentLogger,
});
const UDID = "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F";
const ID = `ios-simulator:${UDID}`;

async function attached(sims: FakeSimulators, axReadyWaitMs?: number) {
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: join(sims.binDir, "axe"),
    pollMs: 100,
    log: silentLogger,
    ...(axReadyWaitMs ? { axReadyWaitMs } : {}),
  });
  await driver.start(() => {}, ctx());
  await driver.connect(ID, ctx());
  return { driver, [Symbol.asyncDispose]: () => driver.stop() };
}

const fakes = (device: Partial<DeviceSpec>) =>
  startFakeSimulators({ devices: [{ udid: UDID, state: "Booted", ...device }] });
const describes = (sims: FakeSimulators) => sims.readLog("axe").filter((r) => r.argv[0] === "describe-ui").length;

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t = Date.now();
  const value = await p;
  return { value, ms: Date.now() - t };
}

const treeError = (o: { uiTreeError?: DriverError | null }) => {
  const data = o.uiTreeError?.error.data as
    | { retryable?: boolean; message?: string; details?: { platformCode?: string } }
    | undefined;
  return data ? { code: data.details?.platformCode, retryable: data.retryable, message: data.message } : null;
};

describe("the empty accessibility tree after boot", () => {
  test("is waited for once, up to 15 s after connect: a tree that needs 6.5 s still arrives", async () => {
    await using sims = await fakes({ axReadyAfterBootMs: 6_500 });
    await using a = await attached(sims);
    const { value: o, ms } = await timed(a.driver.observe(ID, { screenshot: true, uiTree: true }, ctx()));
    expect(o.uiTree?.nodes.some((n) => n.identifier === "login.email")).toBe(true);
    expect(ms).toBeGreaterThan(5_000);
    expect((o.metadata.ios as { treeWaitMs: number }).treeWaitMs).toBeGreaterThan(5_000);
  }, 20_000);

  test("still empty after the wait: a typed ios_tree_not_ready omission, the screenshot kept, and no new wait at the next observation", async () => {
    await using sims = await fakes({ axReadyAfterBootMs: 600_000 });
    await using a = await attached(sims, 1_000);
    const first = await timed(a.driver.observe(ID, { screenshot: true, uiTree: true }, ctx()));
    expect([first.value.uiTree, first.value.screenshot?.length ? "png" : null]).toEqual([null, "png"]);
    expect(treeError(first.value)).toMatchObject({ code: "ios_tree_not_ready", retryable: true });
    expect(first.ms).toBeGreaterThanOrEqual(900);
    const before = describes(sims);
    const second = await timed(a.driver.observe(ID, { screenshot: true, uiTree: true }, ctx()));
    expect(treeError(second.value)?.code).toBe("ios_tree_not_ready");
    expect(describes(sims) - before).toBe(1);
    expect(second.ms).toBeLessThan(900);
  }, 20_000);

  test("an app launched before accessibility was ready stays empty until relaunched: the omission says to relaunch, the relaunched app has its tree", async () => {
    // AX is ready 300 ms after boot, but the demo app was launched at boot.
    await using sims = await fakes({ axReadyAfterBootMs: 300, axStaleIfLaunchedEarly: true });
    await using a = await attached(sims, 1_000);
    await Bun.sleep(400);
    const o = await a.driver.observe(ID, { screenshot: true, uiTree: true }, ctx());
    expect(o.uiTree).toBe(null);
    const e = treeError(o);
    expect(e?.code).toBe("ios_tree_not_ready");
    expect(e?.message).toContain("relaunch");
    const again = await timed(a.driver.observe(ID, { screenshot: false, uiTree: true }, ctx()));
    expect([treeError(again.value)?.code, again.ms < 900]).toEqual(["ios_tree_not_ready", true]);
    await a.driver.execute(ID, { name: "terminate", arguments: { bundleId: DEMO_BUNDLE } }, ctx());
    await a.driver.execute(ID, { name: "launch", arguments: { bundleId: DEMO_BUNDLE } }, ctx());
    const relaunched = await a.driver.observe(ID, { screenshot: true, uiTree: true }, ctx());
    expect([
      relaunched.uiTree?.nodes.some((n) => n.identifier === "login.email"),
      relaunched.uiTreeError ?? null,
    ]).toEqual([true, null]);
  }, 20_000);
});

/** A backend whose describe-ui answers come from `answer` (empty or full, for a pid). */
function scriptedHid(answer: () => { pid: number; empty: boolean }): Hid & { reads: number } {
  const node = (pid: number, children: unknown[], w: number, h: number) => ({
    type: "Application",
    AXLabel: null,
    frame: { x: 0, y: 0, width: w, height: h },
    children,
    enabled: true,
    pid,
  });
  const hid = {
    reads: 0,
    async tree() {
      hid.reads++;
      const { pid, empty } = answer();
      return JSON.stringify([
        empty
          ? node(pid, [], 0, 0)
          : node(
              pid,
              [
                {
                  type: "Button",
                  AXLabel: "OK",
                  frame: { x: 1, y: 1, width: 10, height: 10 },
                  children: [],
                  enabled: true,
                  pid,
                },
              ],
              402,
              874,
            ),
      ]);
    },
    tap: async () => {},
    doubleTap: async () => {},
    longPress: async () => {},
    swipe: async () => {},
    home: async () => {},
  };
  return hid;
}

describe("AxReadiness", () => {
  test("an app already waited for is not waited for again; a new pid gets one wait of its own", async () => {
    let pid = 100;
    const hid = scriptedHid(() => ({ pid, empty: true }));
    const ax = new AxReadiness(600);
    const first = await timed(ax.settle(hid, ctx()));
    expect([first.value.notReady?.platformCode, first.ms >= 550]).toEqual(["ios_tree_not_ready", true]);
    const again = await timed(ax.settle(hid, ctx()));
    expect([again.value.notReady?.platformCode, again.ms < 200]).toEqual(["ios_tree_not_ready", true]);
    pid = 101;
    const relaunched = await timed(ax.settle(hid, ctx()));
    expect([relaunched.value.notReady?.platformCode, relaunched.ms >= 550]).toEqual(["ios_tree_not_ready", true]);
  });

  test("stops polling before the call's deadline, so the omission still arrives in time", async () => {
    const hid = scriptedHid(() => ({ pid: 7, empty: true }));
    const ax = new AxReadiness(60_000);
    const c: CallContext = { ...ctx(), deadline: Date.now() + 2_600 };
    const r = await timed(ax.settle(hid, c));
    expect([r.value.notReady?.platformCode, r.ms < 1_500]).toEqual(["ios_tree_not_ready", true]);
  });
});

describe("the fake's accessibility readiness", () => {
  test("describe-ui gives the bare application root until axReadyAfterBootMs has passed, and for an early-launched app until it is relaunched", async () => {
    await using sims = await fakes({ axReadyAfterBootMs: 300, axStaleIfLaunchedEarly: true });
    const tree = async () => JSON.parse((await sims.run("axe", ["describe-ui", "--udid", UDID])).text)[0];
    expect((await tree()).children).toEqual([]);
    await Bun.sleep(350);
    expect([(await tree()).AXFrame, (await tree()).children]).toEqual(["{{0, 0}, {0, 0}}", []]);
    sims.update((s) => {
      const d = s.devices[0];
      if (d) delete d.running[DEMO_BUNDLE];
    });
    sims.launch(UDID);
    expect((await tree()).children.length).toBeGreaterThan(0);
  });
});
