import { describe, expect, test } from "bun:test";
import { type HttpPolicy, admit, loopbackHosts } from "../../src/transports/http-guard.ts";
import { checkJsonContentType, httpStatusOf, readBody } from "../../src/protocol/http.ts";
import { AccessToken } from "../../src/transports/token.ts";

const PORT = 4711;
const policy = (extra: Partial<HttpPolicy> = {}): HttpPolicy => ({
  hosts: loopbackHosts(PORT),
  origins: new Set(["http://localhost:5173"]),
  token: null,
  ...extra,
});
const req = (headers: Record<string, string>, init: RequestInit = {}) =>
  new Request(`http://127.0.0.1:${PORT}/devices`, { ...init, headers });

async function verdict(r: Response | null): Promise<[number, string] | null> {
  if (!r) return null;
  const body = (await r.json()) as { error: { data: { code: string; details: { reason: string } } } };
  return [r.status, body.error.data.details.reason];
}

describe("admit", () => {
  test("accepts the three loopback spellings with the port when no Origin is sent", async () => {
    for (const host of [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`])
      expect(await verdict(admit(req({ host }), policy()))).toBeNull();
  });

  test("refuses other Hosts, foreign Origins and cross-site requests without Origin", async () => {
    const cases: [Record<string, string>, [number, string]][] = [
      [{ host: "evil.test" }, [403, "hostNotAllowed"]],
      [{ host: `127.0.0.1:${PORT + 1}` }, [403, "hostNotAllowed"]],
      [{ host: `127.0.0.1:${PORT}`, origin: "http://evil.test" }, [403, "originNotAllowed"]],
      [{ host: `127.0.0.1:${PORT}`, origin: "null" }, [403, "originNotAllowed"]],
      [{ host: `127.0.0.1:${PORT}`, "sec-fetch-site": "cross-site" }, [403, "crossSiteRequest"]],
      [{ host: `127.0.0.1:${PORT}`, "sec-fetch-site": "same-site" }, [403, "crossSiteRequest"]],
    ];
    for (const [headers, expected] of cases) expect(await verdict(admit(req(headers), policy()))).toEqual(expected);
    expect(
      await verdict(
        admit(
          req({ host: `127.0.0.1:${PORT}`, origin: "http://localhost:5173", "sec-fetch-site": "cross-site" }),
          policy(),
        ),
      ),
    ).toBeNull();
    expect(await verdict(admit(req({ host: `127.0.0.1:${PORT}`, "sec-fetch-site": "none" }), policy()))).toBeNull();
  });

  test("accepts any Host when the policy has none, and checks the bearer token when one is configured", async () => {
    const token = new AccessToken("a-token-of-enough-length");
    expect(await verdict(admit(req({ host: "whatever" }), policy({ hosts: null })))).toBeNull();
    const guarded = policy({ token });
    const host = `127.0.0.1:${PORT}`;
    expect(await verdict(admit(req({ host }), guarded))).toEqual([401, "missingBearerToken"]);
    expect(await verdict(admit(req({ host, authorization: "Bearer nope" }), guarded))).toEqual([
      401,
      "wrongBearerToken",
    ]);
    expect(await verdict(admit(req({ host, authorization: "Bearer a-token-of-enough-length" }), guarded))).toBeNull();
  });
});

describe("checkJsonContentType and readBody", () => {
  test("accepts application/json with parameters and refuses every other type with 415", async () => {
    expect(checkJsonContentType(req({ "content-type": "Application/JSON; charset=utf-8" }))).toBeNull();
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "application/jsonx",
      "application/json-seq",
    ])
      expect((checkJsonContentType(req({ "content-type": type })) as Response).status).toBe(415);
    expect((checkJsonContentType(req({})) as Response).status).toBe(415);
  });

  test("reads a body up to 1 MiB and refuses a longer or non-UTF-8 one", async () => {
    const post = (body: string | Uint8Array) => new Request("http://x/", { method: "POST", body });
    expect(await readBody(post("x".repeat(1_048_576)))).toHaveLength(1_048_576);
    expect(((await readBody(post("x".repeat(1_048_577)))) as Response).status).toBe(413);
    expect(((await readBody(post(new Uint8Array([0xc3, 0x28])))) as Response).status).toBe(400);
  });
});

describe("httpStatusOf", () => {
  test("maps JSON-RPC error codes to fitting HTTP statuses", () => {
    const codes = [
      "invalid_params",
      "device_not_found",
      "unknown_action",
      "device_in_use",
      "session_busy",
      "device_not_connected",
      "request_timed_out",
      "element_not_found",
      "internal_error",
      "platform_error",
    ];
    expect(codes.map(httpStatusOf)).toEqual([400, 404, 404, 409, 409, 503, 504, 422, 500, 500]);
  });
});
