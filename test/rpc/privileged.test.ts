import { describe, expect, test } from "bun:test";
import { connectionPolicy } from "../../src/core/connection-policy.ts";
import { createHandlers } from "../../src/core/handlers/index.ts";
import { DeviceService } from "../../src/core/devices/device-service.ts";
import { MemoryEvidenceStore } from "../../src/core/evidence/evidence-store.ts";
import { openDatabase } from "../../src/core/sessions/db.ts";
import { EventLog } from "../../src/core/sessions/event-log.ts";
import { errorObject } from "../../src/protocol/errors.ts";
import type { Privileged } from "../../src/protocol/methods.ts";
import { Connection } from "../../src/rpc/connection.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";

const FEATURES = ["request.control.v1", "device.routing.v1", "events.snapshot.v1"];
const hello = (features: string[]) => ({
  client: { name: "t", version: "1" },
  protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
  features: { optional: features },
});

/** One connection of the given transport kind, after its hello, over the real handlers. */
async function connected(kind: string, features = FEATURES) {
  const devices = new DeviceService(silentLogger);
  const core = {
    devices,
    evidence: new MemoryEvidenceStore(),
    log: new EventLog(openDatabase(":memory:")),
    screenshotPolicy: "capture" as const,
  };
  const dispatcher = new Dispatcher({
    handlers: createHandlers(core),
    policy: connectionPolicy(core, silentLogger),
    server: { name: "devicerail-daemon", version: "test" },
    log: silentLogger,
  });
  let onFrame = (_frame: string) => {};
  const conn = new Connection(
    { kind, framing: "jsonMessage" },
    { eventStreamListener: false, screenshotPolicy: "capture", evidenceStore: true, mediaStreams: true },
    (f) => onFrame(f),
  );
  let id = 0;
  const call = async (method: string, params?: object) => {
    const out = await dispatcher.call(conn, ++id, method, params);
    return out.ok ? { result: out.result } : { error: out.error };
  };
  // timeoutMs travels in the envelope, which `call` does not build: send such requests as lines.
  const line = (method: string, params: object, timeoutMs: number) => {
    const answered = Promise.withResolvers<any>();
    onFrame = (f) => answered.resolve(JSON.parse(f));
    void dispatcher.handleText(conn, JSON.stringify({ jsonrpc: "2.0", id: "line", method, params, timeoutMs }));
    return answered.promise;
  };
  expect((await call("system.hello", hello(features))).result).toBeDefined();
  return { call, line };
}

const refusal = (method: string, transport: string, privileged: Privileged) =>
  errorObject("method_not_permitted_on_transport", {
    arg: method,
    details: { method, transport, privileged, allowedTransports: ["stdio", "tcp", "unix"] },
  });

describe("privileged methods in the dispatch precedence", () => {
  test("the feature gate answers first when the method's feature was not negotiated", async () => {
    const { call } = await connected("webSocket", ["request.control.v1"]);
    expect((await call("events.clear", { sessionId: crypto.randomUUID() })).error).toEqual(
      errorObject("method_not_found", {
        arg: "events.clear",
        details: { method: "events.clear", requiredFeature: "events.snapshot.v1" },
      }),
    );
  });

  test("an always-privileged method is refused before its timeoutMs and its params are checked when the transport is a WebSocket", async () => {
    const { call, line } = await connected("webSocket");
    expect((await call("events.clear", { sessionId: 7 })).error).toEqual(
      refusal("events.clear", "webSocket", "always"),
    );
    expect((await line("sessions.list", {}, 1_000)).error).toEqual(refusal("sessions.list", "webSocket", "always"));
  });

  test("a read of another connection's Session is refused after its params decode when the transport is a WebSocket", async () => {
    const { call } = await connected("webSocket");
    expect((await call("events.list", { sessionId: 7 })).error?.data.code).toBe("invalid_params");
    expect((await call("session.export", { sessionId: crypto.randomUUID() })).error).toEqual(
      refusal("session.export", "webSocket", "otherSession"),
    );
  });

  test("the same calls reach their handlers when the transport runs privileged calls", async () => {
    for (const kind of ["stdio", "tcp", "unix", "http"]) {
      const { call } = await connected(kind);
      const unknown = crypto.randomUUID();
      expect({ kind, code: (await call("events.clear", { sessionId: unknown })).error?.data.code }).toEqual({
        kind,
        code: "session_not_found",
      });
      expect({ kind, result: (await call("sessions.list")).result }).toEqual({ kind, result: [] });
    }
  });

  test("a transport kind the table does not name runs no privileged call", async () => {
    const { call } = await connected("somethingNew");
    expect((await call("sessions.list")).error).toEqual(refusal("sessions.list", "somethingNew", "always"));
  });
});
