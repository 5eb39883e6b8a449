import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { handBuiltErrors, scanHandBuiltErrors } from "../../scripts/error-literals.ts";

const why = (file: string, text: string) => handBuiltErrors(file, text).map((f) => f.why);

describe("error objects come from the one error table", () => {
  test("src/ and drivers/ build none by hand", () => {
    expect(scanHandBuiltErrors(join(import.meta.dir, "../.."))).toEqual([]);
  });

  test("a JSON-RPC number or a data.code written out is caught", () => {
    expect(
      why(
        "src/surfaces/report/http.ts",
        `const e = { code: -32000, message: "m", data: { code: "method_not_found", message: "m", retryable: false } };`,
      ),
    ).toEqual(["JSON-RPC error number -32000 written out", "error code written out beside its message"]);
    expect(why("src/cli/output.ts", `printJson({ error: { code: "usage", message } });`)).toEqual([
      "error code written out beside its message",
    ]);
    expect(
      why(
        "src/cli/output.ts",
        `printJson({ error: { code: e.exitCode === 2 ? "usage" : "failure", message: e.message } });`,
      ),
    ).toEqual(["error code written out beside its message"]);
    expect(why("src/core/x.ts", "const cause = { code: `evidence_io_error`, retryable: true };")).toEqual([
      "error code written out beside its message",
    ]);
    expect(why("src/surfaces/mcp/calls.ts", `throw new ToolError("stale_reff", "the screen changed", false);`)).toEqual(
      ["tool error code stale_reff is not in the error table"],
    );
  });

  test("the table's helpers, computed codes and other numbers pass", () => {
    const ok = [
      `throw new RemoteError("mcp", errorObject("session_ended", { message: "ended" }));`,
      `const x = { code: e.code, message: e.message, retryable: e.retryable };`,
      `const check = { code: 404, message: "not found" };`,
      `const n = { code: "ENOENT" };`,
      `throw new ToolError("stale_ref", "the screen changed", false);`,
      `host.send({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message } });`,
    ];
    for (const text of ok) expect({ text, found: why("src/server/x.ts", text) }).toEqual({ text, found: [] });
    expect(why("src/protocol/errors.ts", `const e = { code: -32000, message: "m" };`)).toEqual([]);
  });
});
