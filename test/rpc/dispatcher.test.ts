import { describe, expect, test } from "bun:test";
import { connectionPolicy } from "../../src/core/connection-policy.ts";
import { stateOf } from "../../src/core/connection-state.ts";
import { createHandlers } from "../../src/core/handlers/index.ts";
import { DeviceService } from "../../src/core/devices/device-service.ts";
import { MemoryEvidenceStore } from "../../src/core/evidence/evidence-store.ts";
import { openDatabase } from "../../src/core/sessions/db.ts";
import { EventLog } from "../../src/core/sessions/event-log.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { Connection } from "../../src/rpc/connection.ts";
import { Dispatcher, type Handlers } from "../../src/rpc/dispatcher.ts";
import { type Logger, silentLogger } from "../../src/protocol/rpc-error.ts";

const HELLO = {
  jsonrpc: "2.0",
  id: "h",
  method: "system.hello",
  params: {
    client: { name: "t", version: "1" },
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    features: { optional: ["request.control.v1", "device.routing.v1", "events.snapshot.v1"] },
  },
};

/** A dispatcher over the real handlers with some replaced, one registered device and captured output. */
function setup(
  overrides: Partial<Handlers> = {},
  opts: { log?: Logger; onClose?: (conn: Connection) => Promise<void> } = {},
) {
  const devices = new DeviceService(silentLogger);
  devices.registry.upsert({
    id: "fake-1",
    name: "Fake",
    platform: { kind: "other", value: "test" },
    osVersion: null,
    connected: false,
  });
  const core = {
    devices,
    evidence: new MemoryEvidenceStore(),
    log: new EventLog(openDatabase(":memory:")),
    screenshotPolicy: "capture" as const,
  };
  const policy = connectionPolicy(core, silentLogger);
  const dispatcher = new Dispatcher({
    handlers: { ...createHandlers(core), ...overrides },
    policy: opts.onClose ? { ...policy, close: opts.onClose } : policy,
    server: { name: "devicerail-daemon", version: "test" },
    log: opts.log ?? silentLogger,
  });
  const out: any[] = [];
  const waiters: (() => void)[] = [];
  const conn = new Connection(
    { kind: "stdio", framing: "ndjson" },
    { eventStreamListener: false, screenshotPolicy: "capture", evidenceStore: true, mediaStreams: true },
    (f) => {
      out.push(JSON.parse(f));
      waiters.splice(0).forEach((w) => w());
    },
  );
  const send = (msg: object) => dispatcher.handleText(conn, JSON.stringify(msg));
  const waitFor = async (n: number) => {
    while (out.length < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { dispatcher, conn, out, send, waitFor };
}

/** A connect handler that runs until its signal aborts, then throws like a driver would. */
const hanging: Partial<Handlers> = {
  "device.connect": (_p, ctx) =>
    new Promise((_, reject) =>
      ctx.signal.addEventListener("abort", () => reject(new Error("driver stopped")), { once: true }),
    ),
};

const req = (id: string | number, method: string, extra: object = {}) => ({ jsonrpc: "2.0", id, method, ...extra });

describe("Dispatcher request control", () => {
  test("request.cancel cancels a running concurrent request with reason requested", async () => {
    const { send, out, waitFor } = setup(hanging);
    await send(HELLO);
    await send(req(1, "device.connect"));
    await send(req(2, "request.cancel", { params: { requestId: 1 } }));
    await send(req(3, "request.cancel", { params: { requestId: 1 } }));
    await waitFor(4);
    expect(out.slice(1)).toEqual([
      { jsonrpc: "2.0", id: 2, result: { requestId: 1, status: "requested" } },
      { jsonrpc: "2.0", id: 3, result: { requestId: 1, status: "alreadyRequested" } },
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32007,
          message: "request was cancelled: Requested",
          data: {
            code: "request_cancelled",
            message: "request was cancelled: Requested",
            retryable: false,
            details: { reason: "requested" },
          },
        },
      },
    ]);
  });

  test("a driver stopping on cancellation answers request_cancelled, not driver_cancelled", async () => {
    const { send, out, waitFor } = setup({
      "device.capabilities": (_p, ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(new DriverError("driver_cancelled")), { once: true }),
        ),
    });
    await send(HELLO);
    await send(req(1, "device.capabilities"));
    await send(req(2, "request.cancel", { params: { requestId: 1 } }));
    await waitFor(3);
    expect(out[2].error.data).toEqual({
      code: "request_cancelled",
      message: "request was cancelled: Requested",
      retryable: false,
      details: { reason: "requested" },
    });
  });

  test("timeoutMs fires as request_timed_out with the budget when the handler does not finish", async () => {
    const { send, out, waitFor } = setup(hanging);
    await send(HELLO);
    await send(req(7, "device.connect", { timeoutMs: 30 }));
    await waitFor(2);
    expect(out[1]).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32008,
        message: "Request timed out after 30 ms",
        data: {
          code: "request_timed_out",
          message: "Request timed out after 30 ms",
          retryable: true,
          details: { scope: "request", timeoutMs: 30 },
        },
      },
    });
  });

  test("a reserved id answers request_id_in_use while its request runs, and is free afterwards", async () => {
    const { send, out, waitFor, conn } = setup(hanging);
    await send(HELLO);
    await send(req("x", "device.connect"));
    await send(req("x", "sessions.list"));
    await waitFor(2);
    expect(out[1]).toEqual({
      jsonrpc: "2.0",
      id: "x",
      error: {
        code: -32009,
        message: "request id is already active on this connection",
        data: {
          code: "request_id_in_use",
          message: "request id is already active on this connection",
          retryable: false,
          details: { requestId: "x" },
        },
      },
    });
    await send(req(9, "request.cancel", { params: { requestId: "x" } }));
    await waitFor(4);
    await Promise.all([...conn.inFlight.values()].map((f) => f.done));
    await send(req("x", "sessions.list"));
    await waitFor(5);
    expect(out[4]).toEqual({ jsonrpc: "2.0", id: "x", result: [] });
  });

  test("the 257th concurrent request answers too_many_requests", async () => {
    const { send, out, waitFor } = setup(hanging);
    await send(HELLO);
    for (let i = 0; i < 256; i++) await send(req(i, "device.connect"));
    await send(req(256, "device.connect"));
    await waitFor(2);
    expect(out[1]).toEqual({
      jsonrpc: "2.0",
      id: 256,
      error: {
        code: -32010,
        message: "this connection has reached its in-flight request limit",
        data: {
          code: "too_many_requests",
          message: "this connection has reached its in-flight request limit",
          retryable: true,
          details: { limit: 256 },
        },
      },
    });
  });

  test("close cancels in-flight requests with reason shutdown and still answers them", async () => {
    const { send, out, waitFor, dispatcher, conn } = setup(hanging);
    await send(HELLO);
    await send(req(1, "device.connect"));
    await dispatcher.close(conn, "daemon shutdown");
    await waitFor(2);
    expect(out[1].error.data).toEqual({
      code: "request_cancelled",
      message: "request was cancelled: Shutdown",
      retryable: false,
      details: { reason: "shutdown" },
    });
    await send(req(2, "sessions.list"));
    expect(out[2].error.data.code).toBe("request_cancelled");
  });

  test("routes are captured at admission: lazy sole-device selection shows in describe", async () => {
    const { send, out, waitFor } = setup();
    await send(HELLO);
    await send(req(1, "system.describe"));
    await waitFor(2);
    expect(out[1].result.deviceId).toBe("fake-1");
  });
});

