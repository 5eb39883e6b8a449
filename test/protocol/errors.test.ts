import { describe, expect, test } from "bun:test";
import { ERRORS, NUMERIC_CODES, errorObject } from "../../src/protocol/errors.ts";

describe("the error table", () => {
  test("covers every numeric code of docs/protocol/envelope-and-errors.md including −32013…−32017", () => {
    expect(NUMERIC_CODES).toEqual([
      -32000, -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32010, -32011, -32012, -32013,
      -32014, -32015, -32016, -32017, -32600, -32601, -32602, -32603, -32700,
    ]);
  });

  test("keeps the reference's retryable defaults where a data.code has several numeric forms", () => {
    const pick = (name: keyof typeof ERRORS) => [ERRORS[name].numeric, ERRORS[name].code, ERRORS[name].retryable];
    expect(pick("no_registered_devices")).toEqual([-32011, "device_not_found", true]);
    expect(pick("device_not_found")).toEqual([-32011, "device_not_found", false]);
    expect(pick("pool_device_not_found")).toEqual([-32014, "device_not_found", false]);
    expect(pick("hello_invalid_params")).toEqual([-32602, "invalid_params", true]);
    expect(pick("invalid_params")).toEqual([-32602, "invalid_params", false]);
    expect(pick("media_capture_cancelled")).toEqual([-32007, "request_cancelled", true]);
    expect(pick("request_cancelled")).toEqual([-32007, "request_cancelled", false]);
    expect(pick("ws_handshake_required")).toEqual([-32601, "handshake_required", false]);
    expect(pick("handshake_required")).toEqual([-32001, "handshake_required", true]);
    expect(pick("session_busy")).toEqual([-32006, "session_busy", true]);
    expect(pick("stream_cursor_epoch_mismatch")).toEqual([-32013, "stream_cursor_epoch_mismatch", true]);
    expect(pick("device_in_use")).toEqual([-32014, "device_in_use", true]);
    expect(pick("media_capture_rate_limited")).toEqual([-32016, "media_capture_rate_limited", true]);
    expect(pick("ui_snapshot_read_failed")).toEqual([-32017, "ui_snapshot_read_failed", true]);
  });

  test("every code is snake_case and messages are non-empty", () => {
    for (const [name, e] of Object.entries(ERRORS)) {
      expect({ name, ok: /^[a-z][a-z0-9_]*$/.test(e.code) }).toEqual({ name, ok: true });
      const msg = typeof e.message === "function" ? e.message("x") : e.message;
      expect(msg.length).toBeGreaterThan(0);
    }
  });

  test("builds the envelope error with identical message and data.message", () => {
    expect(errorObject("request_timed_out", { arg: 50, details: { scope: "request", timeoutMs: 50 } })).toEqual({
      code: -32008,
      message: "Request timed out after 50 ms",
      data: {
        code: "request_timed_out",
        message: "Request timed out after 50 ms",
        retryable: true,
        details: { scope: "request", timeoutMs: 50 },
      },
    });
    expect(
      errorObject("platform_error", { retryable: true, details: { platformCode: "android_device_offline" } }).data
        .retryable,
    ).toBe(true);
  });
});
