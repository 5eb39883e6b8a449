import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { AcquireRequestSchema, likePattern, matchColumns, osMajor, parseOsRange } from "../../src/farm/constraints.ts";

describe("farm constraints", () => {
  test("OS ranges parse to inclusive major bounds, and anything else is refused", () => {
    expect(["14", ">=14", ">13", "<=15", "<16", "14-15", "14..15", " >= 14 "].map(parseOsRange)).toEqual([
      { min: 14, max: 14 },
      { min: 14, max: null },
      { min: 14, max: null },
      { min: null, max: 15 },
      { min: null, max: 15 },
      { min: 14, max: 15 },
      { min: 14, max: 15 },
      { min: 14, max: null },
    ]);
    expect(["", "fourteen", "15-14", "<0", "=14", "14.1", ">=14 <16"].map(parseOsRange)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  test("an OS version's major is its leading number", () => {
    expect(["14", "14.1.2", "17.0", " 9 (Pie)", "Baklava", null].map(osMajor)).toEqual([14, 14, 17, 9, null, null]);
  });

  test("model patterns: * is any run, and SQL's own wildcards are literal", () => {
    expect([likePattern("Pixel*"), likePattern("a_b%c"), likePattern("*8 Pro")]).toEqual([
      "Pixel%",
      "a\\_b\\%c",
      "%8 Pro",
    ]);
  });

  test("a request is checked whole: defaults filled, bad values named", () => {
    expect(v.parse(AcquireRequestSchema, { platform: "Android", os: ">=14" })).toEqual({
      platform: "Android",
      os: ">=14",
      priority: 0,
      waitMs: 0,
    });
    expect(matchColumns(v.parse(AcquireRequestSchema, { platform: "Android", os: ">=14", model: "Pixel*" }))).toEqual({
      platform: "android",
      model: "Pixel%",
      osMin: 14,
      osMax: null,
      host: null,
      capability: null,
      deviceId: null,
    });
    const issues = (x: unknown) =>
      v.safeParse(AcquireRequestSchema, x).issues?.map((i) => `${i.path?.map((p) => p.key).join(".")}: ${i.message}`);
    expect(issues({ os: "new" })).toEqual(["os: expected an OS range: 14, >=14, >13, <=15, <16 or 14-15"]);
    expect(issues({ waitMs: -1 })?.[0]).toStartWith("waitMs: ");
    expect(issues({ priority: 1000 })?.[0]).toStartWith("priority: ");
    expect(issues({ platform: "" })).toEqual(["platform: must not be empty"]);
    expect(issues({ colour: "red" })?.[0]).toStartWith("colour: ");
  });

  test("a NUL or another control character is refused in every text field when a request carries one", () => {
    const fields = ["platform", "model", "os", "host", "capability", "device", "holder"];
    const issues = (x: unknown) =>
      v.safeParse(AcquireRequestSchema, x).issues?.map((i) => `${i.path?.map((p) => p.key).join(".")}: ${i.message}`);
    expect(fields.map((f) => issues({ [f]: "1\u0000" })?.[0])).toEqual(
      fields.map((f) => `${f}: must not contain NUL or other control characters`),
    );
    expect(issues({ holder: "ci\u001b[2Jjob" })).toEqual(["holder: must not contain NUL or other control characters"]);
  });
});
