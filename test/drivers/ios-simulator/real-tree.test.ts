/**
 * The iOS driver against what real Simulators, AXe and Xcode do (issue 25; research note
 * ios-real-simulators.md F1, F8 and §4): the tree independent of the screenshot, a real backend
 * probe at connect with the Xcode/AXe pairing checked, AXe found outside PATH, the Command Line
 * Tools detected, only iPhones and iPads listed, and the screen-surfaces timeout retried.
 */
import { describe, expect, test } from "bun:test";
import { children } from "../../support/child-processes.ts";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import type { CallContext, DeviceChange, RawObservation } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { type Logger, silentLogger } from "../../../src/protocol/rpc-error.ts";
import { spawnDaemon } from "../../support/daemon.ts";
import {
  type FakeSimulators,
  type FakeSimulatorsOptions,
  startFakeSimulators,
} from "../../support/ios-sim/fake-simulators.ts";
import type { XcodeSpec } from "../../support/ios-sim/xcode.ts";

const ctx = (ms = 20_000, log: Logger = silentLogger): CallContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + ms,
  log,
});

/** A logger that keeps every line. */
function recorder() {
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const log: Logger = {
    debug: (obj, msg = "") => void lines.push({ level: "debug", obj: obj as Record<string, unknown>, msg }),
    info: (obj, msg = "") => void lines.push({ level: "info", obj: obj as Record<string, unknown>, msg }),
    warn: (obj, msg = "") => void lines.push({ level: "warn", obj: obj as Record<string, unknown>, msg }),
    error: (obj, msg = "") => void lines.push({ level: "error", obj: obj as Record<string, unknown>, msg }),
    child: () => log,
  };
  return { log, lines };
}

interface Attach {
  axePath?: string | null;
  axeCandidates?: string[];
  pathEnv?: string;
  wda?: boolean;
  log?: Logger;
}

async function attached(sims: FakeSimulators, opts: Attach = {}) {
  const changes: DeviceChange[] = [];
  const log = opts.log ?? silentLogger;
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: opts.axePath === undefined ? join(sims.binDir, "axe") : opts.axePath,
    ...(opts.axeCandidates ? { axeCandidates: opts.axeCandidates } : {}),
    ...(opts.pathEnv !== undefined ? { pathEnv: opts.pathEnv } : {}),
    ...(opts.wda ? { wdaEndpoint: sims.wda?.url as string } : {}),
    pollMs: 100,
    log,
  });
  await driver.start((c) => changes.push(c), ctx(20_000, log));
  const udid = sims.device().udid;
  const id = `ios-simulator:${udid}`;
  await driver.connect(id, ctx(20_000, log));
  return { driver, udid, id, changes, [Symbol.asyncDispose]: () => driver.stop() };
}

const ios = (o: RawObservation) => (o.metadata as { ios: Record<string, unknown> }).ios;
const isPng = (b: Uint8Array | null) => b !== null && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47;

async function failure(p: Promise<unknown>): Promise<DriverError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DriverError) return err;
    throw err;
  }
  throw new Error("expected a DriverError, got success");
}

const describes = (sims: FakeSimulators, from = 0) =>
  sims
    .readLog("axe")
    .slice(from)
    .filter((r) => r.argv[0] === "describe-ui").length;

