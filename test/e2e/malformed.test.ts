import { describe, expect, test } from "bun:test";
import { spawnDaemon } from "../support/daemon.ts";

type Case = [name: string, line: string | Uint8Array, expected: { code: string; id: string | number | null }];

const deep = (n: number, open: string, close: string, inner = "1") => open.repeat(n) + inner + close.repeat(n);
const req = (rest: string) => `{"jsonrpc":"2.0",${rest}}`;

/**
 * Each line is hostile or broken in one way; each must get exactly one typed answer, and the
 * daemon must go on answering the next valid request.
 */
const CASES: Case[] = [
  ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":"sessions.li', { code: "parse_error", id: null }],
  ["truncated after a key", '{"jsonrpc"', { code: "parse_error", id: null }],
  ["trailing garbage", `${req('"id":1,"method":"sessions.list"')} x`, { code: "parse_error", id: null }],
  [
    "two objects on one line",
    `${req('"id":1,"method":"sessions.list"')}${req('"id":2,"method":"sessions.list"')}`,
    { code: "parse_error", id: null },
  ],
  ["plain text", "hello world", { code: "parse_error", id: null }],
  ["single quotes", "{'jsonrpc':'2.0'}", { code: "parse_error", id: null }],
  ["trailing comma", '{"jsonrpc":"2.0","id":1,"method":"sessions.list",}', { code: "parse_error", id: null }],
  ["comment", '{"jsonrpc":"2.0",/*x*/"id":1,"method":"sessions.list"}', { code: "parse_error", id: null }],
  ["NaN literal", req('"id":NaN,"method":"sessions.list"'), { code: "parse_error", id: null }],
  ["number overflowing to infinity", req('"id":1e400,"method":"sessions.list"'), { code: "parse_error", id: null }],
  ["leading zero", req('"id":01,"method":"sessions.list"'), { code: "parse_error", id: null }],
  [
    "raw NUL byte outside strings",
    `${req('"id":1,"method":"sessions.list"')}\u0000`,
    { code: "parse_error", id: null },
  ],
  ["raw NUL byte inside a string", req('"id":"a\u0000b","method":"sessions.list"'), { code: "parse_error", id: null }],
  ["raw tab inside a string", req('"id":"a\tb","method":"sessions.list"'), { code: "parse_error", id: null }],
  ["lone surrogate escape", req('"id":"\\ud800","method":"sessions.list"'), { code: "parse_error", id: null }],
  ["invalid escape", req('"id":"\\x41","method":"sessions.list"'), { code: "parse_error", id: null }],
  ["byte order mark", `\ufeff${req('"id":1,"method":"sessions.list"')}`, { code: "parse_error", id: null }],
  ["10,000-deep array", deep(10_000, "[", "]"), { code: "parse_error", id: null }],
  [
    "10,000-deep objects inside params",
    req(`"id":1,"method":"sessions.list","params":${deep(10_000, '{"a":', "}")}`),
    { code: "parse_error", id: null },
  ],
  ["top-level array (batch)", `[${req('"id":1,"method":"sessions.list"')}]`, { code: "invalid_request", id: null }],
  ["empty array", "[]", { code: "invalid_request", id: null }],
  ["top-level number", "42", { code: "invalid_request", id: null }],
  ["top-level string", '"sessions.list"', { code: "invalid_request", id: null }],
  ["top-level null", "null", { code: "invalid_request", id: null }],
  ["empty object", "{}", { code: "invalid_request", id: null }],
  ["method is a number", req('"id":1,"method":7'), { code: "invalid_request", id: null }],
  ["method missing", req('"id":1'), { code: "invalid_request", id: null }],
  [
    "huge numeric id",
    req('"id":123456789012345678901234567890,"method":"sessions.list"'),
    { code: "invalid_request", id: null },
  ],
  ["negative id", req('"id":-7,"method":"sessions.list"'), { code: "invalid_request", id: null }],
  ["fractional id", req('"id":0.5,"method":"sessions.list"'), { code: "invalid_request", id: null }],
  ["integral float id", req('"id":2.0,"method":"sessions.list"'), { code: "invalid_request", id: null }],
  ["exponent id", req('"id":2e0,"method":"sessions.list"'), { code: "invalid_request", id: null }],
  [
    "duplicate jsonrpc key",
    '{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"sessions.list"}',
    { code: "invalid_request", id: null },
  ],
  ["extra top-level key", req('"id":1,"method":"sessions.list","extra":true'), { code: "invalid_request", id: null }],
  [
    "timeoutMs as string",
    req('"id":1,"method":"device.observe","timeoutMs":"5"'),
    { code: "invalid_request", id: null },
  ],
  ["params as string", req('"id":1,"method":"sessions.list","params":"x"'), { code: "invalid_request", id: null }],
  [
    "params as a float-tagged number",
    req('"id":1,"method":"sessions.list","params":1.0'),
    { code: "invalid_request", id: null },
  ],
  [
    "a 1,000-deep value inside params (within a valid line)",
    req(`"id":9,"method":"request.cancel","params":{"requestId":${deep(1000, "[", "]")}}`),
    { code: "parse_error", id: null },
  ],
  [
    "a 100-deep value where a scalar is expected",
    req(`"id":9,"method":"request.cancel","params":{"requestId":${deep(100, "[", "]")}}`),
    { code: "invalid_params", id: 9 },
  ],
  [
    "float where an integer is expected in params",
    req('"id":10,"method":"events.list","params":{"limit":5.0}'),
    { code: "invalid_params", id: 10 },
  ],
  [
    "unicode string id with escapes",
    req('"id":"\\u00fc\\ud83d\\ude80","method":"nope"'),
    { code: "method_not_found", id: "ü🚀" },
  ],
  ["escaped NUL in a string id", req('"id":"\\u0000","method":"nope"'), { code: "method_not_found", id: "\u0000" }],
  ["invalid UTF-8 bytes", new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), { code: "parse_error", id: null }],
];