describe("Dispatcher result checks", () => {
  const broken: Partial<Handlers> = { "sessions.list": () => [{ id: "not-a-session" }] as never };

  test("a result that fails its schema answers internal_error and is logged", async () => {
    const logged: string[] = [];
    const log: Logger = { ...silentLogger, error: (_o, msg) => void logged.push(msg ?? "") };
    const { send, out, waitFor } = setup(broken, { log });
    await send(HELLO);
    await send(req(1, "sessions.list"));
    await waitFor(2);
    expect(out[1]).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32603,
        message: "internal server error",
        data: { code: "internal_error", message: "internal server error", retryable: false, details: null },
      },
    });
    expect(logged).toEqual(["handler result does not match its schema"]);
  });

  test("an unexpected throw answers internal_error without leaking its message", async () => {
    const { send, out, waitFor } = setup({
      "sessions.list": () => {
        throw new Error("secret-ish internals");
      },
    });
    await send(HELLO);
    await send(req(1, "sessions.list"));
    await waitFor(2);
    expect(JSON.stringify(out[1])).not.toContain("secret-ish");
    expect(out[1].error.data.code).toBe("internal_error");
  });

  test("a driver's protocol_error is logged with its detail and the method, and the detail is not sent", async () => {
    const logged: { obj: object; msg?: string }[] = [];
    const log: Logger = { ...silentLogger, warn: (obj, msg) => void logged.push({ obj, msg }) };
    const { send, out, waitFor } = setup(
      {
        "device.connect": () => {
          throw new DriverError("protocol_error", { detail: "driver answered for emulator-5556" });
        },
      },
      { log },
    );
    await send(HELLO);
    await send(req(1, "device.connect"));
    await waitFor(2);
    expect(out[1].error.data).toEqual({
      code: "protocol_error",
      message: "driver protocol error",
      retryable: false,
      details: null,
    });
    expect(JSON.stringify(out[1])).not.toContain("emulator-5556");
    expect(logged).toEqual([
      {
        obj: { method: "device.connect", code: "protocol_error", detail: "driver answered for emulator-5556" },
        msg: "request failed: the device or its driver answered something unusable",
      },
    ]);
  });

  test("an error a client acts on (element_not_found) is answered without a log line", async () => {
    const logged: string[] = [];
    const log: Logger = { ...silentLogger, warn: (_o, msg) => void logged.push(msg ?? "") };
    const { send, out, waitFor } = setup(
      {
        "device.connect": () => {
          throw new DriverError("element_not_found", { detail: "no node matched" });
        },
      },
      { log },
    );
    await send(HELLO);
    await send(req(1, "device.connect"));
    await waitFor(2);
    expect(out[1].error.data.code).toBe("element_not_found");
    expect(logged).toEqual([]);
  });

  test("a frozen result is served from the memo and a mutable one is checked every time", async () => {
    let calls = 0;
    const frozen = Object.freeze([]) as never[];
    const { send, out, waitFor } = setup({
      "sessions.list": () => (calls++ === 0 ? frozen : ([{ bad: true }] as never)),
    });
    await send(HELLO);
    await send(req(1, "sessions.list"));
    await send(req(2, "sessions.list"));
    await waitFor(3);
    expect(out[1]).toEqual({ jsonrpc: "2.0", id: 1, result: [] });
    expect(out[2].error.data.code).toBe("internal_error");
  });
});

