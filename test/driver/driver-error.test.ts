import { describe, expect, test } from "bun:test";
import { DriverError, invalidArguments } from "../../src/driver/driver-error.ts";

const issue = (n: number) => ({ pointer: `/k${n}`, expected: "a number", received: "no value" });

describe("DriverError.withDetails", () => {
  test("writes action first and the other keys after it, keeping code, number and message, when details are added", () => {
    const err = DriverError.withDetails("unknown_action", { action: "swipe", availableActions: ["tap"] });
    expect([err.driverCode, err.error]).toEqual([
      "unknown_action",
      {
        code: -32000,
        message: "unknown action: swipe",
        data: {
          code: "unknown_action",
          message: "unknown action: swipe",
          retryable: false,
          details: { action: "swipe", availableActions: ["tap"] },
        },
      },
    ]);
    expect(Object.keys(err.error.data.details as object)).toEqual(["action", "availableActions"]);
  });
});

describe("invalidArguments", () => {
  test("spells out the first issue and lists at most five when more locations are refused", () => {
    const err = invalidArguments("tap", [1, 2, 3, 4, 5, 6].map(issue));
    expect([err.driverCode, err.error.message, err.error.data.details]).toEqual([
      "invalid_arguments",
      "invalid arguments for action tap",
      { action: "tap", ...issue(1), issues: [1, 2, 3, 4, 5].map(issue) },
    ]);
  });
});
