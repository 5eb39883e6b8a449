/**
 * The point scale as real Simulators give it (research F2) and the layouts that break a scale
 * taken from the tree's width (F9): the scale from `simctl getenv … SIMULATOR_MAINSCREEN_SCALE`,
 * coordinate input refused while it is unknown, iPad windows, letterboxed landscape-only apps and a
 * screenshot whose orientation does not match the tree.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import { parseMainScreen, ScreenScale } from "../../../drivers/ios-simulator/scale.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import type { DriverError } from "../../../src/driver/driver-error.ts";
import type { UiNode } from "../../../src/protocol/types/ui.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import {
  DEMO_BUNDLE,
  type DeviceSpec,
  decodePng,
  type FakeSimulators,
  PALETTE,
  startFakeSimulators,
} from "../../support/ios-sim/index.ts";

const ctx = (): CallContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 20_000,
  log: silentLogger,
});
const IPHONE = "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F";
const IPAD = "5B6C7D8E-9F01-4A23-8B45-6C7D8E9F0A1B";

async function attached(sims: FakeSimulators, udid = IPHONE) {
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: join(sims.binDir, "axe"),
    pollMs: 100,
    log: silentLogger,
  });
  await driver.start(() => {}, ctx());
  const id = `ios-simulator:${udid}`;
  await driver.connect(id, ctx());
  return { driver, udid, id, [Symbol.asyncDispose]: () => driver.stop() };
}

const fakes = (device: Partial<DeviceSpec>, udid = IPHONE) =>
  startFakeSimulators({ devices: [{ udid, state: "Booted", ...device }] });

async function code(p: Promise<unknown>): Promise<{ code: string; retryable?: boolean }> {
  try {
    await p;
  } catch (err) {
    const e = err as DriverError;
    const data = e.error.data as { retryable?: boolean; details?: { platformCode?: string } };
    return e.driverCode === "platform_error"
      ? { code: data.details?.platformCode as string, retryable: data.retryable }
      : { code: e.driverCode };
  }
  return { code: "no error" };
}

const axeTaps = (sims: FakeSimulators, from: number) =>
  sims
    .readLog("axe")
    .slice(from)
    .map((r) => r.argv)
    .filter((argv) => argv[0] === "tap");

const centre = (n: UiNode | undefined): { x: number; y: number } => {
  const b = n?.bounds;
  if (!b) throw new Error(`no bounds: ${JSON.stringify(n)}`);
  return { x: Math.round(b.x + b.width / 2), y: Math.round(b.y + b.height / 2) };
};
const ios = (o: { metadata: Record<string, unknown> }) => o.metadata.ios as Record<string, unknown>;
const lastInput = (sims: FakeSimulators, udid: string) => sims.device(udid).input.at(-1);
/** The screenshot's colour just inside the top-right corner of a node's bounds: where it is painted. */
const paintedAt = (png: Uint8Array | null, n: UiNode | undefined) => {
  const b = n?.bounds;
  if (!png || !b) return null;
  return decodePng(png).at(b.x + b.width - 4, b.y + 4) as readonly number[];
};

