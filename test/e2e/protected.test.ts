import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { canaryForms, filesUnder, leaksIn, processArgvs } from "../support/canary.ts";
import { ALL_FEATURES, helloParams, spawnDaemon } from "../support/daemon.ts";

// Printable ASCII with characters JSON escapes, so the raw, escaped and encoded forms all differ.
const CANARY = 'c4n4ry-"7f3a\\9e-secret';
const FORMS = canaryForms(CANARY);

/** Every form of the canary found in `bytes`, named by where it was found. */
const leaks = (where: string, bytes: Buffer) => leaksIn(FORMS, where, bytes.toString("latin1"));

const secretCall = (id: string, secret: unknown) => ({ id, name: "inputSecret", arguments: { secret } });

describe("protected actions", () => {
  test("are hidden and refused unless action.protected.v1 was negotiated", async () => {
    await using d = spawnDaemon();
    await d.call("system.hello", {
      ...helloParams(),
      features: { optional: ALL_FEATURES.filter((f) => f !== "action.protected.v1") },
    });
    await d.call("device.connect");
    // inputSecret and the protected semantic action setElementValue are not even listed.
    expect(((await d.call("device.capabilities")).result as any[]).map((a) => a.name)).toEqual([
      "tap",
      "inputText",
      "scroll",
      "back",
      "findElement",
      "tapElement",
      "clearElement",
      "waitForElement",
    ]);
    await d.call("session.start");
    const r = await d.call("device.execute", secretCall("0a6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11", CANARY));
    expect(r.error).toEqual({
      code: -32601,
      message: "protected action requires an explicitly negotiated feature",
      data: {
        code: "protected_action_not_negotiated",
        message: "protected action requires an explicitly negotiated feature",
        retryable: false,
        details: { action: "inputSecret", requiredFeature: "action.protected.v1" },
      },
    });
  });

  test("the secret never reaches responses, events, exports, logs, the data directory or any argv", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_LOG_LEVEL: "trace" } });
    const responses: string[] = [];
    const call = async (method: string, params?: unknown) => {
      const r = await d.call(method, params);
      responses.push(JSON.stringify(r));
      return r;
    };
    await d.hello();
    await call("device.connect");
    const caps = (await call("device.capabilities")).result as any[];
    expect(caps.find((a) => a.name === "inputSecret")).toEqual(expect.objectContaining({ protection: "protected" }));
    const sessionId = (await call("session.start")).result.id;
    const ok = await call("device.execute", secretCall("0a6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11", CANARY));
    const argvLeaks = leaks("process argv", Buffer.from(processArgvs()));
    expect(ok.result).toEqual({
      callId: "0a6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11",
      startedAtMs: expect.any(Number),
      finishedAtMs: expect.any(Number),
      output: { accepted: true },
      before: expect.objectContaining({ screenshot: null, screenshotOmission: "protectedAction" }),
      after: expect.objectContaining({ screenshot: null, screenshotOmission: "protectedAction" }),
      evidence: [],
    });
    // Refused calls must not echo the value either: a control character, an extra key, too long.
    // What to fix names the field and the rule, and the value only by its type and length.
    const SECRET_RULE = "a string of 1 to 1024 characters matching ^[\\u0020-\\u007e]+$";
    for (const [bad, expected, received] of [
      [`${CANARY}\n`, SECRET_RULE, `a string of ${CANARY.length + 1} code points`],
      [{ nested: CANARY }, SECRET_RULE, "an object"],
      [CANARY.repeat(100), SECRET_RULE, `a string of ${CANARY.length * 100} code points`],
    ] as const) {
      const r = await call("device.execute", secretCall(crypto.randomUUID(), bad));
      const issue = { pointer: "/secret", expected, received };
      expect(r.error?.data).toEqual({
        code: "invalid_arguments",
        message: "invalid arguments for action inputSecret",
        retryable: false,
        details: { action: "inputSecret", ...issue, issues: [issue] },
      });
    }
    // Into real fields of the Mock app: the password through inputSecret after focusing it, the
    // user name through the protected semantic setElementValue. Later trees show only bullets.
    const target = (identifier: string) => ({
      kind: "selector",
      selector: { context: null, role: null, name: null, value: null, identifier, text: null, css: null },
    });
    await call("device.execute", {
      id: crypto.randomUUID(),
      name: "tapElement",
      arguments: { target: target("password") },
    });
    await call("device.execute", secretCall(crypto.randomUUID(), CANARY));
    const set = await call("device.execute", {
      id: crypto.randomUUID(),
      name: "setElementValue",
      arguments: { target: target("username"), value: CANARY },
    });
    expect(set.result).toEqual(
      expect.objectContaining({
        output: { element: expect.objectContaining({ stableNodeId: "login/username" }) },
        before: expect.objectContaining({
          screenshot: null,
          screenshotOmission: "protectedAction",
          uiSnapshotOmission: "protectedAction",
        }),
        after: expect.objectContaining({
          screenshot: null,
          screenshotOmission: "protectedAction",
          uiSnapshotOmission: "protectedAction",
        }),
        evidence: [],
      }),
    );
    const observed = (await call("device.observe")).result;
    const tree = (await call("ui.snapshot.get", { observationId: observed.id })).result;
    const bullets = "•".repeat(CANARY.length);
    expect(
      tree.nodes
        .filter((n: any) => n.identifier === "username" || n.identifier === "password")
        .map((n: any) => [n.identifier, n.value, n.text]),
    ).toEqual([
      ["username", bullets, bullets],
      ["password", bullets, bullets],
    ]);
    await call("verdict.record", { verdict: { status: "pass", summary: "typed the password" } });
    const events = (await call("events.list", { sessionId })).result as any[];
    const started = events.filter((e) => e.payload.type === "actionStarted").map((e) => e.payload.call);
    expect(started.map((c) => c.name)).toEqual([
      "inputSecret",
      "inputSecret",
      "inputSecret",
      "inputSecret",
      "tapElement",
      "inputSecret",
      "setElementValue",
    ]);
    for (const c of started.filter((c) => c.name !== "tapElement"))
      expect(c).toEqual({ id: expect.any(String), name: c.name, arguments: null, argumentsRedacted: true });
    await call("session.end");
    await call("session.export", { sessionId });
    await call("session.export", { sessionId, limit: 2 });
    expect(await d.close()).toBe(0);

    const found = [
      ...responses.flatMap((r, i) => leaks(`response ${i}`, Buffer.from(r))),
      ...leaks("stderr logs", Buffer.from(d.stderr)),
      ...filesUnder(d.dataDir).flatMap((f) => leaks(f, readFileSync(f))),
      ...argvLeaks,
    ];
    expect(found).toEqual([]);
    // The sweep looked at real data: logs were written and the store holds the Session.
    expect(d.stderr.split("\n").length).toBeGreaterThan(2);
    expect(filesUnder(d.dataDir).some((f) => f.endsWith("devicerail.sqlite") && statSync(f).size > 0)).toBe(true);
  });
});