describe("F1: the screenshot survives a failed tree read", () => {
  test("malformed describe-ui JSON: the observation has its screenshot and uiTreeError ios_malformed_tree", async () => {
    await using sims = await startFakeSimulators();
    await using a = await attached(sims);
    sims.setFault({ tool: "axe", command: "describe-ui", mode: "malformed-json", times: 1 });
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([isPng(o.screenshot), o.viewport.width, o.uiTree]).toEqual([true, 1206, null]);
    expect([o.uiTreeError?.driverCode, o.uiTreeError?.platformCode]).toEqual(["platform_error", "ios_malformed_tree"]);
    // The next read is whole again: nothing about the device was given up.
    const next = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([next.uiTreeError ?? null, next.uiTree?.nodes.some((n) => n.identifier === "login.email")]).toEqual([
      null,
      true,
    ]);
  });

  test("AXe's error exit (No translation object returned, XcodeBuildMCP #458): screenshot plus uiTreeError ios_axe_failed, and input still goes to AXe", async () => {
    await using sims = await startFakeSimulators();
    await using a = await attached(sims);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    sims.update(
      (s) => void ((s.devices.find((d) => d.udid === a.udid) as { noTranslation: boolean }).noTranslation = true),
    );
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([isPng(o.screenshot), o.uiTree, o.uiTreeError?.platformCode, o.uiTreeError?.error.data.retryable]).toEqual([
      true,
      null,
      "ios_axe_failed",
      true,
    ]);
    expect(o.uiTreeError?.detail).toContain("No translation object returned for simulator");
    expect(ios(o).backend).toBe("axe");
    await a.driver.execute(a.id, { name: "home", arguments: {} }, ctx());
    expect(sims.readLog("axe").at(-1)?.argv).toEqual(["button", "home", "--udid", a.udid]);
  });

  test("a describe-ui that hangs is killed before the call's deadline: the screenshot comes back with uiTreeError driver_timed_out", async () => {
    await using sims = await startFakeSimulators();
    await using a = await attached(sims);
    sims.setFault({ tool: "axe", command: "describe-ui", mode: "hang" });
    const started = Date.now();
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx(4_000));
    expect(Date.now() - started).toBeLessThan(4_000);
    expect([isPng(o.screenshot), o.uiTree, o.uiTreeError?.driverCode]).toEqual([true, null, "driver_timed_out"]);
    expect(children("describe-ui")).toEqual([]);
  });
});

describe("F1 through the daemon: a device whose tree fails stays usable", () => {
  const daemonEnv = (sims: FakeSimulators, extra: Record<string, string> = {}) => ({
    PATH: sims.env.PATH as string,
    DEVICERAIL_IOS: "auto",
    ...Object.fromEntries(Object.entries(sims.env).filter(([k]) => k.startsWith("DEVICERAIL_FAKE"))),
    ...extra,
  });

  test("every describe-ui malformed: observations keep their screenshot with metadata.uiTreeError, and a tap still runs", async () => {
    await using sims = await startFakeSimulators();
    await using d = spawnDaemon({ env: daemonEnv(sims) });
    await d.hello();
    const id = `ios-simulator:${sims.device().udid}`;
    await d.call("device.select", { deviceId: id });
    await d.call("device.connect");
    await d.call("session.start");
    sims.setFault({ tool: "axe", command: "describe-ui", mode: "malformed-json" });
    const obs = await d.call("device.observe");
    expect(obs.error).toBeUndefined();
    expect([obs.result.screenshot !== null, obs.result.uiSnapshot ?? null, obs.result.uiSnapshotOmission]).toEqual([
      true,
      null,
      "driverUnsupported",
    ]);
    expect(obs.result.metadata.uiTreeError).toEqual({
      code: "platform_error",
      platformCode: "ios_malformed_tree",
      retryable: false,
      message: expect.any(String),
    });
    expect(obs.result.metadata.ios).toMatchObject({
      backend: "axe",
      backendReason: null,
      axeVersion: "1.8.0",
      xcodeVersion: "26.5",
    });
    const tap = await d.call(
      "device.execute",
      { id: crypto.randomUUID(), name: "tap", arguments: { x: 300, y: 600 } },
      { timeoutMs: 20_000 },
    );
    expect(tap.error).toBeUndefined();
    expect(tap.result.output).toEqual({ accepted: true, x: 300, y: 600 });
    await d.call("session.end");
    expect(await d.close()).toBe(0);
  }, 60_000);

  test("DEVICERAIL_IOS=required with the Command Line Tools selected stops start-up with the xcode-select fix", async () => {
    await using sims = await startFakeSimulators({ xcode: "command-line-tools" });
    await using d = spawnDaemon({ env: daemonEnv(sims, { DEVICERAIL_IOS: "required" }) });
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain("sudo xcode-select -s /Applications/Xcode.app");
  }, 30_000);
});

