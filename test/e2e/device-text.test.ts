import { describe, expect, test } from "bun:test";
import { type Scenario, adbServerForFile, describeWithAdb, startFakeDevice } from "../support/adb-device/index.ts";
import { spawnDaemon } from "../support/daemon.ts";
import { demoInitial } from "../support/ios-sim/apps.ts";
import { startFakeSimulators } from "../support/ios-sim/fake-simulators.ts";
import { DEMO_BUNDLE } from "../support/ios-sim/sim-state.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];
const TRUNCATED = /…\[truncated (\d+) chars\]$/;
const cpLength = (s: string) => [...s].length;

/** `text` is `total` repetitions of `char` clipped to `max` code points with the marker counting the rest. */
function expectClipped(text: string, char: string, total: number, max: number) {
  expect(cpLength(text)).toBe(max);
  const removed = Number(TRUNCATED.exec(text)?.[1]);
  const kept = max - `…[truncated ${removed} chars]`.length;
  expect([text.slice(0, kept), kept + removed]).toEqual([char.repeat(kept), total]);
}

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
const run = (c: RpcSocket, name: string, args: unknown) =>
  c.call("device.execute", { id: crypto.randomUUID(), name, arguments: args });

async function client(port: number) {
  const c = await RpcSocket.connect({ port });
  await c.hello();
  await c.call("device.connect");
  expect((await c.call("session.start")).error).toBeUndefined();
  return c;
}

describe("device text on the Mock", () => {
  test("an observation keeps a clipped field with its truncation marker when a field holds more than 65,536 characters", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const a = await client(d.port);
    expect(
      (await run(a, "tapElement", { target: { kind: "selector", selector: sel({ identifier: "username" }) } })).error,
    ).toBeUndefined();
    const typed = "x".repeat(70_000);
    expect((await run(a, "inputText", { text: typed })).result.output).toEqual({ accepted: true, characters: 70_000 });

    const observed = await a.call("device.observe");
    expect(observed.error).toBeUndefined();
    expect(observed.result.screenshot).toEqual(expect.objectContaining({ mediaType: "image/png" }));
    expect(observed.result.metadata.uiTextTruncated).toEqual({ fields: 2, limit: 8192 });
    const tree = (await a.call("ui.snapshot.get", { observationId: observed.result.id })).result;
    const field = tree.nodes.find((n: { stableNodeId: string }) => n.stableNodeId === "login/username");
    for (const text of [field.text, field.value]) {
      expect(cpLength(text)).toBe(8192);
      const removed = Number(TRUNCATED.exec(text)?.[1]);
      expect(text.slice(0, 8192 - `…[truncated ${removed} chars]`.length)).toBe(
        "x".repeat(8192 - `…[truncated ${removed} chars]`.length),
      );
      expect(removed + 8192 - `…[truncated ${removed} chars]`.length).toBe(70_000);
    }
    expect((await a.call("session.end")).error).toBeUndefined();
    a.close();

    // The same device, the same long text: another client observes and acts as usual.
    const b = await client(d.port);
    const again = await b.call("device.observe");
    expect(again.error).toBeUndefined();
    expect(again.result.uiSnapshot).toEqual(expect.objectContaining({ nodeCount: 5 }));
    expect((await run(b, "tap", { x: 10, y: 10 })).result.output).toEqual({ accepted: true, x: 10, y: 10 });
    b.close();
  });
});

describe("device text on an iOS Simulator", () => {
  test("an observation keeps a clipped accessibility label with its truncation marker when the label is huge", async () => {
    await using sims = await startFakeSimulators();
    const udid = sims.device().udid;
    sims.update((s) => {
      const device = s.devices.find((x) => x.udid === udid);
      if (device)
        device.ui[DEMO_BUNDLE] = { ...demoInitial(), error: "é".repeat(200_000) } as unknown as Record<string, unknown>;
    });
    const env = Object.fromEntries(Object.entries(sims.env).filter(([k]) => k.startsWith("DEVICERAIL_FAKE")));
    await using d = spawnDaemon({ env: { PATH: sims.env.PATH as string, DEVICERAIL_IOS: "auto", ...env } });
    await d.hello();
    await d.call("device.select", { deviceId: `ios-simulator:${udid}` });
    await d.call("device.connect");
    await d.call("session.start");
    const observed = await d.call("device.observe", {}, { timeoutMs: 20_000 });
    expect(observed.error).toBeUndefined();
    expect(observed.result.screenshot).toEqual(expect.objectContaining({ mediaType: "image/png" }));
    expect(observed.result.metadata.uiTextTruncated).toEqual({ fields: 2, limit: 8192 });
    const tree = (await d.call("ui.snapshot.get", { observationId: observed.result.id })).result;
    const label = tree.nodes.find((n: { identifier: string | null }) => n.identifier === "login.error");
    const marker = "…[truncated 191833 chars]";
    expect([label.name, label.text]).toEqual([
      "é".repeat(8192 - marker.length) + marker,
      "é".repeat(8192 - marker.length) + marker,
    ]);
    const found = await d.call(
      "device.execute",
      { id: crypto.randomUUID(), name: "findElement", arguments: { selector: sel({ identifier: "login.email" }) } },
      { timeoutMs: 20_000 },
    );
    expect(found.result.output.element.stableNodeId).toEqual(expect.any(String));
  }, 60_000);
});

