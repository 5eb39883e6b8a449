import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { canaryForms, filesUnder, leaksIn } from "../support/canary.ts";
import { ALL_FEATURES, helloParams, spawnDaemon } from "../support/daemon.ts";
import { ServeDaemon } from "./serve-daemon.ts";

/*
 * Errors that say what to fix, on the real daemon: invalid_arguments and invalid_params carry where
 * (a JSON Pointer into the arguments or params), what was expected and what came; unknown_action
 * lists the actions the connection may call; secrets are described by type and length only.
 */

const TAP_BELOW = { pointer: "/x", expected: "a number of at least 0", received: "-1" };
const refusedTap = (details: object) => ({
  code: -32000,
  message: "invalid arguments for action tap",
  data: { code: "invalid_arguments", message: "invalid arguments for action tap", retryable: false, details },
});
const MOCK_ACTIONS = ["tap", "inputText", "scroll", "back"];
const SEMANTIC = ["findElement", "tapElement", "clearElement", "setElementValue", "waitForElement"];

/** A stdio daemon with a connected Mock and an active Session, after a hello offering `features`. */
async function started(features = ALL_FEATURES) {
  const d = spawnDaemon({ env: { DEVICERAIL_LOG_LEVEL: "trace" } });
  await d.call("system.hello", helloParams({ optional: features }));
  await d.call("device.connect");
  const sessionId: string = (await d.call("session.start")).result.id;
  const execute = (name: string, args: unknown) =>
    d.call("device.execute", { id: crypto.randomUUID(), name, arguments: args });
  return { d, sessionId, execute };
}

describe("error details", () => {
  test("a refused tap argument over JSON-RPC names the field, the rule and the value, in the response and in its event", async () => {
    const { d, sessionId, execute } = await started();
    await using _ = d;
    const r = await execute("tap", { x: -1, y: 1 });
    const error = refusedTap({ action: "tap", ...TAP_BELOW, issues: [TAP_BELOW] });
    expect(r.error).toEqual(error);
    const events = (await d.call("events.list", { sessionId })).result as { payload: any }[];
    expect(events.at(-1)?.payload.outcome).toEqual({ outcome: "failed", error: error.data });
  });

  test("POST /devices/_/actions/tap with a negative x answers 400 with the same details over HTTP", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const res = await fetch(`http://127.0.0.1:${d.port}/devices/_/actions/tap`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"x":-1,"y":1}',
    });
    expect([res.status, await res.json()]).toEqual([
      400,
      { error: refusedTap({ action: "tap", ...TAP_BELOW, issues: [TAP_BELOW] }) },
    ]);
  });

  test("a tap outside the Mock's 1280×720 screen is refused with the bound and the viewport", async () => {
    const { d, execute } = await started();
    await using _ = d;
    const x = { pointer: "/x", expected: "x from 0 to 1279", received: "1280" };
    const y = { pointer: "/y", expected: "y from 0 to 719", received: "4000.5" };
    expect((await execute("tap", { x: 1280, y: 4000.5 })).error).toEqual(
      refusedTap({ action: "tap", ...x, issues: [x, y], viewport: { width: 1280, height: 720 } }),
    );
    expect((await execute("tap", { x: 1279, y: 719 })).result.output).toEqual({ accepted: true, x: 1279, y: 719 });
  });

  test("an unknown action lists the actions the connection may call, protected and semantic ones only when negotiated", async () => {
    const unknown = async (features: string[]) => {
      const { d, execute } = await started(features);
      await using _ = d;
      return (await execute("swipe", { startX: 1 })).error?.data;
    };
    const answer = (availableActions: string[]) => ({
      code: "unknown_action",
      message: "unknown action: swipe",
      retryable: false,
      details: { action: "swipe", availableActions },
    });
    const without = (...off: string[]) => ALL_FEATURES.filter((f) => !off.includes(f));
    expect([
      await unknown(ALL_FEATURES),
      await unknown(without("action.protected.v1")),
      await unknown(without("action.protected.v1", "device.semanticActions.v1")),
    ]).toEqual([
      answer([...MOCK_ACTIONS, "inputSecret", ...SEMANTIC]),
      answer([...MOCK_ACTIONS, ...SEMANTIC.filter((n) => n !== "setElementValue")]),
      answer(MOCK_ACTIONS),
    ]);
  });

  test("a secret never appears in an invalid_arguments error, its events, the export, the logs or the data directory", async () => {
    // Printable ASCII with characters JSON escapes, so the raw, escaped and encoded forms all differ.
    const CANARY = 'c4n4ry-"9b1d\\77-secret';
    const { d, sessionId, execute } = await started();
    await using _ = d;
    const responses: string[] = [];
    const refused = async (name: string, args: unknown) => {
      const r = await execute(name, args);
      responses.push(JSON.stringify(r));
      return r.error?.data.details;
    };
    const target = {
      kind: "selector",
      selector: { context: null, role: null, name: null, value: null, identifier: "username", text: null, css: null },
    };
    const regexTarget = {
      kind: "selector",
      selector: { ...target.selector, identifier: null, text: { value: `${CANARY}(`, mode: "regex" } },
    };
    const details = [
      await refused("inputSecret", { secret: `${CANARY}\u0001` }),
      await refused("inputSecret", { secret: [CANARY] }),
      await refused("inputSecret", { secret: "ok", [CANARY]: CANARY }),
      await refused("inputSecret", CANARY),
      await refused("setElementValue", { target, value: { CANARY } }),
      await refused("setElementValue", { target: regexTarget, value: CANARY }),
    ];
    const issue = (pointer: string, expected: string, received: string) => ({ pointer, expected, received });
    const SECRET_RULE = "a string of 1 to 1024 characters matching ^[\\u0020-\\u007e]+$";
    expect(details.map((x: any) => [x.action, x.issues])).toEqual([
      ["inputSecret", [issue("/secret", SECRET_RULE, `a string of ${CANARY.length + 1} code points`)]],
      ["inputSecret", [issue("/secret", SECRET_RULE, "an array of 1 item")]],
      ["inputSecret", [issue("", "only the key secret", "an unknown key")]],
      ["inputSecret", [issue("", "an object with key secret", `a string of ${CANARY.length} code points`)]],
      ["setElementValue", [issue("/value", "a string of at most 65536 code points", "an object")]],
      [
        "setElementValue",
        [
          issue(
            "/target/selector/text/value",
            "an RE2 regular expression (no backreferences or lookaround)",
            `a string of ${CANARY.length + 1} code points`,
          ),
        ],
      ],
    ]);
    responses.push(JSON.stringify(await d.call("events.list", { sessionId })));
    await d.call("session.end");
    responses.push(JSON.stringify(await d.call("session.export", { sessionId })));
    expect(await d.close()).toBe(0);
    const forms = canaryForms(CANARY);
    const found = [
      ...responses.flatMap((r, i) => leaksIn(forms, `response ${i}`, r)),
      ...leaksIn(forms, "stderr logs", d.stderr),
      ...filesUnder(d.dataDir).flatMap((f) => leaksIn(forms, f, readFileSync(f).toString("latin1"))),
    ];
    expect(found).toEqual([]);
  });
});
