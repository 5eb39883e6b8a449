import { afterEach, describe, expect, test } from "bun:test";
import { MOCK_PNG } from "../../../../drivers/mock/index.ts";
import { captureObservation } from "../../../../src/core/devices/observe.ts";
import { type SemanticEnv, WAIT_POLL_MS, runSemantic } from "../../../../src/core/devices/semantic/semantic-action.ts";
import type {
  CallContext,
  Driver,
  ElementInput,
  ObserveOptions,
  Point,
  Protection,
  RawObservation,
} from "../../../../src/driver/driver.ts";
import { DriverError } from "../../../../src/driver/driver-error.ts";
import type { ActionDefinition } from "../../../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../../../src/protocol/types/device.ts";
import type { UiContextRef, UiNode } from "../../../../src/protocol/types/ui.ts";
import { silentLogger } from "../../../../src/protocol/rpc-error.ts";
import { coreHarness } from "../../../support/core-harness.ts";
import { OneDeviceDriver } from "../../../support/fake-driver.ts";

/*
 * Through the real dispatcher and device.execute handler (core harness) over a second, attached
 * fake driver with UI trees and ElementInput. The waitUntil and direct-abort cases call runSemantic
 * itself, because device.execute always grants waitForElement the 10 s default budget.
 */

const DEVICE = "el-1";
const VIEWPORT = { width: 400, height: 800, scaleFactor: 1 };
const CTX1: UiContextRef = { contextKind: "native", contextId: "com.example", documentEpoch: "1" };
const FEATURES = [
  "events.snapshot.v1",
  "request.control.v1",
  "device.routing.v1",
  "action.protected.v1",
  "observation.uiSnapshot.v1",
  "device.semanticActions.v1",
];

type Rect = NonNullable<UiNode["bounds"]>;
const el = (
  id: string,
  role: string,
  over: Partial<UiNode> = {},
  bounds: Rect | null = { x: 20, y: 100, width: 360, height: 50 },
): UiNode => ({
  stableNodeId: id,
  parentStableNodeId: id === "root" ? null : "root",
  role,
  name: null,
  value: null,
  identifier: null,
  text: null,
  bounds,
  enabled: true,
  hittable: true,
  ...over,
});

const ROOT = el("root", "Window", { hittable: false }, { x: 0, y: 0, width: 400, height: 800 });
const USER = el(
  "user",
  "TextField",
  { name: "User", value: "", identifier: "com.example:id/user" },
  { x: 20, y: 100, width: 360, height: 50 },
);
const PASS = el("pass", "SecureTextField", { name: "Password", value: "" }, { x: 20, y: 165, width: 361, height: 45 });
/** Half off the left and bottom edges: its visible part is x 0..50.5, y 700.2..800. */
const OK = el(
  "ok",
  "android.widget.Button",
  { name: "OK", text: "OK" },
  { x: -50.5, y: 700.2, width: 101, height: 200 },
);
const DISABLED = el(
  "disabled",
  "Button",
  { name: "Disabled", enabled: false },
  { x: 20, y: 300, width: 100, height: 40 },
);
const UNHITTABLE = el(
  "unhittable",
  "Button",
  { name: "Covered", hittable: false },
  { x: 20, y: 350, width: 100, height: 40 },
);
const OFFSCREEN = el("offscreen", "Button", { name: "Far" }, { x: 20, y: 900, width: 100, height: 40 });
const NO_BOUNDS = el("nobounds", "Button", { name: "Nowhere" }, null);
const NODES = [ROOT, USER, PASS, OK, DISABLED, UNHITTABLE, OFFSCREEN, NO_BOUNDS];

interface Tree {
  context: UiContextRef;
  nodes: UiNode[];
}

/**
 * A device `el-1` whose n-th observation (0-based, counting every driver observe) shows
 * `script(n)`, and whose element input records every call. `native` adds tapNode/setNodeValue.
 */
class ElementDriver extends OneDeviceDriver implements Driver {
  readonly name = "element-fake";
  readonly uiTrees = true;
  readonly elements: ElementInput;
  info: DeviceInfo = {
    id: DEVICE,
    name: "Element Fake",
    platform: { kind: "other", value: "fake" },
    osVersion: "1",
    connected: false,
  };
  script: (n: number) => Tree | null = () => ({ context: CTX1, nodes: NODES });
  /** Runs inside the n-th observe, before it answers. */
  onObserve: (n: number) => void = () => {};
  observed: ObserveOptions[] = [];
  calls: unknown[][] = [];

