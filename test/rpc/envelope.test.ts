import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { RpcRequestSchema } from "../../src/protocol/jsonrpc.ts";
import { decodeEnvelope } from "../../src/rpc/envelope.ts";
import { JsonFloat, parseJson } from "../../src/protocol/json.ts";

const base = { jsonrpc: "2.0", id: 1, method: "system.describe" };
const values: unknown[] = [null, true, 0, 1, -1, 1.5, 2 ** 53, 2 ** 53 - 1, "", "x", [], [1], {}, { a: 1 }];

/** Every single-field variation of a valid request, plus shapes that are not objects at all. */
function corpus(): unknown[] {
  const out: unknown[] = [base, { ...base, params: {} }, { ...base, params: [] }, { ...base, timeoutMs: 5 }, ...values];
  for (const key of ["jsonrpc", "id", "method", "timeoutMs", "params", "extra"])
    for (const value of values) out.push({ ...base, [key]: value });
  for (const key of ["jsonrpc", "id", "method"]) {
    const { [key as keyof typeof base]: _, ...rest } = base;
    out.push(rest);
  }
  return out;
}

describe("decodeEnvelope", () => {
  test("accepts exactly what RpcRequestSchema accepts when given plain JSON values", () => {
    const disagreements = corpus().filter(
      (x) => (decodeEnvelope(x, false) !== null) !== v.safeParse(RpcRequestSchema, x).success,
    );
    expect(disagreements).toEqual([]);
  });

  test("rejects a duplicate top-level key when the parser reports one", () => {
    expect(decodeEnvelope(base, true)).toBeNull();
  });

  test("rejects float-tagged numbers where integers or containers are required", () => {
    for (const key of ["id", "timeoutMs", "params"])
      expect(decodeEnvelope({ ...base, [key]: new JsonFloat(1) }, false)).toBeNull();
  });

  test("returns the request unchanged when it is valid", () => {
    const parsed = parseJson('{"jsonrpc":"2.0","id":"a","method":"m","timeoutMs":9,"params":{"k":[1]}}');
    expect(parsed.ok && decodeEnvelope(parsed.value, parsed.duplicateTopLevelKey)).toEqual({
      jsonrpc: "2.0",
      id: "a",
      method: "m",
      timeoutMs: 9,
      params: { k: [1] },
    });
  });
});