describe("F1: the backend probe at connect", () => {
  async function probed(options: FakeSimulatorsOptions, attach: Attach = {}) {
    const sims = await startFakeSimulators(options);
    const a = await attached(sims, attach);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    return {
      sims,
      a,
      o,
      meta: ios(o),
      async [Symbol.asyncDispose]() {
        await a.driver.stop();
        await sims[Symbol.asyncDispose]();
      },
    };
  }

  test("AXe 1.8.0 with Xcode 26.5: AXe, with the versions in the observation's metadata", async () => {
    await using p = await probed({});
    expect(p.meta).toMatchObject({ backend: "axe", backendReason: null, axeVersion: "1.8.0", xcodeVersion: "26.5" });
    // The probe is a real tree read, not only --version.
    expect(
      p.sims
        .readLog("axe")
        .slice(0, 2)
        .map((r) => r.argv),
    ).toEqual([["--version"], ["describe-ui", "--udid", p.a.udid]]);
  });

  test("AXe 1.8.0 with Xcode 16.4 selected: ios_axe_xcode_unsupported naming the Xcode AXe 1.8 supports, screenshot-only", async () => {
    await using p = await probed({ xcode: { version: "16.4", build: "16F6" } });
    expect(p.meta).toMatchObject({
      backend: "none",
      backendReason: "ios_axe_xcode_unsupported",
      axeVersion: "1.8.0",
      xcodeVersion: "16.4",
    });
    // The probe's reason is also the observation's tree-omission reason.
    expect([p.o.uiTree, isPng(p.o.screenshot), p.o.uiTreeError?.platformCode]).toEqual([
      null,
      true,
      "ios_axe_xcode_unsupported",
    ]);
    expect((await p.a.driver.actions(p.a.id)).map((d) => d.name)).toEqual([
      "launch",
      "terminate",
      "openUrl",
      "setAppearance",
    ]);
    expect(p.a.driver.supportsElements(p.a.id)).toBe(false);
    const e = await failure(p.a.driver.elements.tapPoint(p.a.id, { x: 10, y: 10 }, ctx()));
    expect(e.platformCode).toBe("ios_input_unavailable");
    expect(e.message).toContain("AXe 1.8.0 supports Xcode 26 and 27 only, and Xcode 16 is selected");
    expect(e.message).toContain("sudo xcode-select -s /Applications/Xcode.app");
  });

  test("AXe 1.7.1 with Xcode 27.0 (XcodeBuildMCP #453): ios_axe_xcode_unsupported naming AXe 1.8.0", async () => {
    await using p = await probed({ axeVersion: "1.7.1", xcode: { version: "27.0", build: "27A5194q" } });
    expect(p.meta).toMatchObject({
      backend: "none",
      backendReason: "ios_axe_xcode_unsupported",
      axeVersion: "1.7.1",
      xcodeVersion: "27.0",
    });
    const e = await failure(p.a.driver.elements.tapPoint(p.a.id, { x: 10, y: 10 }, ctx()));
    expect(e.message).toContain("AXe 1.8.0 is the first release that supports Xcode 27");
  });

  test("a pairing no table knows (AXe 1.8.0, Xcode 28.0) is decided by the describe-ui probe: AXe's own refusal gives ios_axe_xcode_unsupported", async () => {
    await using p = await probed({ xcode: { version: "28.0", build: "28A1" } });
    expect(p.meta).toMatchObject({ backend: "none", backendReason: "ios_axe_xcode_unsupported", xcodeVersion: "28.0" });
    const e = await failure(p.a.driver.elements.tapPoint(p.a.id, { x: 10, y: 10 }, ctx()));
    expect(e.message).toContain("AXe could not load simulator support from the selected Xcode installation");
  });

  test("AXe older than 1.7.0 is ios_axe_too_old; a development build's version is ios_axe_version_unparsable", async () => {
    {
      await using p = await probed({ axeVersion: "1.6.0" });
      expect(p.meta).toMatchObject({ backend: "none", backendReason: "ios_axe_too_old", axeVersion: "1.6.0" });
      expect((await failure(p.a.driver.elements.tapPoint(p.a.id, { x: 1, y: 1 }, ctx()))).message).toContain(
        "older than 1.7.0",
      );
    }
    {
      // The golden `axe --version` of a dev build (research note A1).
      await using p = await probed({ axeVersion: "staging-main-58-51cfaf7-dirty" });
      expect(p.meta).toMatchObject({ backend: "none", backendReason: "ios_axe_version_unparsable", axeVersion: null });
    }
  });

  test("no AXe anywhere is ios_axe_not_found; a tree read failing at connect is ios_axe_failed; both fall back to a WebDriverAgent", async () => {
    {
      await using p = await probed({ wda: true }, { axePath: "/nonexistent/axe", wda: true });
      expect(p.meta).toMatchObject({ backend: "wda", backendReason: "ios_axe_not_found", axeVersion: null });
      expect(p.o.uiTree?.nodes.some((n) => n.identifier === "login.email")).toBe(true);
    }
    {
      const sims = await startFakeSimulators();
      sims.update(
        (s) => void ((s.devices.find((d) => d.state === "Booted") as { noTranslation: boolean }).noTranslation = true),
      );
      await using _s = sims;
      await using a = await attached(sims);
      const o = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
      expect(ios(o)).toMatchObject({ backend: "none", backendReason: "ios_axe_failed", axeVersion: "1.8.0" });
    }
  });

  test("a probe tree read slower than its 2 s ceiling keeps AXe (real trees take seconds) and connect does not wait it out", async () => {
    const sims = await startFakeSimulators();
    await using _s = sims;
    sims.setFault({ tool: "axe", command: "describe-ui", mode: "hang", times: 1 });
    const started = Date.now();
    await using a = await attached(sims);
    expect(Date.now() - started).toBeLessThan(6_000);
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([ios(o).backend, ios(o).backendReason, o.uiTree !== null]).toEqual(["axe", null, true]);
  });
});

