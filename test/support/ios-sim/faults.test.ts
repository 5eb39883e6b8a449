import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";
import { startFakeSimulators } from "./fake-simulators.ts";

const FIXTURES = join(import.meta.dir, "../../../fixtures/platform/ios");
const U = "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F";
const SE = "C3D4E5F6-0718-4A2B-8C9D-0E1F2A3B4C5D";

/**
 * Resolves once `check` holds, checking again whenever a file in `dir` changes: the fakes are other
 * processes that report through files there (the command log, the files they write).
 */
async function whenFiles(dir: string, check: () => boolean, ms = 5000): Promise<void> {
  const reached = Promise.withResolvers<void>();
  // A change may be seen while a line is still being written; the next change checks again.
  let failure: unknown = null;
  const recheck = () => {
    try {
      if (check()) reached.resolve();
    } catch (err) {
      failure = err;
    }
  };
  const watcher = watch(dir, recheck);
  const timer = setTimeout(
    () =>
      reached.reject(
        new Error(`condition not reached within ${ms} ms${failure ? `; last check failed: ${failure}` : ""}`),
      ),
    ms,
  );
  try {
    recheck();
    await reached.promise;
  } finally {
    clearTimeout(timer);
    watcher.close();
  }
}

describe("fault: hang", () => {
  test("a hanging command runs until it is killed, and the log shows it never exited", async () => {
    await using sim = await startFakeSimulators({ tools: ["xcrun"] });
    sim.setFault({ tool: "xcrun", command: "io", mode: "hang" });
    const r = await sim.run("xcrun", ["simctl", "io", U, "screenshot", "-"], { timeoutMs: 400 });
    expect([r.exitCode, r.signalCode, r.stdout.length]).toEqual([null, "SIGTERM", 0]);
    expect(sim.readLog("xcrun").map((x) => [x.exitCode, x.signal])).toEqual([[null, "SIGTERM"]]);
    expect((await sim.run("xcrun", ["simctl", "list", "devices", "-j"])).exitCode).toBe(0);
  });

  test("disposing the fixture ends a fake that still hangs, by its pid", async () => {
    const sim = await startFakeSimulators({ tools: ["axe"] });
    sim.setFault({ tool: "axe", mode: "hang" });
    const proc = Bun.spawn(["axe", "describe-ui", "--udid", U], { env: sim.env, stdout: "ignore", stderr: "ignore" });
    await whenFiles(sim.stateDir, () => sim.readLog("axe").length === 1);
    await sim[Symbol.asyncDispose]();
    expect(await proc.exited).not.toBe(0);
    expect(proc.signalCode).toBe("SIGKILL");
  });
});

describe("fault: slow, fail, malformed output", () => {
  test("slow delays the answer by the given milliseconds, for `times` calls only", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    sim.setFault({ tool: "axe", command: "describe-ui", mode: "slow", ms: 400, times: 1 });
    const t0 = performance.now();
    expect((await sim.run("axe", ["describe-ui", "--udid", U])).exitCode).toBe(0);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(400);
    expect(sim.state().faults).toEqual([]);
  });

  test("malformed-json cuts stdout in half; node-simctl-style callers then fall back", async () => {
    await using sim = await startFakeSimulators({ tools: ["xcrun", "axe"] });
    sim.setFault({ tool: "xcrun", command: "list", mode: "malformed-json", times: 1 });
    sim.setFault({ tool: "axe", command: "describe-ui", mode: "malformed-json", times: 1 });
    const list = await sim.run("xcrun", ["simctl", "list", "devices", "-j"]);
    expect(list.exitCode).toBe(0);
    expect(() => JSON.parse(list.text)).toThrow();
    const ui = await sim.run("axe", ["describe-ui", "--udid", U]);
    expect(() => JSON.parse(ui.text)).toThrow();
    expect(JSON.parse((await sim.run("xcrun", ["simctl", "list", "devices", "-j"])).text)).toHaveProperty("devices");
  });

  test("fail answers with the given exit code and stderr", async () => {
    await using sim = await startFakeSimulators({ tools: ["xcrun"] });
    sim.setFault({
      tool: "xcrun",
      command: "io",
      udid: U,
      mode: "fail",
      exitCode: 60,
      stderr: "timeout waiting for screen surfaces\n",
      times: 1,
    });
    const r = await sim.run("xcrun", ["simctl", "io", "booted", "screenshot", "-"]);
    expect([r.exitCode, r.stderr]).toEqual([60, "timeout waiting for screen surfaces\n"]);
    expect((await sim.run("xcrun", ["simctl", "io", "booted", "screenshot", "-"])).exitCode).toBe(0);
  });
});