const SESSION = {
  id: "7d3c2b1a-0f9e-4d8c-b7a6-5e4f3d2c1b0a",
  state: "active",
  startedAtMs: 1,
  endedAtMs: null,
  eventCount: 1,
  lastSequence: 1,
} as const;

describe("Dispatcher.close", () => {
  test("waits for an inline request that is still running, so its cleanup sees the Session that request started", async () => {
    const gate = Promise.withResolvers<void>();
    const seen: (string | null)[] = [];
    const { dispatcher, conn, send } = setup(
      {
        "session.start": async (_p, { conn }) => {
          await gate.promise;
          stateOf(conn).activeSessionId = SESSION.id;
          return SESSION;
        },
      },
      { onClose: async (c) => void seen.push(stateOf(c).activeSessionId) },
    );
    await send(HELLO);
    void send(req(1, "session.start"));
    let closed = false;
    const closing = dispatcher.close(conn, "RPC connection closed").then(() => (closed = true));
    // The handler is parked on its gate: close must not have run the cleanup yet.
    await new Promise<void>((r) => setImmediate(r));
    expect([closed, seen]).toEqual([false, []]);
    gate.resolve();
    await closing;
    expect(seen).toEqual([SESSION.id]);
  });

  test("aborts an inline request's signal, so a session.start still probing its device stops at once", async () => {
    const seen: (string | null)[] = [];
    const { dispatcher, conn, send, out, waitFor } = setup(
      {
        "session.start": (_p, ctx) =>
          new Promise((_, reject) =>
            ctx.signal.addEventListener("abort", () => reject(new DriverError("driver_cancelled")), { once: true }),
          ),
      },
      { onClose: async (c) => void seen.push(stateOf(c).activeSessionId) },
    );
    await send(HELLO);
    void send(req(1, "session.start"));
    const t0 = performance.now();
    await dispatcher.close(conn, "RPC connection closed");
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(seen).toEqual([null]);
    await waitFor(2);
    expect(out[1].error.data.code).toBe("driver_cancelled");
  });

  test("answers request_cancelled to a request that arrives after close began", async () => {
    const { dispatcher, conn, send, out, waitFor } = setup();
    await send(HELLO);
    await dispatcher.close(conn, "RPC connection closed");
    await send(req(1, "sessions.list"));
    await waitFor(2);
    expect(out[1].error.data).toEqual({
      code: "request_cancelled",
      message: "request was cancelled: Shutdown",
      retryable: false,
      details: { reason: "shutdown" },
    });
  });
});
