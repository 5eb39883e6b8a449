import { afterEach, describe, expect, test } from "bun:test";
import { MOCK_PNG } from "../../../drivers/mock/index.ts";
import {
  type CallContext,
  type Driver,
  type ObserveOptions,
  type Protection,
  type RawObservation,
  abortable,
} from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import type { ActionDefinition } from "../../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../../src/protocol/types/device.ts";
import { type EvidenceStore, sha256Hex } from "../../../src/core/evidence/evidence-store.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";
import { coreHarness } from "../../support/core-harness.ts";
import { OneDeviceDriver } from "../../support/fake-driver.ts";
import { LOGIN_SCREEN_PNG, LOGIN_SCREEN_SHA, pngRef } from "../../support/mock-screens.ts";

/*
 * executeAction through the real dispatcher and device.execute handler (core harness), so that
 * cancellation, request deadlines and shutdown carry the dispatcher's own reasons.
 */

const DEVICE = "scripted-1";
const VIEWPORT = { width: 100, height: 200, scaleFactor: 2 };
const CALL_ID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const SECRET = "pin-4711-correct-horse";
const FEATURES = ["events.snapshot.v1", "request.control.v1", "action.protected.v1"];

const MOCK_SHOT = pngRef(sha256Hex(MOCK_PNG));
const LOGIN_SHOT = pngRef(LOGIN_SCREEN_SHA);

interface Executed {
  name: string;
  arguments: unknown;
  deadline: number | null;
}

/**
 * A device `scripted-1` with a standard `tap` and a protected `enterPin`. Observations show
 * `screens` in turn (the last one repeats); `onActions`, `onObserve` and `onExecute` run inside
 * the driver calls, so a test can make them fail, or park until released or aborted.
 */
class ScriptedDriver extends OneDeviceDriver implements Driver {
  readonly name = "scripted";
  readonly uiTrees = false;
  info: DeviceInfo = {
    id: DEVICE,
    name: "Scripted",
    platform: { kind: "other", value: "scripted" },
    osVersion: "1",
    connected: false,
  };
  screens: Uint8Array[] = [MOCK_PNG];
  observed: ObserveOptions[] = [];
  executed: Executed[] = [];
  onActions: () => Promise<void> = async () => {};
  onObserve: (n: number, ctx: CallContext) => Promise<void> = async () => {};
  onExecute: (ctx: CallContext) => Promise<unknown> = async () => ({ accepted: true });
  private readonly definitions: ActionDefinition[] = [
    { name: "tap", description: "tap a point", inputSchema: { type: "object" } },
    { name: "enterPin", description: "type a PIN", inputSchema: { type: "object" }, protection: "protected" },
  ];

  async actions(): Promise<ActionDefinition[]> {
    await this.onActions();
    return this.definitions.map((d) => ({ ...d }));
  }
  classify(_d: string, name: string): Protection | undefined {
    const d = this.definitions.find((x) => x.name === name);
    return d ? (d.protection ?? "standard") : undefined;
  }
  async observe(_d: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    const n = this.observed.push(opts) - 1;
    await this.onObserve(n, ctx);
    const shot = this.screens[Math.min(n, this.screens.length - 1)] as Uint8Array;
    return { viewport: VIEWPORT, screenshot: opts.screenshot ? shot : null, metadata: {} };
  }
  async execute(
    deviceId: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    this.executed.push({ name: call.name, arguments: call.arguments, deadline: ctx.deadline });
    if (!this.classify(deviceId, call.name)) throw new DriverError("unknown_action", { action: call.name });
    return { output: await this.onExecute(ctx) };
  }
}

