import { describe, expect, test } from "bun:test";
import { clipText } from "../../src/driver/clip-text.ts";

describe("clipText", () => {
  test("returns the text unchanged when it has at most max code points", () => {
    expect([clipText("abc", 3), clipText("😀😀😀", 3), clipText("", 0)]).toEqual(["abc", "😀😀😀", ""]);
  });

  test("keeps the start and ends with a marker counting the code points left out when the text is longer", () => {
    const clipped = clipText("x".repeat(100), 30);
    expect(clipped).toBe(`${"x".repeat(9)}…[truncated 91 chars]`);
    expect([...clipped].length).toBe(30);
  });

  test("never splits a surrogate pair when the text is outside the Basic Multilingual Plane", () => {
    const clipped = clipText("😀".repeat(100), 30);
    expect(clipped).toBe(`${"😀".repeat(9)}…[truncated 91 chars]`);
  });

  test("counts what an earlier clip left out when clipped text is clipped again", () => {
    const once = clipText("y".repeat(1_000), 100);
    expect(clipText(once, 30)).toBe(`${"y".repeat(8)}…[truncated 992 chars]`);
  });

  test("gives the marker alone when max leaves no room for text", () => {
    expect(clipText("z".repeat(1_000), 5)).toBe("…[truncated 1000 chars]");
  });
});