describe("fault: simulator shut down mid-call", () => {
  test("simctl fails with the lookup error and the device is Shutdown afterwards", async () => {
    await using sim = await startFakeSimulators({ tools: ["xcrun", "axe"] });
    sim.setFault({ tool: "xcrun", command: "io", mode: "shutdown-mid-call", ms: 10 });
    const r = await sim.run("xcrun", ["simctl", "io", U, "screenshot", "-"]);
    expect([r.exitCode, r.stderr]).toEqual([
      149,
      "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to lookup in current state: Shutdown\n",
    ]);
    expect(sim.device(U).state).toBe("Shutdown");
    expect((await sim.run("axe", ["tap", "-x", "1", "-y", "1", "--udid", U])).stderr).toBe(
      `Error: Simulator ${U} is not booted. Current state: Shutdown.\n`,
    );
  });

  test("AXe fails with its not-booted error", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    sim.setFault({ tool: "axe", command: "describe-ui", mode: "shutdown-mid-call" });
    const r = await sim.run("axe", ["describe-ui", "--udid", U]);
    expect([r.exitCode, r.text, r.stderr]).toEqual([
      1,
      "",
      `Error: Simulator ${U} is not booted. Current state: Shutdown.\n`,
    ]);
  });

  test("WebDriverAgent drops the connection and is gone afterwards", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const wda = sim.wda as NonNullable<typeof sim.wda>;
    sim.setFault({ tool: "wda", command: "GET /source", mode: "shutdown-mid-call" });
    await expect(fetch(`${wda.url}/source?format=json`)).rejects.toThrow();
    // The fake marks itself stopped before it drops the connection that failed the fetch.
    expect(wda.running).toBe(false);
    expect(sim.device(U).state).toBe("Shutdown");
    await expect(fetch(`${wda.url}/status`)).rejects.toThrow();
  });
});

describe("boot timing and the empty tree after boot", () => {
  test("describe-ui answers the empty AXApplication for the first N reads after a boot", async () => {
    await using sim = await startFakeSimulators({
      devices: [{ udid: SE, deviceType: "iPhone SE (3rd generation)", emptyTreeAfterBoot: 2 }],
    });
    expect((await sim.run("xcrun", ["simctl", "boot", SE])).exitCode).toBe(0);
    expect((await sim.run("xcrun", ["simctl", "launch", SE, "com.acme.app"])).text).toBe("com.acme.app: 41872\n");
    const empty = JSON.parse(readFileSync(join(FIXTURES, "axe/describe-ui-empty-after-boot.json"), "utf8"));
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(JSON.parse((await sim.run("axe", ["describe-ui", "--udid", SE])).text));
    expect(reads.slice(0, 2)).toEqual([empty, empty]);
    expect(reads[2][0].AXFrame).toBe("{{0, 0}, {375, 667}}");
    expect(reads[2][0].children.length).toBeGreaterThan(0);
  });

  test("with a boot delay the device lists as Booting until bootstatus sees it finish", async () => {
    await using sim = await startFakeSimulators({
      tools: ["xcrun"],
      devices: [{ udid: SE, deviceType: "iPhone SE (3rd generation)", bootDelayMs: 600 }],
    });
    await sim.run("xcrun", ["simctl", "boot", SE]);
    const listed = JSON.parse((await sim.run("xcrun", ["simctl", "list", "devices", "-j"])).text).devices[
      "com.apple.CoreSimulator.SimRuntime.iOS-26-5"
    ][0].state;
    expect(listed).toBe("Booting");
    const status = await sim.run("xcrun", ["simctl", "bootstatus", SE]);
    expect(status.exitCode).toBe(0);
    expect(status.text).toMatch(
      /^Monitoring boot status for iPhone SE \(3rd generation\) \(C3D4E5F6-0718-4A2B-8C9D-0E1F2A3B4C5D\)\.\n\[[\d: +-]+\] Status=4294967295, isTerminal=YES, Elapsed=00:0\d\.\n\tFinished\n\n$/,
    );
    expect(sim.device(SE).state).toBe("Booted");
    expect((await sim.run("xcrun", ["simctl", "bootstatus", SE, "-b"])).text).toBe(
      `Monitoring boot status for iPhone SE (3rd generation) (${SE}).\nDevice already booted, nothing to do.\n`,
    );
  });
});

describe("recordVideo", () => {
  test("runs until SIGINT, which finalizes the file; SIGKILL leaves it incomplete", async () => {
    await using sim = await startFakeSimulators({ tools: ["xcrun"] });
    const start = (file: string) => {
      const proc = Bun.spawn(["xcrun", "simctl", "io", U, "recordVideo", "--codec=h264", file], {
        env: sim.env,
        stdout: "pipe",
        stderr: "pipe",
      });
      return proc;
    };
    // Recording: the recorder wrote its placeholder (not just created the file).
    const recording = (file: string) =>
      existsSync(file) && readFileSync(file, "utf8") === "fake-recordVideo incomplete\n";
    const good = join(sim.stateDir, "good.mp4");
    const a = start(good);
    await whenFiles(sim.stateDir, () => sim.readLog("xcrun").length === 1 && recording(good));
    a.kill("SIGINT");
    expect(await a.exited).toBe(0);
    expect(readFileSync(good, "utf8")).toStartWith("fake-recordVideo finalized codec=h264");
    const bad = join(sim.stateDir, "bad.mp4");
    const b = start(bad);
    await whenFiles(sim.stateDir, () => sim.readLog("xcrun").length === 2 && recording(bad));
    b.kill("SIGKILL");
    await b.exited;
    expect(readFileSync(bad, "utf8")).toBe("fake-recordVideo incomplete\n");
  });
});
