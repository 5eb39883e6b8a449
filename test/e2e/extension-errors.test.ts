/**
 * The daemon's extension HTTP routes answer with the error table's numbers, as every other route
 * does (docs/protocol/errors.md): the live report's refusals are the protocol's method_not_found
 * and session_not_found, not a catch-all −32000.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ServeDaemon } from "./serve-daemon.ts";

let d: ServeDaemon;
let base: string;
const UNKNOWN = "0e1f0596-5b23-4a91-a1ed-b08dc93203c5";

beforeAll(async () => {
  d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
  base = `http://127.0.0.1:${d.port}`;
});
afterAll(async () => {
  await d?.stop();
});

const answer = async (res: Response) => ({
  status: res.status,
  error: ((await res.json()) as { error: unknown }).error,
});

describe("GET /sessions/{id}/report", () => {
  test("an unknown Session is the protocol's session_not_found (−32006), 404", async () => {
    expect(await answer(await fetch(`${base}/sessions/${UNKNOWN}/report`))).toEqual({
      status: 404,
      error: {
        code: -32006,
        message: `session not found: ${UNKNOWN}`,
        data: {
          code: "session_not_found",
          message: `session not found: ${UNKNOWN}`,
          retryable: false,
          details: expect.anything(),
        },
      },
    });
  });

  test("another HTTP method is method_not_found (−32601), 405", async () => {
    const res = await fetch(`${base}/sessions/${UNKNOWN}/report`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(await answer(res)).toEqual({
      status: 405,
      error: {
        code: -32601,
        message: `POST /sessions/${UNKNOWN}/report: only GET`,
        data: {
          code: "method_not_found",
          message: `POST /sessions/${UNKNOWN}/report: only GET`,
          retryable: false,
          details: {},
        },
      },
    });
  });
});
