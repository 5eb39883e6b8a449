import { describe, expect, test } from "bun:test";
import { pollUntil } from "./wait.ts";

describe("pollUntil", () => {
  test("a probe that answers from memory still lets the timer that changes its answer run", async () => {
    let fired = false;
    setTimeout(() => (fired = true), 20);
    expect(
      await pollUntil(
        "the timer",
        async () => fired,
        (f) => f,
        2_000,
      ),
    ).toBe(true);
  });
});
