import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_FEATURES, type DaemonProcess, ROOT, helloParams, spawnDaemon } from "../support/daemon.ts";
import { LOGIN_CONTEXT, UI_TREE_MEDIA_TYPE } from "../support/mock-screens.ts";

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
const bySelector = (m: Record<string, unknown>) => ({ kind: "selector", selector: sel(m) });
const text = (value: string, mode = "exact", caseSensitive?: boolean) => ({
  value,
  mode,
  ...(caseSensitive === false ? { caseSensitive } : {}),
});

async function ready(d: DaemonProcess) {
  await d.hello();
  await d.call("device.connect");
  return (await d.call("session.start")).result.id as string;
}

/** One device.execute with a fresh call id. */
const run = (d: DaemonProcess, name: string, args: unknown, extra: Record<string, unknown> = {}) =>
  d.call("device.execute", { id: crypto.randomUUID(), name, arguments: args, ...extra });

const errorOf = (r: { error?: { data: unknown } }) =>
  r.error?.data as { code: string; [k: string]: unknown } | undefined;

describe("semantic actions on the Mock app", () => {
  test("are advertised with the generated input schemas when device.semanticActions.v1 is negotiated", async () => {
    await using d = spawnDaemon();
    await d.hello();
    await d.call("device.connect");
    const caps = (await d.call("device.capabilities")).result as any[];
    const semantic = caps.filter((a) =>
      ["findElement", "tapElement", "clearElement", "setElementValue", "waitForElement"].includes(a.name),
    );
    const schema = (file: string) =>
      JSON.parse(readFileSync(join(ROOT, "src/protocol/generated/actions", file), "utf8"));
    expect(semantic).toEqual([
      {
        name: "findElement",
        description: expect.any(String),
        inputSchema: schema("find-element-arguments.schema.json"),
      },
      { name: "tapElement", description: expect.any(String), inputSchema: schema("tap-element-arguments.schema.json") },
      {
        name: "clearElement",
        description: expect.any(String),
        inputSchema: schema("clear-element-arguments.schema.json"),
      },
      {
        name: "setElementValue",
        description: expect.any(String),
        inputSchema: schema("set-element-value-arguments.schema.json"),
        protection: "protected",
      },
      {
        name: "waitForElement",
        description: expect.any(String),
        inputSchema: schema("wait-for-element-arguments.schema.json"),
      },
    ]);
  });

  test("are hidden and refused with semantic_action_not_negotiated when the feature was not negotiated", async () => {
    await using d = spawnDaemon();
    await d.call(
      "system.hello",
      helloParams({ optional: ALL_FEATURES.filter((f) => f !== "device.semanticActions.v1") }),
    );
    await d.call("device.connect");
    expect(((await d.call("device.capabilities")).result as any[]).map((a) => a.name)).toEqual([
      "tap",
      "inputText",
      "scroll",
      "back",
      "inputSecret",
    ]);
    await d.call("session.start");
    const r = await run(d, "findElement", { selector: sel({ identifier: "username" }) });
    expect(r.error).toEqual({
      code: -32601,
      message: "semantic action requires an explicitly negotiated feature",
      data: {
        code: "semantic_action_not_negotiated",
        message: "semantic action requires an explicitly negotiated feature",
        retryable: false,
        details: { action: "findElement", requiredFeature: "device.semanticActions.v1" },
      },
    });
    // Refused before anything was recorded.
    expect(((await d.call("events.list", {})).result as any[]).map((e) => e.payload.type)).toEqual(["sessionStarted"]);
  });

  test("sign in, sync and navigate through the app when driven only by selectors and node references", async () => {
    await using d = spawnDaemon();
    const sessionId = await ready(d);
    const found = (await run(d, "findElement", { selector: sel({ identifier: "username" }) })).result;
    expect(found.output).toEqual({
      element: { observationId: found.before.id, context: LOGIN_CONTEXT, stableNodeId: "login/username" },
    });
    expect(found.execution).toEqual({ mode: "nativeSemantic", context: LOGIN_CONTEXT });
    // Read-only: no second observation.
    expect(found.after).toEqual(found.before);
    expect(found.before.uiSnapshot).toEqual(
      expect.objectContaining({
        context: LOGIN_CONTEXT,
        nodeCount: 5,
        evidence: expect.objectContaining({ mediaType: UI_TREE_MEDIA_TYPE }),
      }),
    );

    const tapped = (await run(d, "tapElement", { target: { kind: "node", node: found.output.element } })).result;
    expect(tapped.execution).toEqual({
      mode: "coordinateFallback",
      context: LOGIN_CONTEXT,
      fallbackReason: "semanticInteractionUnavailable",
    });
    expect((await run(d, "inputText", { text: "alice" })).result.output).toEqual({ accepted: true, characters: 5 });

    // The sign-in button stays disabled until both fields have text.
    expect(errorOf(await run(d, "tapElement", { target: bySelector({ identifier: "sign_in" }) }))).toEqual({
      code: "element_not_interactable",
      message: "element is not interactable",
      retryable: false,
      details: null,
    });
    const setPw = await run(d, "setElementValue", { target: bySelector({ identifier: "password" }), value: "hunter2" });
    expect(setPw.result.output.element.stableNodeId).toBe("login/password");
    const signIn = (
      await run(d, "tapElement", { target: bySelector({ role: "button", text: text("SIGN IN", "exact", false) }) })
    ).result;
    expect([signIn.output.element.stableNodeId, signIn.after.metadata.screen]).toEqual(["login/sign_in", "home"]);
    const home = signIn.after.uiSnapshot.context;
    expect(home).toEqual({ contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "home-2" });

    const welcome = (
      await run(d, "waitForElement", {
        selector: sel({ text: text("^Welcome, alice$", "regex") }),
        condition: "visible",
      })
    ).result;
    expect(welcome.output).toEqual({
      matched: true,
      condition: "visible",
      element: { observationId: welcome.before.id, context: home, stableNodeId: "home/title" },
    });

    // The sync finishes a few observations later: the wait polls until it does.
    await run(d, "tapElement", { target: bySelector({ identifier: "sync" }) });
    const synced = (await run(d, "waitForElement", { selector: sel({ text: text("synced 3", "contains", false) }) }))
      .result;
    expect(synced.output).toEqual({
      matched: true,
      condition: "present",
      element: { observationId: synced.after.id, context: home, stableNodeId: "home/status" },
    });
    expect(synced.after.id).not.toBe(synced.before.id);
    expect(synced.execution).toEqual({ mode: "nativeSemantic", context: home });

    // A reference into the home screen goes stale once the app navigates away.
    const settingsRef = (await run(d, "findElement", { selector: sel({ role: "ListItem", name: "Settings" }) })).result
      .output.element;
    await run(d, "tapElement", { target: { kind: "node", node: settingsRef } });
    expect(errorOf(await run(d, "tapElement", { target: { kind: "node", node: settingsRef } }))?.code).toBe(
      "element_stale",
    );
    const toggled = (await run(d, "tapElement", { target: bySelector({ identifier: "dark_mode" }) })).result;
    expect(toggled.after.metadata.screen).toBe("settings");
    const dark = (await run(d, "waitForElement", { selector: sel({ identifier: "dark_mode", value: "on" }) })).result;
    expect(dark.output.matched).toBe(true);

    // Every semantic call left one actionStarted and one actionCompleted.
    const events = (await d.call("events.list", { sessionId })).result as any[];
    const started = events.filter((e) => e.payload.type === "actionStarted").length;
    const completed = events.filter((e) => e.payload.type === "actionCompleted").length;
    expect([started, completed]).toEqual([14, 14]);
  });

  test("answers typed errors for bad selectors, ambiguity and absence when findElement cannot pick one element", async () => {
    await using d = spawnDaemon();
    await ready(d);
    const code = async (args: unknown) => errorOf(await run(d, "findElement", args))?.code;
    // One at a time: the line client pairs each call with the next response.
    const codes: (string | undefined)[] = [];
    for (const args of [
      { selector: sel({}) },
      { selector: sel({ css: "#user" }) },
      { selector: sel({ css: "#user", context: { contextKind: "web", contextId: null } }) },
      { selector: sel({ text: text("(", "regex") }) },
      { selector: sel({ text: text("Sign in") }) },
      { selector: sel({ text: text("Forgot password?") }) },
      { selector: sel({ identifier: "username", context: { contextKind: "native", contextId: "com.other.app" } }) },
      { selector: sel({ identifier: "username" }), extra: true },
      {},
    ])
      codes.push(await code(args));
    expect(codes).toEqual([
      "invalid_arguments",
      "invalid_arguments",
      "ui_context_not_found",
      "invalid_arguments",
      "element_ambiguous",
      "element_not_found",
      "ui_context_not_found",
      "invalid_arguments",
      "invalid_arguments",
    ]);
  });

  test("waitForElement matches absent at once, times out under actionTimeoutMs, and is cancelled by request.cancel", async () => {
    await using d = spawnDaemon();
    const sessionId = await ready(d);
    const absent = (await run(d, "waitForElement", { selector: sel({ identifier: "status" }), condition: "absent" }))
      .result;
    expect(absent.output).toEqual({ matched: true, condition: "absent", element: null });

    const timedOut = await run(
      d,
      "waitForElement",
      { selector: sel({ identifier: "status" }) },
      { actionTimeoutMs: 250 },
    );
    expect(errorOf(timedOut)).toEqual({
      code: "action_timed_out",
      message: "Action timed out after 250 ms",
      retryable: true,
      details: { scope: "action", timeoutMs: 250 },
    });

    d.send({
      jsonrpc: "2.0",
      id: "wait-1",
      method: "device.execute",
      params: {
        id: crypto.randomUUID(),
        name: "waitForElement",
        arguments: { selector: sel({ identifier: "status" }) },
      },
    });
    // Cancel once the wait is recorded as started, so it ends as a cancelled action, not a refused one.
    for (let started = 0; started < 3; ) {
      const log = (await d.call("events.list", { sessionId })).result as any[];
      started = log.filter((e) => e.payload.type === "actionStarted").length;
    }
    d.send({ jsonrpc: "2.0", id: "cancel-1", method: "request.cancel", params: { requestId: "wait-1" } });
    const got = Object.fromEntries((await Promise.all([d.next(), d.next()])).map((r) => [String(r.id), r]));
    expect(got["cancel-1"]?.result).toEqual({ requestId: "wait-1", status: "requested" });
    expect(errorOf(got["wait-1"] as { error?: { data: unknown } })?.code).toBe("request_cancelled");

    const events = (await d.call("events.list", { sessionId })).result as any[];
    const outcomes = events.filter((e) => e.payload.type === "actionCompleted").map((e) => e.payload.outcome.outcome);
    expect(outcomes).toEqual(["succeeded", "timedOut", "cancelled"]);
  });

  test("waitForElement gives up with matched false after the default wait when no action budget is set", async () => {
    await using d = spawnDaemon();
    await ready(d);
    const t0 = Date.now();
    d.send({
      jsonrpc: "2.0",
      id: "wait",
      method: "device.execute",
      params: {
        id: crypto.randomUUID(),
        name: "waitForElement",
        arguments: { selector: sel({ identifier: "never-there" }) },
      },
    });
    const r = (await d.next(20_000)).result;
    expect(r.output).toEqual({ matched: false, condition: "present", element: null });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(10_000);
  }, 25_000);

  test("clearElement empties a field when its text was typed before", async () => {
    await using d = spawnDaemon();
    await ready(d);
    await run(d, "tapElement", { target: bySelector({ identifier: "username" }) });
    await run(d, "inputText", { text: "bob" });
    const cleared = (await run(d, "clearElement", { target: bySelector({ identifier: "username" }) })).result;
    expect(cleared.output.element.stableNodeId).toBe("login/username");
    const tree = (await d.call("ui.snapshot.get", { observationId: cleared.after.id })).result;
    expect(tree.nodes.find((n: any) => n.identifier === "username").value).toBe("");
  });
});
