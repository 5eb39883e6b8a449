import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { SCROLL_ARGUMENTS } from "../../src/protocol/driver-arguments.ts";
import { U32Schema, UuidSchema, cpString, nonBlank, nullable } from "../../src/protocol/ids.ts";
import { describeSchema, issueDetails, pointerOf, renderReceived } from "../../src/protocol/issue-details.ts";
import { JsonFloat } from "../../src/protocol/json.ts";
import { ProtocolOfferSchema } from "../../src/protocol/types/handshake.ts";
import { TapElementArgumentsSchema } from "../../src/protocol/types/ui.ts";

/** The details of validating `input` against `schema`, which must refuse it. */
function details(schema: v.GenericSchema, input: unknown, redact = false, positional?: string[]) {
  const r = v.safeParse(schema, input);
  if (r.success) throw new Error("expected the schema to refuse the input");
  return issueDetails(schema, input, r.issues, { redact, ...(positional ? { positional } : {}) });
}

describe("describeSchema", () => {
  test("states type and bounds in words when the schema is a scalar with a pipe", () => {
    const keys = v.picklist([
      "enter",
      "tab",
      "escape",
      "delete",
      "space",
      "arrowUp",
      "arrowDown",
      "arrowLeft",
      "arrowRight",
      "home",
      "end",
      "pageUp",
      "pageDown",
    ]);
    expect(
      [
        U32Schema,
        v.pipe(v.number(), v.finite(), v.minValue(0)),
        v.pipe(v.number(), v.maxValue(5)),
        v.number(),
        cpString(1, 4096),
        cpString(0, 65_536),
        nonBlank(256),
        v.pipe(v.string(), v.minLength(1), v.maxLength(1024), v.regex(/^[a-z]+$/)),
        v.pipe(v.string(), v.length(1)),
        UuidSchema,
        v.boolean(),
        v.literal("2.0"),
        v.picklist(["portrait", "landscape"]),
        keys,
        v.unknown(),
      ].map((s) => describeSchema(s)),
    ).toEqual([
      "an integer from 0 to 4294967295",
      "a number of at least 0",
      "a number of at most 5",
      "a number",
      "a string of 1 to 4096 code points",
      "a string of at most 65536 code points",
      "a string of 1 to 256 code points matching \\S",
      "a string of 1 to 1024 characters matching ^[a-z]+$",
      "a string of exactly 1 character",
      "a UUID",
      "true or false",
      '"2.0"',
      "one of: portrait, landscape",
      "one of: enter, tab, escape, delete, space, arrowUp, arrowDown, arrowLeft, arrowRight, home, end, pageUp, …",
      "any JSON value",
    ]);
  });

  test("names keys, alternatives and items when the schema is an object, union, variant or array", () => {
    expect(
      [
        v.strictObject({ x: U32Schema, durationMs: v.optional(U32Schema) }),
        v.strictObject({}),
        v.strictObject({ only: v.optional(v.string()) }),
        nullable(v.string()),
        v.union([v.string(), U32Schema]),
        TapElementArgumentsSchema.entries.target,
        ProtocolOfferSchema.entries.ranges,
        v.pipe(v.array(v.string()), v.maxLength(3)),
        SCROLL_ARGUMENTS,
      ].map((s) => describeSchema(s)),
    ).toEqual([
      "an object with key x and optional key durationMs",
      "an empty object",
      "an object with optional key only",
      "a string or null",
      "a string or an integer from 0 to 4294967295",
      "an object whose kind is one of: selector, node",
      "an array of at least 1 item, each an object with keys major, minMinor, maxMinor",
      "an array of at most 3 items, each a string",
      "an object with keys deltaX, deltaY (not both deltaX = 0 and deltaY = 0)",
    ]);
  });
});

describe("renderReceived", () => {
  test("shows short values as JSON and cuts long ones at 40 code points when not redacted", () => {
    const long = "é".repeat(45);
    expect(
      [
        undefined,
        null,
        5,
        -0.5,
        true,
        "hi",
        long,
        [1, 2],
        { a: 1 },
        { a: "x".repeat(50) },
        new JsonFloat(5),
        new JsonFloat(2 ** 64),
      ].map((x) => renderReceived(x, false)),
    ).toEqual([
      "no value",
      "null",
      "5",
      "-0.5",
      "true",
      '"hi"',
      `"${"é".repeat(40)}…" (45 code points)`,
      "[1,2]",
      '{"a":1}',
      `{"a":"${"x".repeat(34)}…`,
      "5.0",
      "18446744073709552000",
    ]);
  });

  test("shows only type and size when redacted", () => {
    expect(
      [undefined, null, 1234, false, "s3cr3t", "😀", ["s3cr3t"], { s3cr3t: 1 }, new JsonFloat(1)].map((x) =>
        renderReceived(x, true),
      ),
    ).toEqual([
      "no value",
      "null",
      "a number",
      "a boolean",
      "a string of 6 code points",
      "a string of 1 code point",
      "an array of 1 item",
      "an object",
      "a number",
    ]);
  });
});

