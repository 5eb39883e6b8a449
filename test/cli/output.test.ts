import { describe, expect, test } from "bun:test";
import { rowsText } from "../../src/cli/output.ts";

describe("rowsText", () => {
  const headers = ["ID", "DEVICE", "RESULT"];
  const rows = [
    ["s1", "mock-1", "fail: cart total wrong\ns2\tmock-2\tpass: forged"],
    ["s3", "mock\u001b[2J-2", "pass: ok\r\u2028\u0085done"],
  ];

  test("keeps each row on one line and each cell in its column when a verdict or a device name holds line breaks, tabs or escapes, on a pipe", () => {
    expect(rowsText(headers, rows, false)).toBe(
      "s1\tmock-1\tfail: cart total wrong\\ns2\\tmock-2\\tpass: forged\ns3\tmock\\u001b[2J-2\tpass: ok\\r\\u2028\\u0085done\n",
    );
  });

  test("keeps each row on one line when written as a table for a terminal", () => {
    const text = rowsText(headers, rows, true);
    expect(text.split("\n").filter(Boolean)).toHaveLength(3);
    expect(text).not.toContain("\u001b[2J");
    expect(text).toContain("fail: cart total wrong\\ns2\\tmock-2\\tpass: forged");
  });
});
