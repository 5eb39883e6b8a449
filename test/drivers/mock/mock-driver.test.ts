import { describe, expect, test } from "bun:test";
import documents from "../../../src/protocol/generated/drivers/mock-actions.json" with { type: "json" };
import { MockDriver } from "../../../drivers/mock/mock-driver.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";

const CTX: CallContext = { signal: new AbortController().signal, deadline: null, log: silentLogger };
const VIEWPORT = { width: 1280, height: 720 };

async function connected(): Promise<MockDriver> {
  const driver = new MockDriver();
  await driver.start(() => {}, CTX);
  await driver.connect("mock-1");
  return driver;
}

async function refusal(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (err) {
    if (err instanceof DriverError) return { code: err.driverCode, details: err.error.data.details };
    throw err;
  }
  throw new Error("expected a DriverError");
}

const issue = (axis: "x" | "y", limit: number, received: string) => ({
  pointer: `/${axis}`,
  expected: `${axis} from 0 to ${limit}`,
  received,
});

describe("MockDriver.execute", () => {
  test("taps any point of the 1280×720 screen when the point is inside it", async () => {
    const driver = await connected();
    for (const [x, y] of [
      [0, 0],
      [1279, 719],
      [1279.5, 719.5],
    ] as const)
      expect(await driver.execute("mock-1", { name: "tap", arguments: { x, y } }, CTX)).toEqual({
        output: { accepted: true, x, y },
      });
  });

  test("refuses a tap with invalid_arguments naming the axis, the bound and the viewport when the point is off the screen", async () => {
    const driver = await connected();
    const tap = (x: number, y: number) => refusal(driver.execute("mock-1", { name: "tap", arguments: { x, y } }, CTX));
    expect([await tap(1280, 10), await tap(10, 720), await tap(5000, 900)]).toEqual([
      {
        code: "invalid_arguments",
        details: { action: "tap", ...issue("x", 1279, "1280"), issues: [issue("x", 1279, "1280")], viewport: VIEWPORT },
      },
      {
        code: "invalid_arguments",
        details: { action: "tap", ...issue("y", 719, "720"), issues: [issue("y", 719, "720")], viewport: VIEWPORT },
      },
      {
        code: "invalid_arguments",
        details: {
          action: "tap",
          ...issue("x", 1279, "5000"),
          issues: [issue("x", 1279, "5000"), issue("y", 719, "900")],
          viewport: VIEWPORT,
        },
      },
    ]);
  });

  test("refuses a negative coordinate through the advertised schema when it is below zero", async () => {
    const driver = await connected();
    const below = { pointer: "/x", expected: "a number of at least 0", received: "-1" };
    expect(await refusal(driver.execute("mock-1", { name: "tap", arguments: { x: -1, y: 1 } }, CTX))).toEqual({
      code: "invalid_arguments",
      details: { action: "tap", ...below, issues: [below] },
    });
  });

  test("advertises the reference Mock's tap schema, without an upper bound, when the viewport check runs at execution", async () => {
    const driver = await connected();
    const tap = (await driver.actions("mock-1")).find((a) => a.name === "tap");
    expect(tap?.inputSchema).toEqual(documents.actions.tap);
    expect(documents.actions.tap.properties).toEqual({
      x: { type: "number", minimum: 0 },
      y: { type: "number", minimum: 0 },
    });
  });
});