describe("the point scale from simctl getenv", () => {
  test("is read at connect, so taps go out in points before any tree has been seen", async () => {
    await using sims = await fakes({});
    await using a = await attached(sims);
    const getenv = sims
      .readLog("xcrun")
      .map((r) => r.argv)
      .filter((argv) => argv[1] === "getenv");
    expect(getenv.map((argv) => argv[3]).sort()).toEqual([
      "SIMULATOR_MAINSCREEN_HEIGHT",
      "SIMULATOR_MAINSCREEN_SCALE",
      "SIMULATOR_MAINSCREEN_WIDTH",
    ]);
    // A client without UI snapshots: screenshots only, never a tree.
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(o.viewport).toEqual({ width: 1206, height: 2622, scaleFactor: 3 });
    expect(ios(o)).toMatchObject({ scale: 3, scaleSource: "simctl", scaleCheck: "agrees" });
    const from = sims.readLog("axe").length;
    // The e-mail field's centre in pixels: (24 + 354 / 2, 221 + 44 / 2) points × 3.
    await a.driver.execute(a.id, { name: "tap", arguments: { x: 603, y: 729 } }, ctx());
    expect(axeTaps(sims, from)).toEqual([
      ["tap", "-x", "201", "-y", "243", "--tap-style", "physical", "--udid", IPHONE],
    ]);
    expect(lastInput(sims, IPHONE)?.target).toBe("login.email");
  });

  test("unknown (getenv answers nothing): coordinate input is refused with a retryable ios_scale_unknown, until a tree gives the scale", async () => {
    await using sims = await fakes({ mainScreenEnv: false });
    await using a = await attached(sims);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect(ios(o)).toMatchObject({ scale: null, scaleSource: null });
    const from = sims.readLog("axe").length;
    for (const call of [
      // (doubleTap is not offered on AXe at all: real-input.test.ts.)
      { name: "tap", arguments: { x: 603, y: 729 } },
      { name: "longPress", arguments: { x: 603, y: 729, durationMs: 800 } },
      { name: "swipe", arguments: { startX: 600, startY: 1800, endX: 600, endY: 600, durationMs: 300 } },
      { name: "scroll", arguments: { deltaX: 0, deltaY: 600 } },
    ])
      expect({ action: call.name, ...(await code(a.driver.execute(a.id, call, ctx()))) }).toEqual({
        action: call.name,
        code: "ios_scale_unknown",
        retryable: true,
      });
    expect(sims.readLog("axe").slice(from)).toEqual([]);
    // A screenshot with a full-screen tree agrees on both axes: 1206 / 402 = 2622 / 874 = 3.
    const withTree = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([withTree.viewport.scaleFactor, ios(withTree).scaleSource]).toEqual([3, "screenshot"]);
    await a.driver.execute(a.id, { name: "tap", arguments: { x: 603, y: 729 } }, ctx());
    expect(lastInput(sims, IPHONE)?.target).toBe("login.email");
  });

  test("unknown (getenv fails at connect): the device still connects, and the scale comes from the first tree", async () => {
    await using sims = await fakes({});
    // What CoreSimulator prints for a device it cannot look up (the fake's lookup error).
    sims.setFault({
      tool: "xcrun",
      command: "getenv",
      mode: "fail",
      exitCode: 149,
      stderr:
        "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to lookup in current state: Shutdown\n",
    });
    await using a = await attached(sims);
    sims.clearFaults();
    expect(await code(a.driver.execute(a.id, { name: "tap", arguments: { x: 603, y: 729 } }, ctx()))).toEqual({
      code: "ios_scale_unknown",
      retryable: true,
    });
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([o.viewport.scaleFactor, ios(o).scaleSource, o.uiTree?.nodes[0]?.bounds]).toEqual([
      3,
      "screenshot",
      { x: 0, y: 0, width: 1206, height: 2622 },
    ]);
  });

  test("getenv's answers are parsed as simctl prints them, and a pixel size that disagrees with the screenshot is not trusted", () => {
    expect(parseMainScreen("3.000000", "1206", "2622")).toEqual({ scale: 3, width: 1206, height: 2622 });
    expect(parseMainScreen("2.000000", null, null)).toEqual({ scale: 2, width: null, height: null });
    expect([
      parseMainScreen(null, "1206", "2622"),
      parseMainScreen("", null, null),
      parseMainScreen("0.000000", null, null),
    ]).toEqual([null, null, null]);
    const s = new ScreenScale();
    (s as unknown as { env: unknown }).env = parseMainScreen("3.000000", "1206", "2622");
    s.onScreenshot({ width: 2622, height: 1206 });
    expect(s.metadata()).toMatchObject({ scale: 3, scaleSource: "simctl", scaleCheck: "agrees" });
    s.onScreenshot({ width: 1640, height: 2360 });
    expect(s.metadata()).toMatchObject({ scale: null, scaleSource: null, scaleCheck: "disagrees" });
    expect(() => s.toPoints(10, 10)).toThrow();
  });
});