const { server, androidEnv } = adbServerForFile();

/** One screen of `count` text views, each with `textLength` characters of text and of content description. */
const textApp = (count: number, textLength: number, char = "a"): Scenario => ({
  package: "com.example.text",
  activity: "com.example.text.MainActivity",
  initial: "main",
  state: {},
  screens: {
    main: (_s, view) => ({
      className: "android.widget.FrameLayout",
      bounds: [0, 0, view.width, view.height],
      children: Array.from({ length: count }, (_, i) => ({
        className: "android.widget.TextView",
        text: char.repeat(textLength),
        contentDesc: char.repeat(textLength),
        bounds: [0, i % view.height, view.width, (i % view.height) + 1] as const,
      })),
    }),
  },
});

async function observePhone(scenario: Scenario) {
  const phone = await startFakeDevice(server(), { scenario });
  const d = spawnDaemon({ env: androidEnv() });
  await d.hello();
  await d.call("device.connect");
  await d.call("session.start");
  const observed = await d.call("device.observe", {}, { timeoutMs: 30_000 });
  return { phone, d, observed };
}

describeWithAdb("device text on an Android phone", () => {
  test("an observation keeps a clipped node text with its truncation marker when a node's text is huge", async () => {
    const { phone, d, observed } = await observePhone(textApp(1, 300_000, "ж"));
    await using _p = phone;
    await using _d = d;
    expect(observed.error).toBeUndefined();
    expect(observed.result.metadata.uiTextTruncated).toEqual({ fields: 2, limit: 8192 });
    const tree = (await d.call("ui.snapshot.get", { observationId: observed.result.id })).result;
    const node = tree.nodes.find((n: { stableNodeId: string }) => n.stableNodeId === "0.0");
    expectClipped(node.text, "ж", 300_000, 8192);
    expectClipped(node.name, "ж", 300_000, 8192);
  }, 60_000);

  test("an observation keeps every node with tighter clipping when the dump is over 768 KiB", async () => {
    const { phone, d, observed } = await observePhone(textApp(1_000, 2_000));
    await using _p = phone;
    await using _d = d;
    expect(observed.error).toBeUndefined();
    expect(observed.result.uiSnapshot.nodeCount).toBe(1_001);
    expect(observed.result.uiSnapshot.byteLength).toBeLessThanOrEqual(786_432);
    expect(observed.result.metadata.uiTextTruncated).toEqual({ fields: 2_000, limit: 256 });
    const tree = (await d.call("ui.snapshot.get", { observationId: observed.result.id })).result;
    expectClipped(tree.nodes[500].text, "a", 2_000, 256);
  }, 60_000);

  test("an observation keeps its screenshot and omits the tree, saying why, when the tree stays over the limit", async () => {
    const { phone, d, observed } = await observePhone(textApp(5_000, 200));
    await using _p = phone;
    await using _d = d;
    expect(observed.error).toBeUndefined();
    expect(observed.result.screenshot).toEqual(expect.objectContaining({ mediaType: "image/png" }));
    expect(observed.result.uiSnapshot).toBeUndefined();
    expect(observed.result.uiSnapshotOmission).toBe("driverUnsupported");
    expect(observed.result.metadata.uiSnapshotTooLarge).toEqual({
      nodeCount: 5_001,
      byteLength: expect.any(Number),
      maxNodes: 10_000,
      maxBytes: 786_432,
    });
    expect(observed.result.metadata.uiSnapshotTooLarge.byteLength).toBeGreaterThan(786_432);
    expect(d.stderr).toContain("UI tree over the snapshot limits");
    // The phone keeps working: the next action runs and observes again.
    const tapped = await d.call(
      "device.execute",
      { id: crypto.randomUUID(), name: "tap", arguments: { x: 10, y: 10 } },
      { timeoutMs: 30_000 },
    );
    expect(tapped.error).toBeUndefined();
    expect(tapped.result.after.uiSnapshotOmission).toBe("driverUnsupported");
  }, 60_000);
});