  constructor(native: boolean) {
    super();
    const input: ElementInput = {
      tapPoint: async (d: string, p: Point) => void this.calls.push(["tapPoint", d, p]),
      clearFocused: async (d: string) => void this.calls.push(["clearFocused", d]),
      typeText: async (d: string, text: string, o: { secret: boolean }) =>
        void this.calls.push(["typeText", d, text, o]),
    };
    if (native) {
      input.tapNode = async (d: string, n: UiNode) => void this.calls.push(["tapNode", d, n]);
      input.setNodeValue = async (d: string, n: UiNode, value: string) =>
        void this.calls.push(["setNodeValue", d, n, value]);
    }
    this.elements = input;
  }

  async actions(): Promise<ActionDefinition[]> {
    return [];
  }
  classify(): Protection | undefined {
    return undefined;
  }
  async observe(_d: string, opts: ObserveOptions): Promise<RawObservation> {
    const n = this.observed.length;
    this.observed.push(opts);
    this.onObserve(n);
    const tree = this.script(n);
    return {
      viewport: VIEWPORT,
      screenshot: opts.screenshot ? MOCK_PNG : null,
      uiTree: opts.uiTree && tree ? tree : null,
      metadata: {},
    };
  }
  async execute(_d: string, call: { name: string }): Promise<{ output: unknown }> {
    throw new DriverError("unknown_action", { action: call.name });
  }
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function setup(opts: { native?: boolean; features?: string[] } = {}) {
  const h = await coreHarness();
  cleanups.push(h.cleanup);
  const driver = new ElementDriver(opts.native ?? false);
  await h.core.devices.attach(driver, { signal: new AbortController().signal, deadline: null, log: silentLogger });
  const c = await h.connect(opts.features ?? FEATURES);
  expect((await c.ask("device.select", { deviceId: DEVICE })).error).toBeUndefined();
  expect((await c.ask("device.connect")).result.connected).toBe(true);
  const sessionId: string = (await c.ask("session.start")).result.id;
  driver.observed = [];
  const execute = (name: string, args: unknown, extra: object = {}) =>
    c.call("device.execute", { id: crypto.randomUUID(), name, arguments: args, ...extra });
  const run = async (name: string, args: unknown, extra: object = {}) =>
    (await execute(name, args, extra).response) as { result?: any; error?: any };
  return { ...h, c, driver, sessionId, execute, run };
}

const NONE = { context: null, role: null, name: null, value: null, identifier: null, text: null, css: null };
const byName = (name: string) => ({ ...NONE, name });
const target = (name: string) => ({ kind: "selector", selector: byName(name) });
const nodeTarget = (observationId: string, context: UiContextRef, stableNodeId: string) => ({
  kind: "node",
  node: { observationId, context, stableNodeId },
});

const err = (code: string, message: string, retryable = false, details: unknown = null) => ({
  code,
  message,
  retryable,
  details,
});
const NOT_INTERACTABLE = err("element_not_interactable", "element is not interactable");
const STALE = err("element_stale", "element reference is stale", true);
const CONTEXT_CHANGED = err("ui_context_changed", "UI context changed", true);
const invalid = (action: string, pointer: string, expected: string, received: string) =>
  err("invalid_arguments", `invalid arguments for action ${action}`, false, {
    action,
    pointer,
    expected,
    received,
    issues: [{ pointer, expected, received }],
  });
const NO_MATCHER = "at least one of role, name, value, identifier, text, css";
const RE2 = "an RE2 regular expression (no backreferences or lookaround)";
const SELECTOR_KEYS = "context, role, name, value, identifier, text, css";

const FALLBACK = (context = CTX1) => ({
  mode: "coordinateFallback" as const,
  context,
  fallbackReason: "semanticInteractionUnavailable" as const,
});
const NATIVE = (context = CTX1) => ({ mode: "nativeSemantic" as const, context });
const FULL = { screenshot: true, uiTree: true };
const POLL = { screenshot: false, uiTree: true };

describe("runSemantic through device.execute", () => {
  test("tapElement taps the node natively and reports nativeSemantic when the driver has tapNode", async () => {
    const s = await setup({ native: true });
    const r = await s.run("tapElement", { target: target("OK") });
    const observation = {
      id: expect.any(String),
      deviceId: DEVICE,
      capturedAtMs: expect.any(Number),
      viewport: VIEWPORT,
      screenshot: expect.objectContaining({ mediaType: "image/png" }),
      metadata: {},
      uiSnapshot: {
        formatVersion: 1,
        context: CTX1,
        nodeCount: NODES.length,
        byteLength: expect.any(Number),
        evidence: expect.objectContaining({ mediaType: "application/vnd.devicerail.ui-tree+json;version=1" }),
      },
    };
    expect(r.result).toEqual({
      callId: expect.any(String),
      startedAtMs: expect.any(Number),
      finishedAtMs: expect.any(Number),
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "ok" } },
      before: observation,
      after: observation,
      evidence: expect.any(Array),
      execution: NATIVE(),
    });
    expect(r.result.after.id).not.toBe(r.result.before.id);
    expect(s.driver.calls).toEqual([["tapNode", DEVICE, OK]]);
    expect(s.driver.observed).toEqual([FULL, FULL]);
  });