describe("layouts where the tree is not the portrait screen", () => {
  test("an iPad window at an origin (split view): the Simulator's scale, bounds offset by the window, taps on target", async () => {
    // iPad (A16): 820 × 1180 pt at 2x; the app in a 500 pt wide window on the right.
    await using sims = await fakes(
      {
        deviceType: "iPad (A16)",
        layouts: { [DEMO_BUNDLE]: { kind: "window", x: 320, y: 0, width: 500, height: 1180 } },
      },
      IPAD,
    );
    await using a = await attached(sims, IPAD);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(o.viewport).toEqual({ width: 1640, height: 2360, scaleFactor: 2 });
    expect(ios(o)).toMatchObject({ scaleSource: "simctl", layout: "window", orientationMismatch: false });
    const nodes = o.uiTree?.nodes ?? [];
    expect(nodes[0]?.bounds).toEqual({ x: 640, y: 0, width: 1000, height: 2360 });
    // The e-mail field: (320 + 24, 221) pt, 452 × 44 pt.
    const email = nodes.find((n) => n.identifier === "login.email");
    expect(email?.bounds).toEqual({ x: 688, y: 442, width: 904, height: 88 });
    // The switch (on) is painted where its bounds say.
    expect(
      paintedAt(
        o.screenshot,
        nodes.find((n) => n.identifier === "login.remember"),
      ),
    ).toEqual(PALETTE.light.on);
    await a.driver.execute(a.id, { name: "tap", arguments: centre(email) }, ctx());
    expect(lastInput(sims, IPAD)).toMatchObject({ x: 570, y: 243, target: "login.email" });
  });

  test("a landscape-only app letterboxed on a portrait iPhone: AXe's letterbox mapping for bounds and taps", async () => {
    await using sims = await fakes({ layouts: { [DEMO_BUNDLE]: { kind: "letterbox" } } });
    await using a = await attached(sims);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(o.viewport).toEqual({ width: 1206, height: 2622, scaleFactor: 3 });
    expect(ios(o)).toMatchObject({ scaleSource: "simctl", layout: "letterbox", orientationMismatch: false });
    // The 874 × 402 pt landscape UI fitted into 402 pt of width (× 402/874) and centred vertically.
    const fit = 402 / 874;
    const offY = (874 - 402 * fit) / 2;
    const nodes = o.uiTree?.nodes ?? [];
    expect(nodes[0]?.bounds).toEqual({ x: 0, y: Math.round(offY * 3), width: 1206, height: Math.round(402 * fit * 3) });
    const email = nodes.find((n) => n.identifier === "login.email");
    expect(email?.bounds).toEqual({
      x: Math.round(24 * fit * 3),
      y: Math.round(221 * fit * 3) + Math.round(offY * 3),
      width: Math.round(826 * fit * 3),
      height: Math.round(44 * fit * 3),
    });
    expect(paintedAt(o.screenshot, email)).toEqual(PALETTE.light.field);
    const from = sims.readLog("axe").length;
    await a.driver.execute(a.id, { name: "tap", arguments: centre(email) }, ctx());
    // AXe ≥ 1.7 takes the tree's logical points and maps them itself.
    expect(lastInput(sims, IPHONE)?.target).toBe("login.email");
    const [, , x, , y] = axeTaps(sims, from)[0] ?? [];
    expect([Math.abs(Number(x) - 437) < 2, Math.abs(Number(y) - 243) < 2]).toEqual([true, true]);
    // The bars above and below the app are no part of it.
    expect(await code(a.driver.execute(a.id, { name: "tap", arguments: { x: 600, y: 100 } }, ctx()))).toEqual({
      code: "ios_point_outside_app",
      retryable: false,
    });
  });

  test("a portrait tree on a landscape-shaped screenshot: ios.orientationMismatch, null bounds, coordinate input refused", async () => {
    await using sims = await fakes({ screenshotRotated: true });
    await using a = await attached(sims);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(o.viewport).toEqual({ width: 2622, height: 1206, scaleFactor: 3 });
    expect(ios(o)).toMatchObject({ scaleSource: "simctl", layout: "mismatch", orientationMismatch: true });
    expect(o.uiTree?.nodes.some((n) => n.identifier === "login.email")).toBe(true);
    expect(o.uiTree?.nodes.every((n) => n.bounds === null)).toBe(true);
    const from = sims.readLog("axe").length;
    expect(await code(a.driver.execute(a.id, { name: "tap", arguments: { x: 603, y: 729 } }, ctx()))).toEqual({
      code: "ios_orientation_mismatch",
      retryable: false,
    });
    expect(axeTaps(sims, from)).toEqual([]);
  });
});
