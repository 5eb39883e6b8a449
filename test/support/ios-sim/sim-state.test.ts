import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appleJson } from "./apple-json.ts";
import { DEVICE_TYPES } from "./device-catalog.ts";
import { startFakeSimulators } from "./fake-simulators.ts";
import { pngSize } from "./png-pixels.ts";
import { screenshotPng } from "./screenshot.ts";
import { createDevice, createState, takeFaults, transact } from "./sim-state.ts";

describe("appleJson", () => {
  test("prints like JSONSerialization .prettyPrinted: ' : ', blank line in empty containers, escaped slashes", () => {
    expect(appleJson({ a: [], b: {}, c: "x/y", d: [1, { e: null, f: true }], g: 'tab\there "q" é' })).toBe(
      '{\n  "a" : [\n\n  ],\n  "b" : {\n\n  },\n  "c" : "x\\/y",\n  "d" : [\n    1,\n    {\n      "e" : null,\n      "f" : true\n    }\n  ],\n  "g" : "tab\\there \\"q\\" é"\n}',
    );
    expect(appleJson({ p: "/a/b" }, { escapeSlashes: false })).toBe('{\n  "p" : "/a/b"\n}');
  });
});

describe("sim-state", () => {
  test("screenshots are points × scale for every known device type", () => {
    const pids = { next: 1 };
    for (const t of DEVICE_TYPES) {
      const d = createDevice({ deviceType: t.identifier, state: "Booted" }, pids);
      expect({ type: t.name, ...pngSize(screenshotPng(d)) }).toEqual({
        type: t.name,
        width: t.screen.width * t.screen.scale,
        height: t.screen.height * t.screen.scale,
      });
    }
  });

  test("faults match by tool, command and device, and `times` counts down to removal", () => {
    const s = createState({
      faults: [
        { tool: "axe", command: "tap", mode: "slow", ms: 5, times: 2 },
        { tool: "xcrun", udid: "U1", mode: "hang" },
      ],
    });
    expect(takeFaults(s, "axe", "describe-ui", "U1")).toEqual([]);
    expect(takeFaults(s, "axe", "tap", "U1")).toEqual([{ tool: "axe", command: "tap", mode: "slow", ms: 5, times: 2 }]);
    expect(takeFaults(s, "axe", "tap", "U2").length).toBe(1);
    expect(takeFaults(s, "axe", "tap", "U2")).toEqual([]);
    expect(takeFaults(s, "xcrun", "io", "U2")).toEqual([]);
    expect(takeFaults(s, "xcrun", "io", "U1").map((f) => f.mode)).toEqual(["hang"]);
    expect(s.faults.length).toBe(1);
  });

  test("concurrent invocations do not lose updates: eight parallel taps count eight", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const U = sim.device().udid;
    sim.update(
      (s) =>
        void ((s.devices[0] as { ui: Record<string, unknown> }).ui["com.acme.app"] = {
          screen: "home",
          tab: "account",
          email: "",
          password: "",
          remember: true,
          focus: null,
          error: "",
          user: "me",
          count: 0,
          selected: "",
          scroll: 0,
        }),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, () => sim.run("axe", ["tap", "--id", "home.counter", "--udid", U])),
    );
    expect(results.map((r) => r.exitCode)).toEqual(new Array(8).fill(0));
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ count: 8 });
    expect(sim.device(U).input.length).toBe(8);
  });

  test("a lock left by a process that died is taken over", async () => {
    await using sim = await startFakeSimulators({ tools: [] });
    const lock = join(sim.stateDir, "state.lock");
    mkdirSync(lock);
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(join(lock, "owner"), String(dead));
    expect(transact(sim.stateDir, (s) => s.devices.length)).toBe(3);
  });
});