/** A driver step that resolves `entered` with its context, then waits until that context aborts and fails as drivers do. */
const parkUntilAborted = (entered: { resolve(ctx: CallContext): void }) => (ctx: CallContext) => {
  entered.resolve(ctx);
  return abortable(new Promise<never>(() => {}), ctx);
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function setup(features = FEATURES) {
  const driver = new ScriptedDriver();
  const h = await coreHarness({ driver });
  cleanups.push(h.cleanup);
  const c = await h.connect(features);
  expect((await c.ask("device.connect")).result.connected).toBe(true);
  const sessionId: string = (await c.ask("session.start")).result.id;
  const execute = (params: { name: string; arguments?: unknown; actionTimeoutMs?: number }, extra: object = {}) =>
    c.call("device.execute", { id: CALL_ID, ...params }, extra);
  /** The Session's events after sessionStarted, without their random ids and clocks. */
  const events = (): { sequence: number; requestId: unknown; deviceId: unknown; payload: any }[] =>
    h.core.log
      .read(sessionId, 1)
      .map(({ sequence, requestId, deviceId, payload }) => ({ sequence, requestId, deviceId, payload }));
  return { ...h, c, driver, sessionId, execute, events };
}

const observation = (screenshot: ReturnType<typeof pngRef> | null) => ({
  id: expect.any(String),
  deviceId: DEVICE,
  capturedAtMs: expect.any(Number),
  viewport: VIEWPORT,
  screenshot,
  ...(screenshot ? {} : { screenshotOmission: "protectedAction" }),
  metadata: {},
});

const started = (requestId: unknown, call: object) => ({
  sequence: 2,
  requestId,
  deviceId: DEVICE,
  payload: { type: "actionStarted", call: { id: CALL_ID, ...call } },
});
const completed = (requestId: unknown, outcome: object) => ({
  sequence: 3,
  requestId,
  deviceId: DEVICE,
  payload: { type: "actionCompleted", callId: CALL_ID, outcome },
});
const errorInfo = (code: string, message: string, retryable: boolean, details: unknown) => ({
  code,
  message,
  retryable,
  details,
});

const SHOT = { screenshot: true, uiTree: false };
const NO_SHOT = { screenshot: false, uiTree: false };

describe("executeAction", () => {
  test("records actionStarted with the arguments, then actionCompleted succeeded with the result the client gets, when the driver answers", async () => {
    const s = await setup();
    s.driver.onExecute = async () => ({ accepted: true, x: 3 });
    const call = s.execute({ name: "tap", arguments: { x: 3, y: 4 } });
    const r = await call.response;
    expect(r.result).toEqual({
      callId: CALL_ID,
      startedAtMs: expect.any(Number),
      finishedAtMs: expect.any(Number),
      output: { accepted: true, x: 3 },
      before: observation(MOCK_SHOT),
      after: observation(MOCK_SHOT),
      evidence: [MOCK_SHOT],
    });
    expect(r.result.finishedAtMs).toBeGreaterThanOrEqual(r.result.startedAtMs);
    expect(r.result.before.id).not.toBe(r.result.after.id);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: { x: 3, y: 4 } }),
      completed(call.id, { outcome: "succeeded", result: r.result }),
    ]);
    expect([s.driver.observed, s.driver.executed]).toEqual([
      [SHOT, SHOT],
      [{ name: "tap", arguments: { x: 3, y: 4 }, deadline: null }],
    ]);
    expect(s.core.log.evidenceOf(s.sessionId)).toEqual(new Set([MOCK_SHOT.sha256]));
  });

  test("records and passes null arguments when the call has none", async () => {
    const s = await setup();
    const call = s.execute({ name: "tap" });
    expect((await call.response).result.output).toEqual({ accepted: true });
    expect(s.events()[0]).toEqual(started(call.id, { name: "tap", arguments: null }));
    expect(s.driver.executed).toEqual([{ name: "tap", arguments: null, deadline: null }]);
  });

  test("lists the before and after screenshots as evidence, each once and in order, when they differ", async () => {
    const s = await setup();
    s.driver.screens = [MOCK_PNG, LOGIN_SCREEN_PNG];
    const r = await s.execute({ name: "tap", arguments: {} }).response;
    expect([r.result.before.screenshot, r.result.after.screenshot, r.result.evidence]).toEqual([
      MOCK_SHOT,
      LOGIN_SHOT,
      [MOCK_SHOT, LOGIN_SHOT],
    ]);
    expect(s.core.log.evidenceOf(s.sessionId)).toEqual(new Set([MOCK_SHOT.sha256, LOGIN_SHOT.sha256]));
  });

  test("hands the driver plain numbers when the arguments hold integers past 2^53, which the wire parser keeps apart", async () => {
    const s = await setup();
    const call = s.execute({ name: "tap", arguments: { x: 2 ** 60, path: [2 ** 60] } });
    expect((await call.response).result.output).toEqual({ accepted: true });
    expect(s.driver.executed).toEqual([{ name: "tap", arguments: { x: 2 ** 60, path: [2 ** 60] }, deadline: null }]);
    expect(s.events()[0]).toEqual(started(call.id, { name: "tap", arguments: { x: 2 ** 60, path: [2 ** 60] } }));
  });

  test("records actionCompleted failed with the driver's error, and takes no after observation, when the driver fails", async () => {
    const s = await setup();
    s.driver.onExecute = async () => {
      throw new DriverError("platform_error", {
        platformCode: "adb.transport_closed",
        retryable: true,
        detail: "for the log only",
      });
    };
    const call = s.execute({ name: "tap", arguments: { x: 1, y: 1 } });
    const error = errorInfo("platform_error", "platform operation failed", true, {
      platformCode: "adb.transport_closed",
    });
    expect((await call.response).error).toEqual({ code: -32000, message: "platform operation failed", data: error });
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: { x: 1, y: 1 } }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect(s.driver.observed).toEqual([SHOT]);
    // The before screenshot stays pinned to the Session by the terminal event.
    expect(s.core.log.evidenceOf(s.sessionId)).toEqual(new Set([MOCK_SHOT.sha256]));
  });

  test("records the arguments as sent and fails with invalid_arguments, naming only the action, when the driver refuses them", async () => {
    const s = await setup();
    s.driver.onExecute = async () => {
      throw new DriverError("invalid_arguments", { action: "tap", detail: "x must be a number" });
    };
    const call = s.execute({ name: "tap", arguments: { x: "left" } });
    const error = errorInfo("invalid_arguments", "invalid arguments for action tap", false, { action: "tap" });
    expect((await call.response).error.data).toEqual(error);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: { x: "left" } }),
      completed(call.id, { outcome: "failed", error }),
    ]);
  });

  test("answers internal_error when the driver throws something that is not an RpcError", async () => {
    const s = await setup();
    s.driver.onExecute = async () => {
      throw new TypeError(`cannot read properties of undefined (reading '${SECRET}')`);
    };
    const call = s.execute({ name: "tap", arguments: {} });
    const error = errorInfo("internal_error", "internal driver error", true, null);
    const r = await call.response;
    expect(r.error).toEqual({ code: -32000, message: "internal driver error", data: error });
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect(JSON.stringify([r, s.core.log.read(s.sessionId)])).not.toContain(SECRET);
  });

  test("records redacted arguments and no screenshots, and never the secret, when the action is protected", async () => {
    const s = await setup();
    s.driver.onExecute = async () => ({ accepted: true });
    const call = s.execute({ name: "enterPin", arguments: { pin: SECRET } });
    const r = await call.response;
    expect(r.result).toEqual({
      callId: CALL_ID,
      startedAtMs: expect.any(Number),
      finishedAtMs: expect.any(Number),
      output: { accepted: true },
      before: observation(null),
      after: observation(null),
      evidence: [],
    });
    expect(s.events()).toEqual([
      started(call.id, { name: "enterPin", arguments: null, argumentsRedacted: true }),
      completed(call.id, { outcome: "succeeded", result: r.result }),
    ]);
    // The driver still gets the real arguments; screenshots are not even taken.
    expect([s.driver.observed, s.driver.executed]).toEqual([
      [NO_SHOT, NO_SHOT],
      [{ name: "enterPin", arguments: { pin: SECRET }, deadline: null }],
    ]);
    expect(JSON.stringify(s.core.log.read(s.sessionId))).not.toContain(SECRET);
    expect(s.core.log.evidenceOf(s.sessionId)).toEqual(new Set());
  });

  test("keeps the secret out of the events and the answer when a protected action's arguments are refused", async () => {
    const s = await setup();
    s.driver.onExecute = async () => {
      throw new DriverError("invalid_arguments", { action: "enterPin", detail: `bad pin ${SECRET}` });
    };
    const call = s.execute({ name: "enterPin", arguments: { pin: SECRET } });
    const r = await call.response;
    const error = errorInfo("invalid_arguments", "invalid arguments for action enterPin", false, {
      action: "enterPin",
    });
    expect(r.error.data).toEqual(error);
    expect(s.events()).toEqual([
      started(call.id, { name: "enterPin", arguments: null, argumentsRedacted: true }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect(JSON.stringify([r, s.core.log.read(s.sessionId)])).not.toContain(SECRET);
  });

  test("treats an unknown name like a protected action and records unknown_action listing the device's actions", async () => {
    const s = await setup();
    const call = s.execute({ name: "typeSecretly", arguments: { text: SECRET } });
    const error = errorInfo("unknown_action", "unknown action: typeSecretly", false, {
      action: "typeSecretly",
      availableActions: ["tap", "enterPin"],
    });
    expect((await call.response).error.data).toEqual(error);
    expect(s.events()).toEqual([
      started(call.id, { name: "typeSecretly", arguments: null, argumentsRedacted: true }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect([s.driver.observed, s.driver.executed]).toEqual([
      [NO_SHOT],
      [{ name: "typeSecretly", arguments: { text: SECRET }, deadline: null }],
    ]);
    expect(JSON.stringify(s.core.log.read(s.sessionId))).not.toContain(SECRET);
  });

  test("lists only the standard actions in unknown_action when the connection did not negotiate protected actions", async () => {
    const s = await setup(FEATURES.filter((f) => f !== "action.protected.v1"));
    const call = s.execute({ name: "enterPIN", arguments: {} });
    const error = errorInfo("unknown_action", "unknown action: enterPIN", false, {
      action: "enterPIN",
      availableActions: ["tap"],
    });
    expect((await call.response).error.data).toEqual(error);
    expect(s.events()[1]?.payload).toEqual({
      type: "actionCompleted",
      callId: CALL_ID,
      outcome: { outcome: "failed", error },
    });
  });

  test("fails without running the action when the before observation fails", async () => {
    const s = await setup();
    s.driver.onObserve = async () => {
      throw new DriverError("device_not_connected", { deviceId: DEVICE });
    };
    const call = s.execute({ name: "tap", arguments: {} });
    const error = errorInfo("device_not_connected", `device ${DEVICE} is not connected`, true, { deviceId: DEVICE });
    expect((await call.response).error.data).toEqual(error);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect([s.driver.observed, s.driver.executed]).toEqual([[SHOT], []]);
  });

  test("fails the action when the after observation fails, although the driver ran it", async () => {
    const s = await setup();
    s.driver.onObserve = async (n) => {
      if (n === 1) throw new DriverError("platform_error", { platformCode: "screencap.failed" });
    };
    const call = s.execute({ name: "tap", arguments: {} });
    const error = errorInfo("platform_error", "platform operation failed", false, { platformCode: "screencap.failed" });
    expect((await call.response).error.data).toEqual(error);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, { outcome: "failed", error }),
    ]);
    expect([s.driver.observed, s.driver.executed]).toEqual([
      [SHOT, SHOT],
      [{ name: "tap", arguments: {}, deadline: null }],
    ]);
  });

  test("records actionCompleted cancelled with reason requested and aborts the driver when the request is cancelled", async () => {
    const s = await setup();
    const entered = Promise.withResolvers<CallContext>();
    s.driver.onExecute = parkUntilAborted(entered);
    const call = s.execute({ name: "tap", arguments: {} });
    const driverCtx = await entered.promise;
    expect(s.events()).toEqual([started(call.id, { name: "tap", arguments: {} })]);
    expect((await s.c.ask("request.cancel", { requestId: call.id })).result.status).toBe("requested");
    expect((await call.response).error.data).toEqual(
      errorInfo("request_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
    );
    expect(driverCtx.signal.aborted).toBe(true);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "cancelled",
        error: errorInfo("action_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
      }),
    ]);
    // Cancelled before its after observation: the driver was not asked again.
    expect(s.driver.observed).toEqual([SHOT]);
  });

  test("cancels without running the action when the request is cancelled during the before observation", async () => {
    const s = await setup();
    const entered = Promise.withResolvers<CallContext>();
    s.driver.onObserve = (_n, ctx) => parkUntilAborted(entered)(ctx);
    const call = s.execute({ name: "tap", arguments: {} });
    await entered.promise;
    await s.c.ask("request.cancel", { requestId: call.id });
    expect((await call.response).error.data.code).toBe("request_cancelled");
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "cancelled",
        error: errorInfo("action_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
      }),
    ]);
    expect(s.driver.executed).toEqual([]);
  });

  // executeAction links the driver's signal to the request's only after it has read the action
  // space and appended actionStarted; a signal that aborted meanwhile must still stop the action.
  test("records actionCompleted cancelled when the request is cancelled before the driver is called", async () => {
    const s = await setup();
    const reading = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    s.driver.onActions = () => {
      reading.resolve();
      return release.promise;
    };
    s.driver.onObserve = (_n, ctx) => parkUntilAborted({ resolve() {} })(ctx);
    const call = s.execute({ name: "tap", arguments: {} });
    await reading.promise;
    expect((await s.c.ask("request.cancel", { requestId: call.id })).result.status).toBe("requested");
    release.resolve();
    expect((await call.response).error.data).toEqual(
      errorInfo("request_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
    );
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "cancelled",
        error: errorInfo("action_cancelled", "request was cancelled: Requested", false, { reason: "requested" }),
      }),
    ]);
    expect(s.driver.executed).toEqual([]);
  });

  test("records actionCompleted cancelled with reason shutdown before the Session ends when the connection closes mid-action", async () => {
    const s = await setup();
    const entered = Promise.withResolvers<CallContext>();
    s.driver.onExecute = parkUntilAborted(entered);
    const call = s.execute({ name: "tap", arguments: {} });
    await entered.promise;
    await s.c.close();
    expect((await call.response).error.data).toEqual(
      errorInfo("request_cancelled", "request was cancelled: Shutdown", false, { reason: "shutdown" }),
    );
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "cancelled",
        error: errorInfo("action_cancelled", "request was cancelled: Shutdown", false, { reason: "shutdown" }),
      }),
      {
        sequence: 4,
        requestId: undefined,
        deviceId: undefined,
        payload: { type: "sessionEnded", outcome: "shutdown", reason: "RPC connection closed" },
      },
    ]);
  });

  test("records actionCompleted timedOut with scope request when the request's timeoutMs runs out", async () => {
    const s = await setup();
    s.driver.onExecute = parkUntilAborted(Promise.withResolvers());
    const call = s.execute({ name: "tap", arguments: {} }, { timeoutMs: 30 });
    expect((await call.response).error.data).toEqual(
      errorInfo("request_timed_out", "Request timed out after 30 ms", true, { scope: "request", timeoutMs: 30 }),
    );
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "timedOut",
        error: errorInfo("action_timeout", "Request timed out after 30 ms", true, { scope: "request", timeoutMs: 30 }),
        timeoutMs: 30,
      }),
    ]);
  });

  test("records actionCompleted timedOut with scope action and aborts the driver when actionTimeoutMs runs out", async () => {
    const s = await setup();
    const entered = Promise.withResolvers<CallContext>();
    s.driver.onExecute = parkUntilAborted(entered);
    const call = s.execute({ name: "tap", arguments: {}, actionTimeoutMs: 30 });
    expect((await call.response).error.data).toEqual(
      errorInfo("action_timed_out", "Action timed out after 30 ms", true, { scope: "action", timeoutMs: 30 }),
    );
    expect((await entered.promise).signal.aborted).toBe(true);
    expect(s.events()).toEqual([
      started(call.id, { name: "tap", arguments: {} }),
      completed(call.id, {
        outcome: "timedOut",
        error: errorInfo("action_timeout", "Action timed out after 30 ms", true, { scope: "action", timeoutMs: 30 }),
        timeoutMs: 30,
      }),
    ]);
  });

  for (const [first, timeoutMs, actionTimeoutMs, code, scope] of [
    ["action budget", 60_000, 30, "action_timed_out", "action"],
    ["request deadline", 30, 60_000, "request_timed_out", "request"],
  ] as const)
    test(`ends with the ${first}'s timeout when it is the earlier of the two`, async () => {
      const s = await setup();
      s.driver.onExecute = parkUntilAborted(Promise.withResolvers());
      const call = s.execute({ name: "tap", arguments: {}, actionTimeoutMs }, { timeoutMs });
      const message = `${scope === "action" ? "Action" : "Request"} timed out after 30 ms`;
      expect((await call.response).error.data).toEqual(errorInfo(code, message, true, { scope, timeoutMs: 30 }));
      expect(s.events()[1]?.payload).toEqual({
        type: "actionCompleted",
        callId: CALL_ID,
        outcome: {
          outcome: "timedOut",
          error: errorInfo("action_timeout", message, true, { scope, timeoutMs: 30 }),
          timeoutMs: 30,
        },
      });
    });

  for (const [given, timeoutMs, actionTimeoutMs, budget] of [
    ["neither a request timeoutMs nor an action budget", undefined, undefined, null],
    ["only a request timeoutMs", 60_000, undefined, 60_000],
    ["only an action budget", undefined, 60_000, 60_000],
    ["an action budget shorter than the request's timeoutMs", 60_000, 1_000, 1_000],
    ["a request timeoutMs shorter than the action budget", 1_000, 60_000, 1_000],
  ] as const)
    test(`hands the driver ${budget === null ? "no deadline" : `a deadline ${budget} ms out`} when given ${given}`, async () => {
      const s = await setup();
      const t0 = Date.now();
      const r = await s.execute(
        { name: "tap", arguments: {}, ...(actionTimeoutMs ? { actionTimeoutMs } : {}) },
        timeoutMs ? { timeoutMs } : {},
      ).response;
      const t1 = Date.now();
      expect(r.result.output).toEqual({ accepted: true });
      const deadline = s.driver.executed[0]?.deadline;
      if (budget === null) expect(deadline).toBeNull();
      else {
        expect(deadline).toBeGreaterThanOrEqual(t0 + budget);
        expect(deadline).toBeLessThanOrEqual(t1 + budget);
      }
    });

  test("does not time out at once when actionTimeoutMs is past the range of a timer", async () => {
    const s = await setup();
    // Simulated latency: long enough for a timer whose delay overflowed (it fires after 1 ms) to fire.
    s.driver.onExecute = async (ctx) => {
      await Bun.sleep(20);
      if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
      return { accepted: true };
    };
    const t0 = Date.now();
    const r = await s.execute({ name: "tap", arguments: {}, actionTimeoutMs: 2 ** 31 }).response;
    expect(r.result.output).toEqual({ accepted: true });
    expect(s.driver.executed[0]?.deadline).toBeGreaterThanOrEqual(t0 + 2 ** 31);
    expect(s.events()[1]?.payload).toEqual({
      type: "actionCompleted",
      callId: CALL_ID,
      outcome: { outcome: "succeeded", result: r.result },
    });
  });
});

