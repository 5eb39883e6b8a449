import { describe, expect, test } from "bun:test";
import { helloParams, spawnDaemon } from "../support/daemon.ts";

const CONCURRENT = [
  "device.connect",
  "device.disconnect",
  "device.capabilities",
  "device.observe",
  "device.execute",
  "media.stream.capture",
];

describe("dispatch precedence", () => {
  test("feature-gated methods answer method_not_found with requiredFeature when the feature is off", async () => {
    await using d = spawnDaemon();
    await d.call("system.hello", { ...helloParams(), features: { required: [], optional: [] } });
    const gates: [string, string][] = [
      ["request.cancel", "request.control.v1"],
      ["events.list", "events.snapshot.v1"],
      ["events.clear", "events.snapshot.v1"],
      ["session.export", "events.snapshot.v1"],
      ["sessions.list", "events.snapshot.v1"],
      ["events.stream.open", "events.stream.v1"],
      ["media.stream.start", "media.stream.v1"],
      ["media.stream.capture", "media.stream.v1"],
      ["media.stream.end", "media.stream.v1"],
      ["devices.list", "device.routing.v1"],
      ["device.select", "device.routing.v1"],
      ["ui.snapshot.get", "observation.uiSnapshot.v1"],
      ["verdict.record", "verdict.record.v1"],
    ];
    for (const [method, requiredFeature] of gates) {
      const r = await d.call(method, { whatever: 1 });
      expect(r.error).toEqual({
        code: -32601,
        message: `method is not available: ${method}`,
        data: {
          code: "method_not_found",
          message: `method is not available: ${method}`,
          retryable: false,
          details: { method, requiredFeature },
        },
      });
    }
  });

  test("unknown methods, and events.subscribe on stdio, answer method_not_found without requiredFeature", async () => {
    await using d = spawnDaemon();
    await d.hello();
    for (const method of ["no.such", "events.subscribe", "", "constructor", "__proto__", "toString"]) {
      const r = await d.call(method);
      expect(r.error).toEqual({
        code: -32601,
        message: `method is not available: ${method}`,
        data: {
          code: "method_not_found",
          message: `method is not available: ${method}`,
          retryable: false,
          details: { method },
        },
      });
    }
  });

  test("timeoutMs before request.control.v1 is feature_not_negotiated when selected minor is 1.0", async () => {
    await using d = spawnDaemon();
    await d.call("system.hello", helloParams({ max: 0 }));
    const r = await d.call("device.observe", undefined, { timeoutMs: 100 });
    expect(r.error).toEqual({
      code: -32602,
      message: "timeoutMs requires negotiated request control",
      data: {
        code: "feature_not_negotiated",
        message: "timeoutMs requires negotiated request control",
        retryable: false,
        details: { field: "timeoutMs", requiredFeature: "request.control.v1" },
      },
    });
  });

  test("timeoutMs on a method without deadlines is request_timeout_not_supported when request control is on", async () => {
    await using d = spawnDaemon();
    await d.hello();
    for (const method of ["system.describe", "devices.list", "session.start", "sessions.list", "request.cancel"]) {
      const r = await d.call(method, undefined, { timeoutMs: 100 });
      expect(r.error).toEqual({
        code: -32602,
        message: `timeoutMs is not supported by ${method}`,
        data: {
          code: "request_timeout_not_supported",
          message: `timeoutMs is not supported by ${method}`,
          retryable: false,
          details: { field: "timeoutMs", method, supportedMethods: CONCURRENT },
        },
      });
    }
  });

  test("timeoutMs is accepted on the six concurrent methods when request control is on", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const params: Record<string, unknown> = {
      "device.execute": { id: "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11", name: "tap", arguments: { x: 1, y: 1 } },
      "media.stream.capture": { streamId: "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11", frameIndex: 1 },
    };
    const outcome: Record<string, string> = {};
    for (const method of CONCURRENT) {
      const r = await d.call(method, params[method], { timeoutMs: 5000 });
      outcome[method] = r.error ? r.error.data.code : "result";
    }
    expect(outcome).toEqual({
      "device.connect": "result",
      "device.disconnect": "result",
      "device.capabilities": "result",
      "device.observe": "session_required",
      "device.execute": "session_required",
      "media.stream.capture": "session_required",
    });
  });

  test("device methods need a selection when several devices are registered", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_MOCK_DEVICES: "2" } });
    await d.hello();
    const r = await d.call("device.connect");
    expect(r.error?.data).toEqual({
      code: "device_selection_required",
      message: "select a device before calling device methods",
      retryable: true,
      details: {
        availableDeviceIds: ["mock-1", "mock-2"],
        deviceCount: 2,
        requiredFeature: "device.routing.v1",
        requiredMethod: "device.select",
      },
    });
    expect((await d.call("device.select", { deviceId: "mock-9" })).error?.data).toEqual({
      code: "device_not_found",
      message: "device is not registered: mock-9",
      retryable: false,
      details: { deviceId: "mock-9" },
    });
    expect((await d.call("device.select", { deviceId: "mock-2" })).result.device.id).toBe("mock-2");
    expect((await d.call("device.connect")).result.id).toBe("mock-2");
  });

  test("invalid params answer invalid_params naming the method and what to fix", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const U53 = "an integer from 1 to 9007199254740991 or null";
    const cases: [string, unknown, string, string, string][] = [
      ["device.select", {}, "/deviceId", "a string", "no value"],
      ["device.select", { deviceId: 5 }, "/deviceId", "a string", "5"],
      ["request.cancel", { requestId: -1 }, "/requestId", "a string or an integer from 0 to 9007199254740991", "-1"],
      ["events.list", { limit: 0 }, "/limit", "an integer from 1 to 1000 or null", "0"],
      ["events.list", { limit: 1001 }, "/limit", "an integer from 1 to 1000 or null", "1001"],
      ["events.list", { afterSequence: 0 }, "/afterSequence", U53, "0"],
      ["events.list", [null, 0], "/1", U53, "0"],
      [
        "events.list",
        [null, 1, 2, 3],
        "/3",
        "at most 3 positional params (sessionId, afterSequence, limit)",
        "4 params",
      ],
      ["session.export", { sessionId: "not-a-uuid" }, "/sessionId", "a UUID or null", '"not-a-uuid"'],
      ["ui.snapshot.get", { observationId: "x" }, "/observationId", "a UUID", '"x"'],
      ["device.execute", { id: "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11" }, "/name", "a string", "no value"],
      [
        "verdict.record",
        { verdict: { status: "maybe", summary: "x" } },
        "/verdict/status",
        "one of: pass, fail, unknown",
        '"maybe"',
      ],
    ];
    for (const [method, p, pointer, expected, received] of cases) {
      const r = await d.call(method, p);
      const issue = { pointer, expected, received };
      expect(r.error).toEqual({
        code: -32602,
        message: `${method} params are invalid`,
        data: {
          code: "invalid_params",
          message: `${method} params are invalid`,
          retryable: false,
          details: { method, ...issue, issues: [issue] },
        },
      });
    }
  });

  test("request.cancel of an unknown or inline id answers notFound with the id's type kept", async () => {
    await using d = spawnDaemon();
    await d.hello();
    expect((await d.call("request.cancel", { requestId: "x" })).result).toEqual({ requestId: "x", status: "notFound" });
    expect((await d.call("request.cancel", { requestId: 3 })).result).toEqual({ requestId: 3, status: "notFound" });
  });
});