describe("malformed input on stdio", () => {
  test(`all ${CASES.length} kinds are answered with the right code while the process stays up`, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(25);
    await using d = spawnDaemon();
    await d.hello();
    const answered: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const [name, line, want] of CASES) {
      d.writeRaw(typeof line === "string" ? `${line}\n` : new Uint8Array([...line, 0x0a]));
      const r = await d.next();
      answered[name] = { code: r.error?.data.code ?? "result", id: r.id };
      expected[name] = want;
      // The daemon keeps answering valid requests after every bad line.
      expect(await d.call("sessions.list")).toEqual({ jsonrpc: "2.0", id: expect.any(Number), result: [] });
    }
    expect(answered).toEqual(expected);
    expect(d.proc.exitCode).toBeNull();
    expect(await d.close()).toBe(0);
  });

  test("the same kinds before hello are answered the same and hello still works afterwards", async () => {
    await using d = spawnDaemon();
    for (const [, line, want] of CASES.filter(([, , w]) => w.id === null)) {
      d.writeRaw(typeof line === "string" ? `${line}\n` : new Uint8Array([...line, 0x0a]));
      const r = await d.next();
      expect({ code: r.error?.data.code, id: r.id }).toEqual(want);
    }
    expect((await d.hello()).result.protocol.selected).toEqual({ major: 1, minor: 5 });
  });

  test("parse errors report line and column details", async () => {
    await using d = spawnDaemon();
    d.writeRaw('{"jsonrpc":"2.0","id":1,"method":x}\n');
    const r = await d.next();
    expect(r.error).toEqual({
      code: -32700,
      message: "request is not valid JSON",
      data: {
        code: "parse_error",
        message: "request is not valid JSON",
        retryable: false,
        details: { column: expect.any(Number), line: 1 },
      },
    });
    expect(r.error?.data.details.column).toBeGreaterThan(30);
  });
});