describe("F8: AXe outside the daemon's PATH", () => {
  function installPlaces(sims: FakeSimulators) {
    const root = mkdtempSync(join(tmpdir(), "devicerail-axe-places-"));
    const homebrew = join(root, "opt/homebrew/bin");
    const local = join(root, "usr/local/bin");
    mkdirSync(homebrew, { recursive: true });
    mkdirSync(local, { recursive: true });
    // Homebrew on Intel: /usr/local/bin/axe, here the fake's wrapper.
    writeFileSync(join(local, "axe"), readFileSync(join(sims.binDir, "axe")));
    chmodSync(join(local, "axe"), 0o755);
    return {
      root,
      candidates: [join(homebrew, "axe"), join(local, "axe"), join(root, "home/.local/bin/axe")],
      [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
    };
  }

  test("with a GUI host's PATH (/usr/bin:/bin:/usr/sbin:/sbin) AXe is found in an install place, and the choice is logged", async () => {
    await using sims = await startFakeSimulators();
    using places = installPlaces(sims);
    const { log, lines } = recorder();
    await using a = await attached(sims, {
      axePath: null,
      pathEnv: "/usr/bin:/bin:/usr/sbin:/sbin",
      axeCandidates: places.candidates,
      log,
    });
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([ios(o).backend, o.uiTree !== null]).toEqual(["axe", true]);
    expect(lines.find((l) => l.msg === "AXe found")?.obj).toEqual({
      axe: places.candidates[1],
      via: "install place",
      tried: [`PATH (/usr/bin:/bin:/usr/sbin:/sbin)`, ...places.candidates],
    });
  });

  test("AXe on PATH comes first; nowhere at all gives ios_axe_not_found with every place looked in", async () => {
    await using sims = await startFakeSimulators();
    using places = installPlaces(sims);
    {
      const { log, lines } = recorder();
      await using a = await attached(sims, {
        axePath: null,
        pathEnv: sims.binDir,
        axeCandidates: places.candidates,
        log,
      });
      expect(lines.find((l) => l.msg === "AXe found")?.obj).toMatchObject({
        axe: join(sims.binDir, "axe"),
        via: "PATH",
      });
      expect(a.driver.supportsElements(a.id)).toBe(true);
    }
    {
      const missing = [join(places.root, "nowhere/axe")];
      await using a = await attached(sims, { axePath: null, pathEnv: "/usr/bin:/bin", axeCandidates: missing });
      const e = await failure(a.driver.elements.tapPoint(a.id, { x: 1, y: 1 }, ctx()));
      expect(e.message).toContain(`AXe was not found (looked in PATH (/usr/bin:/bin), ${missing[0]})`);
      expect(e.message).toContain("brew install cameroncooke/axe/axe");
    }
  });
});

describe("§4: Command Line Tools, other platforms, screen surfaces", () => {
  test("the Command Line Tools selected instead of Xcode: start fails with ios_xcode_not_selected and the xcode-select fix", async () => {
    await using sims = await startFakeSimulators({ xcode: "command-line-tools" satisfies XcodeSpec });
    const driver = new IosSimulatorDriver({
      xcrunPath: join(sims.binDir, "xcrun"),
      axePath: join(sims.binDir, "axe"),
      pollMs: 100,
      log: silentLogger,
    });
    const e = await failure(driver.start(() => {}, ctx()));
    await driver.stop();
    expect([e.platformCode, e.error.data.retryable]).toEqual(["ios_xcode_not_selected", false]);
    expect(e.message).toContain("sudo xcode-select -s /Applications/Xcode.app");
    expect(e.detail).toBe('xcrun: error: unable to find utility "simctl", not a developer tool or in PATH');
  });

  test("only iPhone and iPad Simulators are listed: a booted Apple Watch, Apple TV and Vision Pro are not", async () => {
    await using sims = await startFakeSimulators({
      runtimes: [
        "com.apple.CoreSimulator.SimRuntime.iOS-26-5",
        "com.apple.CoreSimulator.SimRuntime.watchOS-11-5",
        "com.apple.CoreSimulator.SimRuntime.tvOS-26-5",
        "com.apple.CoreSimulator.SimRuntime.xrOS-26-0",
      ],
      devices: [
        { udid: "11111111-0000-4000-8000-000000000001", deviceType: "iPhone 17 Pro", state: "Booted" },
        { udid: "11111111-0000-4000-8000-000000000002", deviceType: "iPad (A16)", state: "Booted" },
        {
          udid: "11111111-0000-4000-8000-000000000003",
          deviceType: "Apple Watch Series 10 (46mm)",
          runtime: "com.apple.CoreSimulator.SimRuntime.watchOS-11-5",
          state: "Booted",
          demoRunning: false,
        },
        {
          udid: "11111111-0000-4000-8000-000000000004",
          deviceType: "Apple TV 4K (3rd generation)",
          runtime: "com.apple.CoreSimulator.SimRuntime.tvOS-26-5",
          state: "Booted",
          demoRunning: false,
        },
        {
          udid: "11111111-0000-4000-8000-000000000005",
          deviceType: "Apple Vision Pro",
          runtime: "com.apple.CoreSimulator.SimRuntime.xrOS-26-0",
          state: "Booted",
          demoRunning: false,
        },
      ],
    });
    const listed = JSON.parse((await sims.run("xcrun", ["simctl", "list", "devices", "-j"])).text).devices;
    expect(Object.values(listed).flat().length).toBe(5);
    await using a = await attached(sims);
    expect(a.changes.map((c) => (c.type === "present" ? [c.device.name, c.device.platform.kind] : null))).toEqual([
      ["iPhone 17 Pro", "ios"],
      ["iPad (A16)", "ios"],
    ]);
  });

  test("Timeout waiting for screen surfaces is retried twice, then typed ios_screen_surfaces_timeout", async () => {
    await using sims = await startFakeSimulators();
    await using a = await attached(sims);
    const screenshots = () => sims.readLog("xcrun").filter((r) => r.argv[1] === "io").length;
    const surfaces = (n: number) =>
      sims.update(
        (s) =>
          void ((
            s.devices.find((d) => d.udid === a.udid) as { screenSurfacesTimeouts: number }
          ).screenSurfacesTimeouts = n),
      );
    surfaces(2);
    let from = screenshots();
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx());
    expect([isPng(o.screenshot), screenshots() - from]).toEqual([true, 3]);
    surfaces(3);
    from = screenshots();
    const e = await failure(a.driver.observe(a.id, { screenshot: true, uiTree: false }, ctx()));
    expect([e.platformCode, e.error.data.retryable, screenshots() - from]).toEqual([
      "ios_screen_surfaces_timeout",
      true,
      3,
    ]);
    expect(e.message).toContain("Timeout waiting for screen surfaces");
  });
});