/** The harness's Evidence store, with its `failAt`-th put (0-based) failing as a full disk does. */
function failingPut(s: Awaited<ReturnType<typeof setup>>, failAt: number): void {
  const real = s.core.evidence;
  let puts = 0;
  const store: EvidenceStore = {
    put: (bytes, mediaType) => {
      if (puts++ === failAt)
        return Promise.reject(new RpcError("evidence_io_error", { details: { operation: "write", errno: "ENOSPC" } }));
      return real.put(bytes, mediaType);
    },
    read: (sha) => real.read(sha),
    remove: (shas) => real.remove(shas),
  };
  (s.core as { evidence: EvidenceStore }).evidence = store;
}

describe("executeAction on a full disk", () => {
  test("answers action_outcome_unknown, not retryable, and records it when the after observation cannot be stored", async () => {
    const s = await setup();
    failingPut(s, 1);
    const call = s.execute({ name: "tap", arguments: { x: 1, y: 1 } });
    const r = await call.response;
    const unknown = errorInfo(
      "action_outcome_unknown",
      `the outcome of action ${CALL_ID} could not be recorded; it may have run on the device: observe the device before retrying`,
      false,
      { callId: CALL_ID, reason: "evidence store I/O failed (ENOSPC)" },
    );
    expect({ error: r.error?.data, executed: s.driver.executed.length, events: s.events() }).toEqual({
      error: unknown,
      executed: 1,
      events: [
        started(call.id, { name: "tap", arguments: { x: 1, y: 1 } }),
        completed(call.id, { outcome: "failed", error: unknown }),
      ],
    });
  });

  test("answers the store's retryable error when the before observation cannot be stored, as the device was not touched", async () => {
    const s = await setup();
    failingPut(s, 0);
    const call = s.execute({ name: "tap", arguments: { x: 1, y: 1 } });
    const r = await call.response;
    const io = errorInfo("evidence_io_error", "evidence store I/O failed", true, {
      operation: "write",
      errno: "ENOSPC",
    });
    expect({ error: r.error?.data, executed: s.driver.executed.length, events: s.events() }).toEqual({
      error: io,
      executed: 0,
      events: [
        started(call.id, { name: "tap", arguments: { x: 1, y: 1 } }),
        completed(call.id, { outcome: "failed", error: io }),
      ],
    });
  });
});