  test("tapElement taps the rounded centre of the visible part and reports coordinateFallback when the driver has only primitives", async () => {
    const s = await setup();
    const r = await s.run("tapElement", { target: target("OK") });
    expect({ output: r.result.output, execution: r.result.execution }).toEqual({
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "ok" } },
      execution: FALLBACK(),
    });
    // Visible part x 0..50.5, y 700.2..800: centre (25.25, 750.1).
    expect(s.driver.calls).toEqual([["tapPoint", DEVICE, { x: 25, y: 750 }]]);
  });

  test("tapElement floors a half-pixel centre when the visible part has odd size", async () => {
    const s = await setup();
    await s.run("tapElement", { target: { kind: "selector", selector: { ...NONE, identifier: "user" } } });
    await s.run("tapElement", { target: target("Password") });
    // user: 20..380 × 100..150 → (200, 125); pass: 20..381 × 165..210 → (200.5, 187.5), floored
    // so that the point stays inside even a one-pixel-wide node.
    expect(s.driver.calls).toEqual([
      ["tapPoint", DEVICE, { x: 200, y: 125 }],
      ["tapPoint", DEVICE, { x: 200, y: 187 }],
    ]);
  });

  test("setElementValue taps, clears, then types the value as secret when the driver has only primitives", async () => {
    const s = await setup();
    const r = await s.run("setElementValue", { target: target("Password"), value: "s3cret" });
    expect(r.error).toBeUndefined();
    expect(s.driver.calls).toEqual([
      ["tapPoint", DEVICE, { x: 200, y: 187 }],
      ["clearFocused", DEVICE],
      ["typeText", DEVICE, "s3cret", { secret: true }],
    ]);
    const protectedObservation = {
      id: expect.any(String),
      deviceId: DEVICE,
      capturedAtMs: expect.any(Number),
      viewport: VIEWPORT,
      screenshot: null,
      screenshotOmission: "protectedAction",
      uiSnapshotOmission: "protectedAction",
      metadata: {},
    };
    expect(r.result).toEqual({
      callId: expect.any(String),
      startedAtMs: expect.any(Number),
      finishedAtMs: expect.any(Number),
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "pass" } },
      before: protectedObservation,
      after: protectedObservation,
      evidence: [],
      execution: FALLBACK(),
    });
    // The tree is still fetched for resolution, but no screenshot is taken around a protected action.
    expect(s.driver.observed).toEqual([POLL, POLL]);
    const events = (await s.c.ask("events.list", { sessionId: s.sessionId })).result;
    expect(events.map((e: any) => e.payload.type)).toEqual(["sessionStarted", "actionStarted", "actionCompleted"]);
    expect(events[1].payload.call).toEqual({
      id: expect.any(String),
      name: "setElementValue",
      arguments: null,
      argumentsRedacted: true,
    });
  });

  test("setElementValue replaces the value natively and reports nativeSemantic when the driver has setNodeValue", async () => {
    const s = await setup({ native: true });
    const r = await s.run("setElementValue", { target: target("User"), value: "alice" });
    expect({ output: r.result.output, execution: r.result.execution }).toEqual({
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "user" } },
      execution: NATIVE(),
    });
    expect(s.driver.calls).toEqual([["setNodeValue", DEVICE, USER, "alice"]]);
  });

  test("clearElement taps and clears without typing when the driver has only primitives", async () => {
    const s = await setup();
    const r = await s.run("clearElement", { target: target("User") });
    expect({ output: r.result.output, execution: r.result.execution }).toEqual({
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "user" } },
      execution: FALLBACK(),
    });
    expect(s.driver.calls).toEqual([
      ["tapPoint", DEVICE, { x: 200, y: 125 }],
      ["clearFocused", DEVICE],
    ]);
    // clearElement is a standard action: its observations keep their screenshots.
    expect(s.driver.observed).toEqual([FULL, FULL]);
  });

  test("setElementValue with an empty value only taps and clears when the driver has only primitives", async () => {
    const s = await setup();
    await s.run("setElementValue", { target: target("User"), value: "" });
    expect(s.driver.calls).toEqual([
      ["tapPoint", DEVICE, { x: 200, y: 125 }],
      ["clearFocused", DEVICE],
    ]);
  });

  test("clearElement sets the empty value natively when the driver has setNodeValue", async () => {
    const s = await setup({ native: true });
    const r = await s.run("clearElement", { target: target("User") });
    expect(r.result.execution).toEqual(NATIVE());
    expect(s.driver.calls).toEqual([["setNodeValue", DEVICE, USER, ""]]);
  });

  test("tapElement is element_not_interactable and touches nothing when the node is disabled, unhittable, off screen or without bounds", async () => {
    for (const native of [false, true]) {
      const s = await setup({ native });
      const answers = [];
      for (const name of ["Disabled", "Covered", "Far", "Nowhere"])
        answers.push((await s.run("tapElement", { target: target(name) })).error?.data);
      expect({ native, answers }).toEqual({
        native,
        answers: [NOT_INTERACTABLE, NOT_INTERACTABLE, NOT_INTERACTABLE, NOT_INTERACTABLE],
      });
      expect(s.driver.calls).toEqual([]);
    }
  });

  test("setElementValue and clearElement are element_not_interactable when the node is disabled", async () => {
    for (const native of [false, true]) {
      const s = await setup({ native });
      const set = await s.run("setElementValue", { target: target("Disabled"), value: "x" });
      const clear = await s.run("clearElement", { target: target("Disabled") });
      expect([set.error?.data, clear.error?.data]).toEqual([NOT_INTERACTABLE, NOT_INTERACTABLE]);
      expect(s.driver.calls).toEqual([]);
    }
  });

  test("setElementValue is element_not_interactable when a coordinate fallback would tap an unhittable or off-screen node", async () => {
    const s = await setup();
    const covered = await s.run("setElementValue", { target: target("Covered"), value: "x" });
    const far = await s.run("clearElement", { target: target("Far") });
    expect([covered.error?.data, far.error?.data]).toEqual([NOT_INTERACTABLE, NOT_INTERACTABLE]);
    expect(s.driver.calls).toEqual([]);
  });

  test("failed semantic actions are recorded as failed with the same error when the element cannot be used", async () => {
    const s = await setup();
    const r = await s.run("tapElement", { target: target("Disabled") });
    expect(r.error).toEqual({ code: -32000, message: "element is not interactable", data: NOT_INTERACTABLE });
    const events = (await s.c.ask("events.list", { sessionId: s.sessionId })).result;
    expect(events.map((e: any) => e.payload.type)).toEqual(["sessionStarted", "actionStarted", "actionCompleted"]);
    expect(events[2].payload.outcome).toEqual({ outcome: "failed", error: NOT_INTERACTABLE });
  });

  test("findElement returns a reference into the before observation and takes no second observation", async () => {
    const s = await setup();
    const r = await s.run("findElement", { selector: { ...NONE, role: "textfield" } });
    expect({
      output: r.result.output,
      execution: r.result.execution,
      sameObservation: r.result.after.id === r.result.before.id,
    }).toEqual({
      output: { element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "user" } },
      execution: NATIVE(),
      sameObservation: true,
    });
    expect(s.driver.observed).toEqual([FULL]);
    expect(s.driver.calls).toEqual([]);
  });

  test("findElement answers element_ambiguous, element_not_found and ui_context_not_found when the selector picks several, none or another context", async () => {
    const s = await setup();
    const ambiguous = await s.run("findElement", { selector: { ...NONE, role: "button" } });
    const none = await s.run("findElement", { selector: byName("Missing") });
    const web = await s.run("findElement", {
      selector: { ...byName("OK"), context: { contextKind: "web", contextId: null } },
    });
    const otherApp = await s.run("findElement", {
      selector: { ...byName("OK"), context: { contextKind: "native", contextId: "com.other" } },
    });
    const sameApp = await s.run("findElement", {
      selector: { ...byName("OK"), context: { contextKind: "native", contextId: "com.example" } },
    });
    expect([
      ambiguous.error?.data,
      none.error?.data,
      web.error?.data,
      otherApp.error?.data,
      sameApp.result?.output.element.stableNodeId,
    ]).toEqual([
      err("element_ambiguous", "element selector matched more than one element"),
      err("element_not_found", "element was not found"),
      err("ui_context_not_found", "UI context was not found"),
      err("ui_context_not_found", "UI context was not found"),
      "ok",
    ]);
  });

  test("semantic actions are invalid_arguments when the arguments do not match the action's schema", async () => {
    const s = await setup();
    const answers = [
      (await s.run("findElement", {})).error?.data,
      (await s.run("tapElement", { target: { kind: "selector", selector: { ...byName("OK"), label: "OK" } } })).error
        ?.data,
      (await s.run("setElementValue", { target: target("User") })).error?.data,
      (await s.run("waitForElement", { selector: byName("OK"), condition: "gone" })).error?.data,
      (await s.run("findElement", { selector: NONE })).error?.data,
      (await s.run("findElement", { selector: { ...NONE, text: { value: "(", mode: "regex" } } })).error?.data,
    ];
    expect(answers).toEqual([
      invalid("findElement", "/selector", `an object with optional keys ${SELECTOR_KEYS}`, "no value"),
      invalid("tapElement", "/target/selector", `only the keys ${SELECTOR_KEYS}`, 'unknown key "label"'),
      invalid("setElementValue", "/value", "a string of at most 65536 code points", "no value"),
      invalid("waitForElement", "/condition", "one of: present, visible, enabled, absent", '"gone"'),
      invalid("findElement", "/selector", NO_MATCHER, "no matcher"),
      invalid("findElement", "/selector/text/value", RE2, '"("'),
    ]);
  });

  test("setElementValue's refused values are shown by type and length only when its arguments or selector are invalid", async () => {
    const s = await setup();
    const secret = "s3cr3t-p4ss";
    const answers = [
      (await s.run("setElementValue", { target: target("User"), value: [secret] })).error?.data,
      (
        await s.run("setElementValue", {
          target: { kind: "selector", selector: { ...NONE, text: { value: `${secret}(`, mode: "regex" } } },
          value: secret,
        })
      ).error?.data,
    ];
    expect(answers).toEqual([
      invalid("setElementValue", "/value", "a string of at most 65536 code points", "an array of 1 item"),
      invalid("setElementValue", "/target/selector/text/value", RE2, "a string of 12 code points"),
    ]);
    expect(JSON.stringify([answers, s.core.log.read(s.sessionId)])).not.toContain("s3cr3t");
  });

  // docs/protocol/devices-and-actions.md#selectors: "a context alone is not a selector", and a regex that does not compile or css with
  // another matcher are argument errors whatever the device shows. findElement and selector
  // targets check the context against the tree before compiling the selector, so these answer
  // ui_context_not_found on a native tree (waitForElement compiles first and gets it right).
  test("findElement and tapElement are invalid_arguments when an invalid selector names a context the tree does not have", async () => {
    const s = await setup();
    const contextOnly = { ...NONE, context: { contextKind: "web", contextId: null } };
    const answers = [
      (await s.run("waitForElement", { selector: contextOnly, condition: "present" })).error?.data,
      (await s.run("findElement", { selector: contextOnly })).error?.data,
      (await s.run("tapElement", { target: { kind: "selector", selector: contextOnly } })).error?.data,
      // The same ordering decides for other invalid selectors whose context names another app.
      (
        await s.run("findElement", {
          selector: {
            ...NONE,
            text: { value: "(", mode: "regex" },
            context: { contextKind: "native", contextId: "com.other" },
          },
        })
      ).error?.data,
      (
        await s.run("findElement", {
          selector: { ...NONE, css: "#ok", role: "button", context: { contextKind: "web", contextId: null } },
        })
      ).error?.data,
    ];
    expect(answers).toEqual([
      invalid("waitForElement", "/selector", NO_MATCHER, "only a context"),
      invalid("findElement", "/selector", NO_MATCHER, "only a context"),
      invalid("tapElement", "/target/selector", NO_MATCHER, "only a context"),
      invalid("findElement", "/selector/text/value", RE2, '"("'),
      invalid("findElement", "/selector/css", "css as the only matcher", "css with role"),
    ]);
  });

  test("a node reference from findElement drives tapElement when the context is unchanged", async () => {
    const s = await setup();
    const found = await s.run("findElement", { selector: byName("User") });
    const ref = found.result.output.element;
    const r = await s.run("tapElement", { target: { kind: "node", node: ref } });
    expect(r.result.output).toEqual({
      element: { observationId: r.result.before.id, context: CTX1, stableNodeId: "user" },
    });
    expect(r.result.before.id).not.toBe(ref.observationId);
    expect(s.driver.calls).toEqual([["tapPoint", DEVICE, { x: 200, y: 125 }]]);
  });

  test("a node reference is element_stale when its observation id is unknown", async () => {
    const s = await setup();
    const r = await s.run("tapElement", { target: nodeTarget(crypto.randomUUID(), CTX1, "user") });
    expect(r.error?.data).toEqual(STALE);
    expect(s.driver.calls).toEqual([]);
  });

  test("a node reference is element_stale when the document epoch changed since its observation", async () => {
    const s = await setup();
    const ref = (await s.run("findElement", { selector: byName("User") })).result.output.element;
    s.driver.script = () => ({ context: { ...CTX1, documentEpoch: "2" }, nodes: NODES });
    const tap = await s.run("tapElement", { target: { kind: "node", node: ref } });
    const set = await s.run("setElementValue", { target: { kind: "node", node: ref }, value: "x" });
    expect([tap.error?.data, set.error?.data]).toEqual([STALE, STALE]);
    expect(s.driver.calls).toEqual([]);
  });

  test("a node reference is ui_context_changed when the context id changed since its observation", async () => {
    const s = await setup();
    const ref = (await s.run("findElement", { selector: byName("User") })).result.output.element;
    s.driver.script = () => ({
      context: { contextKind: "native", contextId: "com.other", documentEpoch: "1" },
      nodes: NODES,
    });
    const tap = await s.run("tapElement", { target: { kind: "node", node: ref } });
    const clear = await s.run("clearElement", { target: { kind: "node", node: ref } });
    expect([tap.error?.data, clear.error?.data]).toEqual([CONTEXT_CHANGED, CONTEXT_CHANGED]);
    expect(s.driver.calls).toEqual([]);
  });

  test("a node reference is element_stale when its stableNodeId is not in the current tree", async () => {
    const s = await setup();
    const ref = (await s.run("findElement", { selector: byName("User") })).result.output.element;
    const unknownNode = await s.run("tapElement", { target: nodeTarget(ref.observationId, CTX1, "nope") });
    s.driver.script = () => ({ context: CTX1, nodes: NODES.filter((n) => n.stableNodeId !== "user") });
    const removed = await s.run("tapElement", { target: { kind: "node", node: ref } });
    expect([unknownNode.error?.data, removed.error?.data]).toEqual([STALE, STALE]);
    expect(s.driver.calls).toEqual([]);
  });

  test("a node reference is element_stale when its context is not the one its observation had", async () => {
    const s = await setup();
    const ref = (await s.run("findElement", { selector: byName("User") })).result.output.element;
    const r = await s.run("tapElement", {
      target: nodeTarget(ref.observationId, { ...CTX1, documentEpoch: "forged" }, "user"),
    });
    expect(r.error?.data).toEqual(STALE);
  });

  test("waitForElement matches on the before observation when the condition already holds", async () => {
    const s = await setup();
    const cases = [
      { name: "User", condition: "present", id: "user" },
      { name: "User", condition: "visible", id: "user" },
      { name: "User", condition: "enabled", id: "user" },
      { name: "Missing", condition: "absent", id: null },
    ];
    for (const c of cases) {
      const r = await s.run("waitForElement", { selector: byName(c.name), condition: c.condition });
      const before: string = r.result.before.id;
      expect({ output: r.result.output, execution: r.result.execution, after: r.result.after.id }).toEqual({
        output: {
          matched: true,
          condition: c.condition,
          element: c.id === null ? null : { observationId: before, context: CTX1, stableNodeId: c.id },
        },
        execution: NATIVE(),
        after: before,
      });
    }
    expect(s.driver.observed).toEqual([FULL, FULL, FULL, FULL]);
  });

  test("waitForElement present polls until the element appears, then points at a confirmed after observation", async () => {
    const s = await setup();
    const ctx2 = { ...CTX1, documentEpoch: "2" };
    const done = el("done", "Text", { name: "Done" }, { x: 20, y: 20, width: 100, height: 20 });
    s.driver.script = (n) => (n < 3 ? { context: CTX1, nodes: NODES } : { context: ctx2, nodes: [...NODES, done] });
    const r = await s.run("waitForElement", { selector: byName("Done"), condition: "present" });
    expect({ output: r.result.output, execution: r.result.execution }).toEqual({
      output: {
        matched: true,
        condition: "present",
        element: { observationId: r.result.after.id, context: ctx2, stableNodeId: "done" },
      },
      execution: NATIVE(ctx2),
    });
    expect(r.result.after.id).not.toBe(r.result.before.id);
    expect(r.result.after.uiSnapshot.context).toEqual(ctx2);
    expect(s.driver.observed).toEqual([FULL, POLL, POLL, POLL, FULL]);
  });

  test("waitForElement keeps polling when the confirming observation no longer matches", async () => {
    const s = await setup();
    const done = el("done", "Text", { name: "Done" }, { x: 20, y: 20, width: 100, height: 20 });
    s.driver.script = (n) => ({ context: CTX1, nodes: n === 2 || n >= 5 ? [...NODES, done] : NODES });
    const r = await s.run("waitForElement", { selector: byName("Done"), condition: "present" });
    expect(r.result.output).toEqual({
      matched: true,
      condition: "present",
      element: { observationId: r.result.after.id, context: CTX1, stableNodeId: "done" },
    });
    expect(s.driver.observed).toEqual([FULL, POLL, POLL, FULL, POLL, POLL, FULL]);
  });

  test("waitForElement visible, enabled and absent wait for the node to come on screen, be enabled or go", async () => {
    const s = await setup();
    const cases = [
      {
        condition: "visible",
        name: "Far",
        after: NODES.map((n) =>
          n.stableNodeId === "offscreen" ? { ...n, bounds: { x: 20, y: 500, width: 100, height: 40 } } : n,
        ),
        id: "offscreen",
      },
      {
        condition: "enabled",
        name: "Disabled",
        after: NODES.map((n) => (n.stableNodeId === "disabled" ? { ...n, enabled: true } : n)),
        id: "disabled",
      },
      { condition: "absent", name: "OK", after: NODES.filter((n) => n.stableNodeId !== "ok"), id: null },
    ];
    for (const c of cases) {
      s.driver.observed = [];
      s.driver.script = (n) => ({ context: CTX1, nodes: n < 2 ? NODES : c.after });
      const r = await s.run("waitForElement", { selector: byName(c.name), condition: c.condition });
      expect({ condition: c.condition, output: r.result.output, observed: s.driver.observed }).toEqual({
        condition: c.condition,
        output: {
          matched: true,
          condition: c.condition,
          element: c.id === null ? null : { observationId: r.result.after.id, context: CTX1, stableNodeId: c.id },
        },
        observed: [FULL, POLL, POLL, FULL],
      });
    }
  });

  test("waitForElement enabled waits through a node whose enabled state is unknown", async () => {
    const s = await setup();
    s.driver.script = (n) => ({
      context: CTX1,
      nodes: NODES.map((x) => (x.stableNodeId === "user" ? { ...x, enabled: n < 2 ? null : true } : x)),
    });
    const r = await s.run("waitForElement", { selector: byName("User"), condition: "enabled" });
    expect(r.result.output).toEqual({
      matched: true,
      condition: "enabled",
      element: { observationId: r.result.after.id, context: CTX1, stableNodeId: "user" },
    });
    expect(s.driver.observed).toEqual([FULL, POLL, POLL, FULL]);
  });

  test("waitForElement waits through a missing context when the selector names the context that appears later", async () => {
    const s = await setup();
    const other = { contextKind: "native" as const, contextId: "com.other", documentEpoch: "9" };
    s.driver.script = (n) => (n < 2 ? { context: CTX1, nodes: NODES } : { context: other, nodes: NODES });
    const r = await s.run("waitForElement", {
      selector: { ...byName("OK"), context: { contextKind: "native", contextId: "com.other" } },
      condition: "present",
    });
    expect({ output: r.result.output, execution: r.result.execution }).toEqual({
      output: {
        matched: true,
        condition: "present",
        element: { observationId: r.result.after.id, context: other, stableNodeId: "ok" },
      },
      execution: NATIVE(other),
    });
  });

  test("waitForElement is element_ambiguous without waiting when the selector matches several nodes", async () => {
    const s = await setup();
    const r = await s.run("waitForElement", { selector: { ...NONE, role: "button" }, condition: "present" });
    expect(r.error?.data).toEqual(err("element_ambiguous", "element selector matched more than one element"));
    expect(s.driver.observed).toEqual([FULL]);
  });

  test("waitForElement absent keeps waiting while several nodes match, until its budget ends", async () => {
    const s = await setup();
    const r = await s.run(
      "waitForElement",
      { selector: { ...NONE, role: "button" }, condition: "absent" },
      { actionTimeoutMs: 2 * WAIT_POLL_MS },
    );
    expect(r.error?.data).toEqual(
      err("action_timed_out", `Action timed out after ${2 * WAIT_POLL_MS} ms`, true, {
        scope: "action",
        timeoutMs: 2 * WAIT_POLL_MS,
      }),
    );
  });

  test("waitForElement ends with action_timed_out when an actionTimeoutMs budget runs out before a match", async () => {
    const s = await setup();
    const r = await s.run(
      "waitForElement",
      { selector: byName("Missing"), condition: "present" },
      { actionTimeoutMs: 3 * WAIT_POLL_MS },
    );
    expect(r.error?.data).toEqual(
      err("action_timed_out", `Action timed out after ${3 * WAIT_POLL_MS} ms`, true, {
        scope: "action",
        timeoutMs: 3 * WAIT_POLL_MS,
      }),
    );
  });

  test("waitForElement is cancelled when request.cancel arrives during the wait", async () => {
    const s = await setup();
    let cancelled: Promise<any> | null = null;
    const call = s.execute("waitForElement", { selector: byName("Missing"), condition: "present" });
    s.driver.onObserve = (n) => {
      if (n === 2) cancelled = s.c.ask("request.cancel", { requestId: call.id });
    };
    const r = await call.response;
    expect((await (cancelled as unknown as Promise<any>)).result).toEqual({ requestId: call.id, status: "requested" });
    expect(r.error.data).toEqual(
      err("request_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
    );
    const events = (await s.c.ask("events.list", { sessionId: s.sessionId })).result;
    expect(events[2].payload.outcome).toEqual({
      outcome: "cancelled",
      error: {
        code: "action_cancelled",
        message: expect.any(String),
        retryable: expect.any(Boolean),
        details: { reason: "requested" },
      },
    });
  });

  test("semantic actions are hidden and refused when device.semanticActions.v1 is not negotiated", async () => {
    const s = await setup({ features: FEATURES.filter((f) => f !== "device.semanticActions.v1") });
    expect((await s.c.ask("device.capabilities")).result).toEqual([]);
    const r = await s.run("findElement", { selector: byName("OK") });
    expect(r.error).toEqual({
      code: -32601,
      message: "semantic action requires an explicitly negotiated feature",
      data: err("semantic_action_not_negotiated", "semantic action requires an explicitly negotiated feature", false, {
        action: "findElement",
        requiredFeature: "device.semanticActions.v1",
      }),
    });
  });

  test("device.capabilities lists the five semantic actions, setElementValue protected, when the driver has trees and element input", async () => {
    const s = await setup();
    const defs = (await s.c.ask("device.capabilities")).result;
    expect(defs.map((d: any) => [d.name, d.protection ?? "standard"])).toEqual([
      ["findElement", "standard"],
      ["tapElement", "standard"],
      ["clearElement", "standard"],
      ["setElementValue", "protected"],
      ["waitForElement", "standard"],
    ]);
  });

  test("a semantic action is semantic_channel_unavailable when the driver gives no tree", async () => {
    const s = await setup();
    s.driver.script = () => null;
    const r = await s.run("findElement", { selector: byName("OK") });
    expect(r.error?.data).toEqual(err("semantic_channel_unavailable", "semantic UI channel is unavailable"));
  });
});