describe("the fakes' new modes print what the real tools print", () => {
  test("xcrun xcodebuild -version, and xcrun with the Command Line Tools selected", async () => {
    {
      await using sims = await startFakeSimulators({ tools: ["xcrun"] });
      const r = await sims.run("xcrun", ["xcodebuild", "-version"]);
      expect([r.exitCode, r.text]).toEqual([0, "Xcode 26.5\nBuild version 17F42\n"]);
    }
    {
      await using sims = await startFakeSimulators({ tools: ["xcrun"], xcode: "command-line-tools" });
      const simctl = await sims.run("xcrun", ["simctl", "list", "devices", "-j"]);
      expect([simctl.exitCode, simctl.stderr]).toEqual([
        72,
        'xcrun: error: unable to find utility "simctl", not a developer tool or in PATH\n',
      ]);
      const xcodebuild = await sims.run("xcrun", ["xcodebuild", "-version"]);
      expect(xcodebuild.stderr).toBe(
        "xcode-select: error: tool 'xcodebuild' requires Xcode, but active developer directory '/Library/Developer/CommandLineTools' is a command line tools instance\n",
      );
    }
  });

  test("AXe that cannot drive the selected Xcode, a wedged bridge, and the screen-surfaces timeout", async () => {
    await using sims = await startFakeSimulators({ xcode: { version: "16.4", build: "16F6" } });
    const udid = sims.device().udid;
    expect((await sims.run("axe", ["--version"])).text).toBe("1.8.0\n");
    const tap = await sims.run("axe", ["tap", "-x", "1", "-y", "1", "--udid", udid]);
    expect([tap.exitCode, tap.stderr]).toEqual([
      1,
      "Error: AXe could not load simulator support from the selected Xcode installation. Confirm Xcode 26 or later is selected and try again.\n",
    ]);
    sims.update((s) => void (s.xcode = { version: "26.5", build: "17F42" }));
    sims.update(
      (s) => void ((s.devices.find((d) => d.udid === udid) as { noTranslation: boolean }).noTranslation = true),
    );
    const tree = await sims.run("axe", ["describe-ui", "--udid", udid]);
    expect([tree.exitCode, tree.stderr]).toEqual([
      1,
      "Error: No translation object returned for simulator. This means you have likely specified a point onscreen that is invalid or invisible due to a fullscreen dialog\n",
    ]);
    sims.update(
      (s) =>
        void ((s.devices.find((d) => d.udid === udid) as { screenSurfacesTimeouts: number }).screenSurfacesTimeouts =
          1),
    );
    const shot = await sims.run("xcrun", ["simctl", "io", udid, "screenshot", "--type=png", "-"]);
    expect([shot.exitCode, shot.stderr]).toEqual([
      60,
      "An error was encountered processing the command (domain=NSPOSIXErrorDomain, code=60):\nTimeout waiting for screen surfaces\n",
    ]);
  });
});
