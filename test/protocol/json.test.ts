import { describe, expect, test } from "bun:test";
import { JsonFloat, parseJson, parseJsonSlow, unwrapJsonFloats } from "../../src/protocol/json.ts";
import type { JsonParseError, JsonParseOk } from "../../src/protocol/json.ts";

const ok = (value: unknown, duplicateTopLevelKey = false): JsonParseOk => ({ ok: true, value, duplicateTopLevelKey });
const err = (line: number, column: number, reason: string): JsonParseError => ({ ok: false, line, column, reason });
const parseAll = (texts: string[]) => texts.map((text) => parseJson(text));

function valueOf(text: string): unknown {
  const result = parseJson(text);
  if (!result.ok) throw new Error(`unexpected parse error: ${JSON.stringify(result)}`);
  return result.value;
}

/** Counts how often the native parser runs, to tell which path parseJson took. */
function countNativeParses(run: () => void): number {
  const original = JSON.parse;
  let calls = 0;
  JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    calls++;
    return original(text, reviver);
  }) as typeof JSON.parse;
  try {
    run();
  } finally {
    JSON.parse = original;
  }
  return calls;
}

function nestedArrays(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

describe("parseJson", () => {
  test("returns the value when input is valid JSON of any kind", () => {
    const texts = [
      "null",
      "true",
      "false",
      "0",
      '"x"',
      "[]",
      "{}",
      '[1,"a",null,true,false,{"k":[]}]',
      ' \t\r\n{"a" : [ 1 , 2 ] }\n ',
    ];
    expect(parseAll(texts)).toEqual([
      ok(null),
      ok(true),
      ok(false),
      ok(0),
      ok("x"),
      ok([]),
      ok({}),
      ok([1, "a", null, true, false, { k: [] }]),
      ok({ a: [1, 2] }),
    ]);
  });

  test("classifies numbers as integer or JsonFloat when given integer, fraction and exponent tokens", () => {
    const texts = [
      "1",
      "-0",
      "0",
      "1.0",
      "1e0",
      "1E2",
      "1E+2",
      "1.5",
      "-1",
      "9007199254740991",
      "9007199254740993",
      "-9007199254740993",
      "18446744073709551616",
      "123456789012345",
      "-0.0",
      "2.5e1",
      "1.25e1",
      "1e-2",
      "0.1",
      "1e308",
    ];
    expect(parseAll(texts)).toEqual([
      ok(1),
      ok(0),
      ok(0),
      ok(new JsonFloat(1)),
      ok(new JsonFloat(1)),
      ok(new JsonFloat(100)),
      ok(new JsonFloat(100)),
      ok(1.5),
      ok(-1),
      ok(9007199254740991),
      ok(new JsonFloat(9007199254740992)),
      ok(new JsonFloat(-9007199254740992)),
      ok(new JsonFloat(18446744073709551616)),
      ok(123456789012345),
      ok(new JsonFloat(-0)),
      ok(new JsonFloat(25)),
      ok(12.5),
      ok(0.01),
      ok(0.1),
      ok(new JsonFloat(1e308)),
    ]);
  });

  test("serialises JsonFloat as its number when passed to JSON.stringify", () => {
    expect(JSON.stringify(valueOf('{"a":1.0,"b":[1e2]}'))).toBe('{"a":1,"b":[100]}');
  });

  test("reports number out of range when a number overflows to infinity", () => {
    expect(parseAll(["1e400", "-1e400", "1" + "0".repeat(400), "[1e400]"])).toEqual([
      err(1, 5, "number out of range"),
      err(1, 6, "number out of range"),
      err(1, 401, "number out of range"),
      err(1, 6, "number out of range"),
    ]);
  });

  test("rejects malformed numbers when they break RFC 8259 grammar", () => {
    expect(
      parseAll(["01", "-01", "+1", ".5", "1.", "1.x", "-", "-x", "1e", "1e+", "1ex", "0x10", "-Infinity"]),
    ).toEqual([
      err(1, 2, "invalid number"),
      err(1, 3, "invalid number"),
      err(1, 1, "expected value"),
      err(1, 1, "expected value"),
      err(1, 2, "EOF while parsing a value"),
      err(1, 3, "invalid number"),
      err(1, 1, "EOF while parsing a value"),
      err(1, 2, "invalid number"),
      err(1, 2, "EOF while parsing a value"),
      err(1, 3, "EOF while parsing a value"),
      err(1, 3, "invalid number"),
      err(1, 2, "trailing characters"),
      err(1, 2, "invalid number"),
    ]);
  });

  test("decodes every escape when a string uses them", () => {
    expect(parseJson(String.raw`"\"\\\/\b\f\n\r\t\u0041\u00e9\u00C9\u4e2d"`)).toEqual(ok('"\\/\b\f\n\r\tAéÉ中'));
  });

  test("combines surrogate escapes when they form a pair", () => {
    expect(parseAll([String.raw`"\ud83d\ude00"`, String.raw`"x\uD83D\uDE00y"`])).toEqual([ok("😀"), ok("x😀y")]);
  });

  test("rejects the string when a surrogate escape is unpaired", () => {
    const texts = [
      String.raw`"\ud800"`,
      String.raw`"\udc00"`,
      String.raw`"\ud800\u0041"`,
      String.raw`"\ud800x"`,
      String.raw`"\ude00\ud83d"`,
    ];
    expect(parseAll(texts)).toEqual([
      err(1, 8, "lone surrogate in hex escape"),
      err(1, 7, "lone surrogate in hex escape"),
      err(1, 13, "lone surrogate in hex escape"),
      err(1, 8, "lone surrogate in hex escape"),
      err(1, 7, "lone surrogate in hex escape"),
    ]);
  });

  test("rejects the escape when it is unknown or truncated", () => {
    expect(parseAll([String.raw`"\x"`, String.raw`"\u12G4"`, String.raw`"\u12`, '"\\', '"\\ud800\\'])).toEqual([
      err(1, 3, "invalid escape"),
      err(1, 6, "invalid escape"),
      err(1, 5, "EOF while parsing a string"),
      err(1, 2, "EOF while parsing a string"),
      err(1, 8, "EOF while parsing a string"),
    ]);
  });

  test("rejects the string when it contains a raw control character", () => {
    const results = Array.from({ length: 0x20 }, (_, code) => parseJson(`"a${String.fromCharCode(code)}b"`));
    // A raw LF moves the reported position onto the next line, like serde_json.
    const expected = Array.from({ length: 0x20 }, (_, code) =>
      code === 10 ? err(2, 0, "control character in string") : err(1, 3, "control character in string"),
    );
    expect(results).toEqual(expected);
  });

  test("keeps raw characters when they are non-ASCII or DEL", () => {
    expect(parseAll(['"héllo 中文 😀"', '"\u007f\u2028\u00a0"'])).toEqual([
      ok("héllo 中文 😀"),
      ok("\u007f\u2028\u00a0"),
    ]);
  });

  test("keeps the last value and flags it when a top-level key repeats", () => {
    const result = parseJson('{"a":1,"b":2,"a":3}');
    expect(result).toEqual(ok({ a: 3, b: 2 }, true));
    expect(Object.keys(valueOf('{"a":1,"b":2,"a":3}') as object)).toEqual(["a", "b"]);
  });

  test("flags the duplicate when one spelling of the key uses an escape", () => {
    expect(parseAll([String.raw`{"\u0069d":1,"id":2}`, String.raw`{"id":1,"\u0069d":2}`])).toEqual([
      ok({ id: 2 }, true),
      ok({ id: 2 }, true),
    ]);
  });

  test("does not flag duplicates when they are nested or the key text appears elsewhere", () => {
    const texts = ['{"a":{"b":1,"b":2}}', '[{"a":1,"a":2}]', '{"a":1,"b":{"a":2}}', '{"a":"a"}', '{"a":["a"]}'];
    expect(parseAll(texts)).toEqual([
      ok({ a: { b: 2 } }),
      ok([{ a: 2 }]),
      ok({ a: 1, b: { a: 2 } }),
      ok({ a: "a" }),
      ok({ a: ["a"] }),
    ]);
  });

  test("creates an own __proto__ property when the key is __proto__", () => {
    for (const text of ['{"__proto__":{"polluted":true}}', String.raw`{"\u005f_proto__":{"polluted":true}}`]) {
      const value = valueOf(text) as Record<string, unknown>;
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value)).toEqual(["__proto__"]);
      expect(Object.getOwnPropertyDescriptor(value, "__proto__")).toEqual({
        value: { polluted: true },
        writable: true,
        enumerable: true,
        configurable: true,
      });
      expect(value["polluted"]).toBeUndefined();
    }
  });

  test("keeps the last __proto__ value when __proto__ repeats", () => {
    const result = parseJson('{"__proto__":1,"__proto__":2}');
    expect(result).toEqual(ok(JSON.parse('{"__proto__":2}'), true));
  });

  test("accepts nesting when it is exactly 128 levels deep", () => {
    let arrays: unknown = [];
    for (let i = 1; i < 128; i++) arrays = [arrays];
    let objects: unknown = 1;
    for (let i = 0; i < 128; i++) objects = { a: objects };
    expect(parseAll([nestedArrays(128), nestedObjects(128)])).toEqual([ok(arrays), ok(objects)]);
  });

  test("reports recursion limit exceeded when nesting is 129 levels deep", () => {
    expect(parseAll([nestedArrays(129), nestedObjects(129), "[".repeat(129)])).toEqual([
      err(1, 129, "recursion limit exceeded"),
      err(1, 641, "recursion limit exceeded"),
      err(1, 129, "recursion limit exceeded"),
    ]);
  });

  test("returns an error without throwing when nesting is 10,000 levels deep", () => {
    expect(parseAll(["[".repeat(10_000), nestedArrays(10_000), '{"a":'.repeat(10_000), nestedObjects(10_000)])).toEqual(
      [
        err(1, 129, "recursion limit exceeded"),
        err(1, 129, "recursion limit exceeded"),
        err(1, 641, "recursion limit exceeded"),
        err(1, 641, "recursion limit exceeded"),
      ],
    );
  });

  test("parses without stack overflow when maxDepth allows 100,000 levels", () => {
    const result = parseJson(nestedArrays(100_000), 100_000);
    let depth = 0;
    for (let node = result.ok ? result.value : null; Array.isArray(node); node = node[0]) depth++;
    expect(depth).toBe(100_000);
  });

  test("applies a custom maxDepth when one is given", () => {
    expect([parseJson("[[1]]", 1), parseJson("[[1]]", 2), parseJson("1", 0), parseJson("[]", 0)]).toEqual([
      err(1, 2, "recursion limit exceeded"),
      ok([[1]]),
      ok(1),
      err(1, 1, "recursion limit exceeded"),
    ]);
    expect(() => parseJson("1", Number.NaN)).toThrow(RangeError);
  });

  test("reports position and reason when input is malformed", () => {
    const texts = [
      '{"a":1} x',
      "[1,2",
      '{"a":1',
      '"abc',
      "",
      "  \n ",
      "\ufeff{}",
      "\u0000",
      "NaN",
      "Infinity",
      "[1] // c",
      "/* c */ 1",
      "[1,]",
      '{"a":1,}',
      "{1:2}",
      '{"a" 1}',
      '{"a":1 "b":2}',
      "[1 2]",
      "tru",
      "trux",
      "\f1",
      "\u00a01",
      "[",
      "{",
      '{"a":',
    ];
    expect(parseAll(texts)).toEqual([
      err(1, 9, "trailing characters"),
      err(1, 4, "EOF while parsing a list"),
      err(1, 6, "EOF while parsing an object"),
      err(1, 4, "EOF while parsing a string"),
      err(1, 0, "EOF while parsing a value"),
      err(2, 1, "EOF while parsing a value"),
      err(1, 1, "expected value"),
      err(1, 1, "expected value"),
      err(1, 1, "expected value"),
      err(1, 1, "expected value"),
      err(1, 5, "trailing characters"),
      err(1, 1, "expected value"),
      err(1, 4, "trailing comma"),
      err(1, 8, "trailing comma"),
      err(1, 2, "key must be a string"),
      err(1, 6, "expected `:`"),
      err(1, 8, "expected `,` or `}`"),
      err(1, 4, "expected `,` or `]`"),
      err(1, 3, "EOF while parsing a value"),
      err(1, 4, "expected ident"),
      err(1, 1, "expected value"),
      err(1, 1, "expected value"),
      err(1, 1, "EOF while parsing a value"),
      err(1, 1, "EOF while parsing an object"),
      err(1, 5, "EOF while parsing a value"),
    ]);
  });

  test("reports line and column of the offending character when input spans lines", () => {
    expect(parseAll(['{\n  "a": [1, 2,\n    ]\n}', "[\n  1,\n  2 3\n]", '{"a":1}\r\n\r\n  x'])).toEqual([
      err(3, 5, "trailing comma"),
      err(3, 5, "expected `,` or `]`"),
      err(3, 3, "trailing characters"),
    ]);
  });

  test("uses native JSON.parse when the line has no escapes, fractions or long digit runs", () => {
    const line = '{"jsonrpc":"2.0","id":12345,"method":"system.describe","params":{"id":"a"}}';
    let result: unknown;
    expect(countNativeParses(() => (result = parseJson(line)))).toBe(1);
    expect(result).toEqual(ok({ jsonrpc: "2.0", id: 12345, method: "system.describe", params: { id: "a" } }));
  });

  test("skips native JSON.parse when the input needs the strict parser", () => {
    const texts = [String.raw`{"a":"\n"}`, "[1.0]", "[1e2]", "[1234567890123456]", "[-0]", nestedArrays(129)];
    expect(countNativeParses(() => parseAll(texts))).toBe(0);
  });
});