describe("issueDetails", () => {
  const Point = v.strictObject({ x: U32Schema, y: U32Schema, label: v.optional(cpString(1, 8)) });

  test("points at each refused field with what its schema wants and what came when fields are wrong or missing", () => {
    expect(details(Point, { x: -3, label: "" })).toEqual([
      { pointer: "/x", expected: "an integer from 0 to 4294967295", received: "-3" },
      { pointer: "/y", expected: "an integer from 0 to 4294967295", received: "no value" },
      { pointer: "/label", expected: "a string of 1 to 8 code points", received: '""' },
    ]);
  });

  test("reports an unknown key at its object, naming the allowed keys, when the object is strict", () => {
    expect(details(Point, { x: 1, y: 1, z: 1 })).toEqual([
      { pointer: "", expected: "only the keys x, y, label", received: 'unknown key "z"' },
    ]);
    expect(details(Point, { x: 1, y: 1, "s3cr3t key": 1 }, true)).toEqual([
      { pointer: "", expected: "only the keys x, y, label", received: "an unknown key" },
    ]);
  });

  test("follows variants and arrays into nested fields and names the discriminator's values when it is wrong", () => {
    const selector = { context: null, role: 5, name: null, value: null, identifier: null, text: null, css: null };
    expect(details(TapElementArgumentsSchema, { target: { kind: "selector", selector } })).toEqual([
      { pointer: "/target/selector/role", expected: "a string of 1 to 256 code points or null", received: "5" },
    ]);
    expect(details(TapElementArgumentsSchema, { target: { kind: "element" } })).toEqual([
      { pointer: "/target/kind", expected: "one of: selector, node", received: '"element"' },
    ]);
    expect(details(ProtocolOfferSchema, { ranges: [{ major: 1, minMinor: 0, maxMinor: "5" }] })).toEqual([
      { pointer: "/ranges/0/maxMinor", expected: "an integer from 0 to 65535", received: '"5"' },
    ]);
  });

  test("escapes ~ and / in pointers as RFC 6901 says when a key holds them", () => {
    expect(pointerOf(["a/b", "m~n", 0])).toBe("/a~1b/m~0n/0");
    expect(details(v.strictObject({ "a/b": v.number() }), { "a/b": "x" })).toEqual([
      { pointer: "/a~1b", expected: "a number", received: '"x"' },
    ]);
  });

  test("names positions instead of fields when the params were sent as an array", () => {
    expect(details(Point, { x: 1, y: "2" }, false, ["x", "y", "label"])).toEqual([
      { pointer: "/1", expected: "an integer from 0 to 4294967295", received: '"2"' },
    ]);
  });

  test("keeps one issue per pointer and at most five when a value breaks several rules or many fields are wrong", () => {
    const strict = v.pipe(v.string(), v.minLength(5), v.regex(/^[a-z]+$/));
    expect(details(v.strictObject({ s: strict }), { s: "A1" })).toEqual([
      { pointer: "/s", expected: "a string of at least 5 characters matching ^[a-z]+$", received: '"A1"' },
    ]);
    const wide = v.strictObject(Object.fromEntries("abcdefgh".split("").map((k) => [k, v.string()])));
    expect(details(wide, {}).map((d) => d.pointer)).toEqual(["/a", "/b", "/c", "/d", "/e"]);
  });

  test("never repeats a refused value from a check's default message when the action is protected", () => {
    const secret = v.strictObject({
      secret: v.pipe(
        v.string(),
        v.check((s) => !s.includes("%s")),
      ),
    });
    const found = details(secret, { secret: "pw%s-s3cr3t" }, true);
    expect(found).toEqual([{ pointer: "/secret", expected: "a string", received: "a string of 11 code points" }]);
  });

  test("falls back to the issue's own words when the schema is not one it can walk", () => {
    const issues = [{ path: [{ key: "when" }], expected: "ISO date", message: "bad s3cr3t" }];
    expect(issueDetails({ "~standard": {} }, { when: "s3cr3t" }, issues, { redact: true })).toEqual([
      { pointer: "/when", expected: "ISO date", received: "a string of 6 code points" },
    ]);
    expect(issueDetails({}, "x", [], { redact: false })).toEqual([
      { pointer: "", expected: "a valid value", received: '"x"' },
    ]);
  });

  test("reads a key named __proto__ as data, never the prototype, when the path holds one", () => {
    const input = JSON.parse('{"__proto__": 5}');
    const issues = [{ path: [{ key: "__proto__" }], expected: null }];
    expect(issueDetails({}, input, issues, { redact: false })).toEqual([
      { pointer: "/__proto__", expected: "a valid value", received: "5" },
    ]);
    expect(issueDetails({}, {}, issues, { redact: false })).toEqual([
      { pointer: "/__proto__", expected: "a valid value", received: "no value" },
    ]);
  });
});
