import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { canaryForms, filesUnder, leaksIn } from "../support/canary.ts";
import { spawnDaemon } from "../support/daemon.ts";
import { startFakeSimulators } from "../support/ios-sim/fake-simulators.ts";

const sel = (m: Record<string, unknown>) => ({
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
  ...m,
});
const target = (m: Record<string, unknown>) => ({ kind: "selector", selector: sel(m) });

describe("the daemon with iOS Simulators through the fake xcrun and AXe", () => {
  test("a booted simulator is driven by semantic actions, and the secret stays out of argv and the data directory", async () => {
    await using sims = await startFakeSimulators();
    const booted = sims.state().devices.filter((d) => d.state === "Booted" && d.isAvailable);
    await using d = spawnDaemon({
      env: {
        PATH: sims.env.PATH as string,
        DEVICERAIL_IOS: "auto",
        ...Object.fromEntries(Object.entries(sims.env).filter(([k]) => k.startsWith("DEVICERAIL_FAKE"))),
      },
    });
    await d.hello();
    const devices = (await d.call("devices.list")).result.devices as { id: string; platform: { kind: string } }[];
    // The Mock steps aside while real devices are present.
    expect(devices.map((x) => x.id).sort()).toEqual(booted.map((b) => `ios-simulator:${b.udid}`).sort());
    const id = `ios-simulator:${sims.device().udid}`;
    await d.call("device.select", { deviceId: id });
    expect((await d.call("device.connect")).result).toEqual(
      expect.objectContaining({ id, platform: { kind: "ios" }, connected: true }),
    );
    await d.call("session.start");
    const obs = (await d.call("device.observe")).result;
    expect([obs.viewport.width, obs.viewport.height, obs.uiSnapshot.nodeCount > 3]).toEqual([1206, 2622, true]);
    const run = (name: string, args: unknown) =>
      d.call("device.execute", { id: crypto.randomUUID(), name, arguments: args }, { timeoutMs: 20_000 });
    expect((await run("tapElement", { target: target({ identifier: "login.email" }) })).error).toBeUndefined();
    expect((await run("inputText", { text: "alice@acme.example" })).result.output).toEqual({
      accepted: true,
      characters: 18,
      via: "axe",
    });
    const secret = `pw-"c4n4ry' $(id)`;
    const set = await run("setElementValue", { target: target({ identifier: "login.password" }), value: secret });
    expect(set.result.before.screenshotOmission).toBe("protectedAction");
    const submit = await run("tapElement", { target: target({ role: "button", name: "Sign In" }) });
    expect(submit.error).toBeUndefined();
    const welcome = await run("waitForElement", {
      selector: sel({ identifier: "home.welcome" }),
      condition: "visible",
    });
    expect(welcome.result.output.matched).toBe(true);
    await d.call("session.end");
    expect(await d.close()).toBe(0);
    const forms = canaryForms(secret);
    const log = sims.readLog();
    expect(log.filter((r) => r.stdin?.includes(secret)).length).toBe(1);
    expect([
      ...leaksIn(forms, "fake argv", JSON.stringify(log.map((r) => r.argv))),
      ...leaksIn(forms, "daemon stderr", d.stderr),
      ...filesUnder(d.dataDir).flatMap((f) => leaksIn(forms, f, readFileSync(f).toString("latin1"))),
    ]).toEqual([]);
  }, 60_000);

  test("DEVICERAIL_IOS=required stops start-up with a clear message when xcrun is missing", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_IOS: "required", PATH: "/nonexistent" } });
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain("DEVICERAIL_IOS=required");
  });
});