describe("parseJsonSlow", () => {
  const table = [
    "null",
    "true",
    "false",
    "0",
    "-1",
    "42",
    "1.5",
    "-2.25e-3",
    "1.0",
    "1e2",
    "-0",
    "-0.0",
    "9007199254740991",
    "9007199254740993",
    "18446744073709551616",
    "123456789012345",
    '""',
    '"plain"',
    '"héllo 中文 😀"',
    String.raw`"\"\\\/\b\f\n\r\t"`,
    String.raw`"\u00e9\ud83d\ude00"`,
    "[]",
    "{}",
    "[1,[2,[3]],{}]",
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    '{"a":1,"a":2}',
    '{"a":{"b":1,"b":2}}',
    String.raw`{"\u0069d":1,"id":2}`,
    '{"__proto__":{"x":1}}',
    '{"__proto__":1,"__proto__":2}',
    '{"jsonrpc":"2.0","id":12345,"method":"system.describe","params":{}}',
    '{"jsonrpc":"2.0","id":"a-0","method":"x","params":[0,-1,10]}',
    " \t\r\n[ 1 , 2 ]\r\n ",
    '{"2":1,"1":2,"b":3,"a":4}',
    nestedArrays(128),
    nestedArrays(129),
    nestedObjects(128),
    nestedObjects(129),
    "",
    " ",
    "\ufeff{}",
    "[1,]",
    '{"a":1,}',
    "01",
    "+1",
    ".5",
    "1.",
    "-",
    "NaN",
    "1e400",
    "[1] x",
    '"\u0001"',
    String.raw`"\ud800"`,
    '{"a" 1}',
    "{1:2}",
    '"unterminated',
    "[1,2",
    "tru",
    "/* c */ 1",
    '{"a":1}{"b":2}',
    "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]",
  ];

  test("agrees with parseJson when given any input from the table", () => {
    expect(table.length).toBeGreaterThanOrEqual(40);
    for (const text of table) {
      expect({ text, result: parseJsonSlow(text) }).toStrictEqual({ text, result: parseJson(text) });
    }
  });

  test("agrees with native JSON.parse when input is eligible for the fast path", () => {
    const eligible = table.filter((text) => countNativeParses(() => parseJson(text)) === 1 && parseJson(text).ok);
    expect(eligible.length).toBeGreaterThanOrEqual(15);
    for (const text of eligible) {
      const slow = parseJsonSlow(text);
      expect({ text, value: slow.ok ? slow.value : slow }).toStrictEqual({ text, value: JSON.parse(text) });
    }
  });
});

describe("unwrapJsonFloats", () => {
  test("replaces every JsonFloat by its number when values are nested", () => {
    const parsed = valueOf('{"a":1.0,"b":[2e0,{"c":3.5,"d":4E1}],"e":"x","f":null,"g":true,"__proto__":5.0}');
    expect(unwrapJsonFloats(parsed)).toStrictEqual(
      JSON.parse('{"a":1,"b":[2,{"c":3.5,"d":40}],"e":"x","f":null,"g":true,"__proto__":5}'),
    );
  });

  test("leaves the input untouched when copying", () => {
    const parsed = valueOf('{"a":[1.0]}');
    const copy = unwrapJsonFloats(parsed);
    expect(copy).not.toBe(parsed);
    expect(parsed).toStrictEqual({ a: [new JsonFloat(1)] });
  });

  test("returns plain values unchanged when they contain no containers", () => {
    expect([new JsonFloat(3), 1.5, "s", null, true].map(unwrapJsonFloats)).toEqual([3, 1.5, "s", null, true]);
  });
});
