import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { ActionSpace } from "../../src/driver/action-space.ts";
import { DriverError } from "../../src/driver/driver-error.ts";

const CONTRACTS = [
  { name: "tap", description: "Tap", arguments: v.strictObject({ x: v.number(), y: v.number() }) },
  { name: "home", description: "Home", arguments: v.strictObject({}) },
  { name: "secret", description: "Secret", arguments: v.strictObject({ value: v.string() }), protection: "protected" },
] as const;
const DOCUMENTS = { actions: { tap: { type: "object", title: "tap" }, home: { type: "object", title: "home" }, secret: { type: "object", title: "secret" } } };
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
      { name: "secret", description: "Secret", inputSchema: { type: "object", title: "secret" }, protection: "protected" },
    ]);
  });

  test("refuses to build when a contract has no generated document", () => {
    expect(() => new ActionSpace(CONTRACTS, { actions: { tap: {} } })).toThrow("action home has no generated schema: run `bun run gen`");
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

  test("fails with invalid_arguments naming the action when the arguments are not an object or break the schema", () => {
    const calls: [string, unknown][] = [
      ["home", []],
      ["home", null],
      ["home", "x"],
      ["home", { extra: 1 }],
      ["tap", { x: 1 }],
      ["tap", { x: "1", y: 2 }],
      ["secret", { value: 5 }],
    ];
    expect(calls.map(([name, args]) => refusal(() => space.parse(name, args)))).toEqual(calls.map(([name]) => ({ code: "invalid_arguments", details: { action: name } })));
  });

  test("keeps the selected contracts in order with their documents when narrowed with only", () => {
    const narrowed = space.only((c) => c.name !== "home");
    expect([narrowed.definitions.map((d) => d.name), narrowed.classify("home"), refusal(() => narrowed.parse("home", {}))]).toEqual([
      ["tap", "secret"],
      undefined,
      { code: "unknown_action", details: { action: "home" } },
    ]);
  });
});