describe("runSemantic", () => {
  /** A direct call with the harness's core and connection; waitUntil is `waitMs` after the before observation. */
  async function direct(
    s: Awaited<ReturnType<typeof setup>>,
    waitMs: number | null,
    signal = new AbortController().signal,
  ) {
    const ctx: CallContext = { signal, deadline: null, log: silentLogger };
    const before = await captureObservation(s.core, DEVICE, s.c.conn, ctx, { needTree: true });
    const waitUntil = waitMs === null ? null : Date.now() + waitMs;
    const kept: string[] = [];
    const env: SemanticEnv = {
      core: s.core,
      conn: s.c.conn,
      deviceId: DEVICE,
      redacted: false,
      ctx,
      waitUntil,
      keep: (c) => (kept.push(c.observation.id), c.observation),
    };
    return { before, kept, run: (args: unknown) => runSemantic(env, "waitForElement", args, before) };
  }

  test("waitForElement gives matched false on the before observation when waitUntil has already passed", async () => {
    const s = await setup();
    const d = await direct(s, -1);
    const out = await d.run({ selector: byName("Missing"), condition: "present" });
    expect(out).toEqual({
      output: { matched: false, condition: "present", element: null },
      execution: NATIVE(),
      after: d.before.observation,
    });
    expect(s.driver.observed).toEqual([FULL]);
    expect(d.kept).toEqual([]);
  });

  test("waitForElement gives matched false after polling when waitUntil passes without a match", async () => {
    const s = await setup();
    const d = await direct(s, 2 * WAIT_POLL_MS);
    const out = await d.run({ selector: byName("OK"), condition: "absent" });
    expect(out).toEqual({
      output: { matched: false, condition: "absent", element: null },
      execution: NATIVE(),
      after: d.before.observation,
    });
    expect(s.driver.observed.slice(0, 2)).toEqual([FULL, POLL]);
    expect(s.driver.observed.slice(1).every((o) => o.screenshot === false && o.uiTree === true)).toBe(true);
  });

  test("waitForElement keeps only the confirming observation when it matches after polls", async () => {
    const s = await setup();
    s.driver.script = (n) => ({ context: CTX1, nodes: n < 2 ? NODES : NODES.filter((x) => x.stableNodeId !== "ok") });
    const d = await direct(s, null);
    const out = await d.run({ selector: byName("OK"), condition: "absent" });
    expect(out.output).toEqual({ matched: true, condition: "absent", element: null });
    expect(d.kept).toEqual([out.after.id]);
  });

  test("waitForElement ends with driver_cancelled when the signal aborts during the wait", async () => {
    const s = await setup();
    const abort = new AbortController();
    const d = await direct(s, null, abort.signal);
    s.driver.onObserve = (n) => {
      if (n === 2) abort.abort();
    };
    const e = (await d
      .run({ selector: byName("Missing"), condition: "present" })
      .catch((x: unknown) => x)) as DriverError;
    expect(e).toBeInstanceOf(DriverError);
    expect({ driverCode: e.driverCode, data: e.error.data }).toEqual({
      driverCode: "driver_cancelled",
      data: err("driver_cancelled", "driver operation was cancelled"),
    });
    // The abort lands inside the second poll; the pause after it ends the wait.
    expect(s.driver.observed).toEqual([FULL, POLL, POLL]);
  });

  test("waitForElement ends with driver_cancelled before observing when the signal is already aborted", async () => {
    const s = await setup();
    const abort = new AbortController();
    const d = await direct(s, null, abort.signal);
    abort.abort();
    const e = (await d
      .run({ selector: byName("Missing"), condition: "present" })
      .catch((x: unknown) => x)) as DriverError;
    expect(e.driverCode).toBe("driver_cancelled");
    expect(s.driver.observed).toEqual([FULL]);
  });
});
