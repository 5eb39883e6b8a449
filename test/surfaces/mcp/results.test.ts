import { describe, expect, test } from "bun:test";
import { MAX_RESULT_BYTES, ToolError, failure, success } from "../../../src/surfaces/mcp/results.ts";

const image = (bytes: number) => ({
  data: new Uint8Array(bytes),
  mimeType: "image/jpeg" as const,
  width: 10,
  height: 10,
  scale: 1,
  sourceWidth: 10,
  sourceHeight: 10,
  quality: 75,
  encodeMs: 1,
});

describe("tool results", () => {
  test("an error carries its code, reason and retryability as text and structured content", () => {
    const r = failure(
      new ToolError("element_not_found", "no element matches", false, { selector: { identifier: "x" } }, [
        "closest elements:",
        "  @e2 Button",
      ]),
    );
    expect(r).toEqual({
      isError: true,
      content: [
        {
          type: "text",
          text: 'element_not_found: no element matches\nretryable: false\ndetails: {"selector":{"identifier":"x"}}\nclosest elements:\n  @e2 Button',
        },
      ],
      structuredContent: {
        error: {
          code: "element_not_found",
          message: "no element matches",
          retryable: false,
          details: { selector: { identifier: "x" } },
        },
      },
    });
  });

  test("a result that would pass 1 MB loses its image first, then text, and says so", () => {
    const r = success(["x".repeat(200_000)], { deviceId: "d" }, image(800_000));
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(r.content.map((c) => c.type)).toEqual(["text", "text"]);
    expect((r.content[1] as { text: string }).text).toMatch(/image was left out/);
    const huge = success(["y".repeat(1_500_000)], {});
    expect(JSON.stringify(huge).length).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect((huge.content[0] as { text: string }).text.endsWith("… cut to stay under 1 MB")).toBe(true);
  });

  test("a result under the limit is kept whole, image included", () => {
    const r = success(["ok"], { a: 1 }, image(300_000));
    expect(r.content.map((c) => c.type)).toEqual(["text", "image"]);
    expect((r.content[1] as { data: string }).data.length).toBe(400_000);
  });
});
