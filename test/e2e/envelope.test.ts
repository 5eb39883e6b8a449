import { describe, expect, test } from "bun:test";
import { type RpcResponse, spawnDaemon } from "../support/daemon.ts";

const INVALID_REQUEST = {
  code: -32600,
  message: "request does not match the DeviceRail JSON-RPC subset",
  data: {
    code: "invalid_request",
    message: "request does not match the DeviceRail JSON-RPC subset",
    retryable: false,
    details: null,
  },
};

function expectOneOfResultOrError(r: RpcResponse): void {
  expect(r.jsonrpc).toBe("2.0");
  expect(("result" in r ? 1 : 0) + ("error" in r ? 1 : 0)).toBe(1);
  expect(Object.keys(r).sort()).toEqual(["error" in r ? "error" : "result", "id", "jsonrpc"].sort());
}

describe("JSON-RPC envelope over stdio", () => {
  test("a batch array is answered invalid_request with a null id when the client sends one", async () => {
    await using d = spawnDaemon();
    d.writeRaw('[{"jsonrpc":"2.0","id":1,"method":"system.describe"}]\n');
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
  });

  test("the id keeps its JSON type when it is a string or a number", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const s = await d.call("devices.list", {}, { id: "7" });
    const n = await d.call("devices.list", {}, { id: 7 });
    const z = await d.call("devices.list", {}, { id: 0 });
    const max = await d.call("devices.list", {}, { id: 9007199254740991 });
    const empty = await d.call("devices.list", {}, { id: "" });
    expect([s.id, n.id, z.id, max.id, empty.id]).toEqual(["7", 7, 0, 9007199254740991, ""]);
    for (const r of [s, n, z, max, empty]) expectOneOfResultOrError(r);
  });

  test("ids that are not a string or a safe non-negative integer are envelope errors when sent", async () => {
    await using d = spawnDaemon();
    for (const id of ["-1", "1.5", "1.0", "1e3", "9007199254740992", "null", "true", "{}", "[]"]) {
      d.writeRaw(`{"jsonrpc":"2.0","id":${id},"method":"system.describe"}\n`);
      expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
    }
  });

  test("jsonrpc must be exactly 2.0 when present and is required", async () => {
    await using d = spawnDaemon();
    for (const line of [
      '{"jsonrpc":"1.0","id":1,"method":"x"}',
      '{"id":1,"method":"x"}',
      '{"jsonrpc":2,"id":1,"method":"x"}',
    ]) {
      d.writeRaw(`${line}\n`);
      expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
    }
  });

  test("params must be an object or an array when present", async () => {
    await using d = spawnDaemon();
    for (const p of ["null", "1", '"x"', "true"]) {
      d.writeRaw(`{"jsonrpc":"2.0","id":1,"method":"system.describe","params":${p}}\n`);
      expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
    }
  });

  test("a request without id (a JSON-RPC notification) is invalid when sent", async () => {
    await using d = spawnDaemon();
    d.writeRaw('{"jsonrpc":"2.0","method":"system.describe"}\n');
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
  });

  test("no-param methods reject non-empty params and accept {} [] or none", async () => {
    await using d = spawnDaemon();
    await d.hello();
    for (const p of [undefined, {}, []]) expect((await d.call("system.describe", p)).result).toBeDefined();
    for (const method of [
      "system.describe",
      "devices.list",
      "device.connect",
      "device.disconnect",
      "device.capabilities",
      "device.observe",
      "session.start",
      "session.current",
      "sessions.list",
    ]) {
      for (const p of [{ a: 1 }, [1]]) {
        const r = await d.call(method, p);
        expect(r.error).toEqual({
          code: -32602,
          message: `${method} does not accept params`,
          data: {
            code: "invalid_params",
            message: `${method} does not accept params`,
            retryable: false,
            details: { method },
          },
        });
      }
    }
  });

  test("params are decoded positionally when a method with params gets an array", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const r = await d.call("request.cancel", [42]);
    expect(r.result).toEqual({ requestId: 42, status: "notFound" });
    const tooMany = await d.call("request.cancel", [42, 43]);
    expect(tooMany.error?.data.code).toBe("invalid_params");
  });

  test("unknown top-level keys and duplicate top-level keys are envelope errors", async () => {
    await using d = spawnDaemon();
    for (const line of [
      '{"jsonrpc":"2.0","id":1,"method":"system.describe","deadlineMs":5}',
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"system.describe"}',
      '{"jsonrpc":"2.0","id":1,"method":"system.describe","\\u0069d":2}',
    ]) {
      d.writeRaw(`${line}\n`);
      expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
    }
  });

  test("duplicate keys inside params keep the last value", async () => {
    await using d = spawnDaemon();
    await d.hello();
    d.writeRaw('{"jsonrpc":"2.0","id":5,"method":"request.cancel","params":{"requestId":1,"requestId":"two"}}\n');
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: 5, result: { requestId: "two", status: "notFound" } });
  });

  test("timeoutMs of 0, null, negative, fractional, string or above 2^53-1 is an envelope error", async () => {
    await using d = spawnDaemon();
    await d.hello();
    for (const t of ["0", "null", "-5", "1.5", "10.0", '"10"', "9007199254740992"]) {
      d.writeRaw(`{"jsonrpc":"2.0","id":1,"method":"device.observe","timeoutMs":${t}}\n`);
      expect(await d.next()).toEqual({ jsonrpc: "2.0", id: null, error: INVALID_REQUEST });
    }
  });

  test("every response has exactly one of result and error when a mixed session runs", async () => {
    await using d = spawnDaemon();
    const responses = [
      await d.call("system.describe"),
      await d.hello(),
      await d.call("system.describe"),
      await d.call("nope"),
    ];
    d.writeRaw("{]\n");
    responses.push(await d.next());
    for (const r of responses) expectOneOfResultOrError(r);
  });
});
