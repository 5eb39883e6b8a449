import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { ActionSpace } from "../../src/driver/action-space.ts";
import { DriverError } from "../../src/driver/driver-error.ts";

const CONTRACTS = [
  { name: "tap", description: "Tap", arguments: v.strictObject({ x: v.number(), y: v.number() }) },
  { name: "home", description: "Home", arguments: v.strictObject({}) },
  { name: "secret", description: "Secret", arguments: v.strictObject({ value: v.string() }), protection: "protected" },
] as const;
const DOCUMENTS = {
  actions: {
    tap: { type: "object", title: "tap" },
    home: { type: "object", title: "home" },
    secret: { type: "object", title: "secret" },
  },
};
const space = new ActionSpace(CONTRACTS, DOCUMENTS);

function refusal(run: () => unknown): { code: string; details: unknown } | null {
  try {
    run();
    return null;
  } catch (err) {
    if (!(err instanceof DriverError)) throw err;
    return { code: err.driverCode, details: err.error.data.details };
  }
}

describe("ActionSpace", () => {
  test("advertises each contract with its generated document, writing protection only when protected", () => {
    expect(space.definitions).toEqual([
      { name: "tap", description: "Tap", inputSchema: { type: "object", title: "tap" } },
      { name: "home", description: "Home", inputSchema: { type: "object", title: "home" } },
      {
        name: "secret",
        description: "Secret",
        inputSchema: { type: "object", title: "secret" },
        protection: "protected",
      },
    ]);
  });

  test("refuses to build when a contract has no generated document", () => {
    expect(() => new ActionSpace(CONTRACTS, { actions: { tap: {} } })).toThrow(
      "action home has no generated schema: run `bun run gen`",
    );
  });

  test("classifies by protection when the name is known and as undefined when it is not", () => {
    expect(["tap", "secret", "nothing"].map((n) => space.classify(n))).toEqual(["standard", "protected", undefined]);
  });

  test("parses arguments into the typed call when the schema accepts them", () => {
    expect(space.parse("tap", { x: 1, y: 2.5 })).toEqual({ name: "tap", args: { x: 1, y: 2.5 } });
    expect(space.parse("home", {})).toEqual({ name: "home", args: {} });
  });

  test("fails with unknown_action naming the action when the name is not in the space", () => {
    expect(refusal(() => space.parse("swipe", {}))).toEqual({ code: "unknown_action", details: { action: "swipe" } });
  });

  test("fails with invalid_arguments saying where, what was expected and what came when the arguments are not an object or break the schema", () => {
    const refused = (action: string, ...issues: [string, string, string][]) => {
      const all = issues.map(([pointer, expected, received]) => ({ pointer, expected, received }));
      return { code: "invalid_arguments", details: { action, ...all[0], issues: all } };
    };
    const calls: [string, unknown, ReturnType<typeof refused>][] = [
      ["home", [], refused("home", ["", "an empty object", "[]"])],
      ["home", null, refused("home", ["", "an empty object", "null"])],
      ["home", "x", refused("home", ["", "an empty object", '"x"'])],
      ["home", { extra: 1 }, refused("home", ["", "no keys", 'unknown key "extra"'])],
      ["tap", { x: 1 }, refused("tap", ["/y", "a number", "no value"])],
      ["tap", { x: "1", y: 2 }, refused("tap", ["/x", "a number", '"1"'])],
      ["tap", { x: true, y: null }, refused("tap", ["/x", "a number", "true"], ["/y", "a number", "null"])],
      ["tap", { x: 1, y: 2, z: 3 }, refused("tap", ["", "only the keys x, y", 'unknown key "z"'])],
    ];
    expect(calls.map(([name, args]) => refusal(() => space.parse(name, args)))).toEqual(
      calls.map(([, , want]) => want),
    );
  });

  test("describes a protected action's refused values by type and length only when its arguments break the schema", () => {
    const secret = "hunter2-s3cr3t";
    const answers = [{ value: 5 }, { value: [secret] }, { value: { secret } }, secret, { value: "x", [secret]: 1 }].map(
      (args) => refusal(() => space.parse("secret", args)),
    );
    expect(answers).toEqual([
      {
        code: "invalid_arguments",
        details: {
          action: "secret",
          pointer: "/value",
          expected: "a string",
          received: "a number",
          issues: [{ pointer: "/value", expected: "a string", received: "a number" }],
        },
      },
      {
        code: "invalid_arguments",
        details: {
          action: "secret",
          pointer: "/value",
          expected: "a string",
          received: "an array of 1 item",
          issues: [{ pointer: "/value", expected: "a string", received: "an array of 1 item" }],
        },
      },
      {
        code: "invalid_arguments",
        details: {
          action: "secret",
          pointer: "/value",
          expected: "a string",
          received: "an object",
          issues: [{ pointer: "/value", expected: "a string", received: "an object" }],
        },
      },
      {
        code: "invalid_arguments",
        details: {
          action: "secret",
          pointer: "",
          expected: "an object with key value",
          received: "a string of 14 code points",
          issues: [{ pointer: "", expected: "an object with key value", received: "a string of 14 code points" }],
        },
      },
      {
        code: "invalid_arguments",
        details: {
          action: "secret",
          pointer: "",
          expected: "only the key value",
          received: "an unknown key",
          issues: [{ pointer: "", expected: "only the key value", received: "an unknown key" }],
        },
      },
    ]);
    expect(JSON.stringify(answers)).not.toContain("s3cr3t");
  });

  test("lists at most five issues, one per pointer, when many fields are refused", () => {
    const wide = new ActionSpace(
      [
        {
          name: "wide",
          description: "Wide",
          arguments: v.strictObject(Object.fromEntries("abcdefg".split("").map((k) => [k, v.number()]))),
        },
      ],
      {
        actions: { wide: { type: "object" } },
      },
    );
    const details = refusal(() => wide.parse("wide", {}))?.details as { issues: { pointer: string }[] };
    expect(details.issues.map((i) => i.pointer)).toEqual(["/a", "/b", "/c", "/d", "/e"]);
  });

  test("keeps the selected contracts in order with their documents when narrowed with only", () => {
    const narrowed = space.only((c) => c.name !== "home");
    expect([
      narrowed.definitions.map((d) => d.name),
      narrowed.classify("home"),
      refusal(() => narrowed.parse("home", {})),
    ]).toEqual([["tap", "secret"], undefined, { code: "unknown_action", details: { action: "home" } }]);
  });
});