describe("the 22 other control methods", () => {
  const U = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
  const calls: [string, unknown, string][] = [
    ["devices.list", undefined, "result"],
    ["device.select", { deviceId: "mock-1" }, "result"],
    ["device.connect", undefined, "result"],
    ["device.capabilities", undefined, "result"],
    ["device.observe", undefined, "session_required"],
    ["device.execute", { id: U, name: "tap", arguments: { x: 1, y: 2 } }, "session_required"],
    ["media.stream.start", { streamId: U, kind: "screenshot" }, "session_required"],
    ["media.stream.capture", { streamId: U, frameIndex: 1 }, "session_required"],
    ["media.stream.end", { streamId: U }, "session_required"],
    ["request.cancel", { requestId: 1 }, "result"],
    ["session.current", undefined, "session_required"],
    ["session.end", undefined, "session_required"],
    ["sessions.list", undefined, "result"],
    ["session.export", undefined, "session_required"],
    ["session.export", { sessionId: U }, "session_not_found"],
    ["session.export", { afterSequence: 3 }, "invalid_params"],
    ["events.list", { sessionId: U }, "session_not_found"],
    ["events.clear", { sessionId: U }, "session_not_found"],
    ["events.clear", undefined, "session_required"],
    ["events.stream.open", { sessionId: U, originPolicy: { kind: "absent" } }, "result"],
    ["ui.snapshot.get", { observationId: U }, "session_required"],
    ["verdict.record", { verdict: { status: "pass", summary: "ok" } }, "session_required"],
    ["session.start", undefined, "result"],
    ["session.start", undefined, "session_already_active"],
    ["device.disconnect", undefined, "result"],
    ["device.observe", undefined, "device_not_connected"],
    ["session.end", undefined, "result"],
  ];

  test("each answers a typed result or error and the daemon keeps serving", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const seen: string[] = [];
    for (const [method, params] of calls) {
      const r = await d.call(method, params);
      seen.push(`${method} ${r.error ? r.error.data.code : "result"}`);
    }
    expect(seen).toEqual(calls.map(([m, , c]) => `${m} ${c}`));
    expect(await d.close()).toBe(0);
  });

  test("semantic actions without the feature answer semantic_action_not_negotiated before routing", async () => {
    await using d = spawnDaemon();
    await d.call("system.hello", { ...helloParams(), features: { optional: ["request.control.v1"] } });
    const r = await d.call("device.execute", { id: U, name: "tapElement", arguments: {} });
    expect(r.error).toEqual({
      code: -32601,
      message: "semantic action requires an explicitly negotiated feature",
      data: {
        code: "semantic_action_not_negotiated",
        message: "semantic action requires an explicitly negotiated feature",
        retryable: false,
        details: { action: "tapElement", requiredFeature: "device.semanticActions.v1" },
      },
    });
  });

  test("actionTimeoutMs without request control is feature_not_negotiated", async () => {
    await using d = spawnDaemon();
    await d.call("system.hello", helloParams({ max: 0 }));
    const r = await d.call("device.execute", { id: U, name: "tap", arguments: {}, actionTimeoutMs: 10 });
    expect(r.error?.data).toEqual({
      code: "feature_not_negotiated",
      message: "actionTimeoutMs requires negotiated request control",
      retryable: false,
      details: { field: "actionTimeoutMs", requiredFeature: "request.control.v1" },
    });
  });
});
