import { describe, expect, test } from "bun:test";
import { describeError } from "../../src/cli/error-text.ts";
import { errorObject } from "../../src/protocol/errors.ts";

const issue = (pointer: string, expected: string, received: string) => ({ pointer, expected, received });

describe("describeError", () => {
  test("says where, what was expected and what came when arguments are refused", () => {
    const first = issue("/x", "an integer from 0 to 4294967295", "-3");
    const second = issue("/y", "an integer from 0 to 4294967295", "no value");
    const error = errorObject("invalid_arguments", {
      arg: "tap",
      details: { action: "tap", ...first, issues: [first, second] },
    });
    expect(describeError(error)).toEqual([
      "invalid_arguments: invalid arguments for action tap",
      "  at /x: expected an integer from 0 to 4294967295, got -3",
      "  at /y: expected an integer from 0 to 4294967295, got no value",
    ]);
  });

  test("names the whole arguments or params when the pointer is empty", () => {
    const args = errorObject("invalid_arguments", {
      arg: "back",
      details: {
        action: "back",
        ...issue("", "no keys", 'unknown key "now"'),
        issues: [issue("", "no keys", 'unknown key "now"')],
      },
    });
    const params = errorObject("invalid_params", {
      arg: "device.select",
      details: { method: "device.select", ...issue("", "an object with key deviceId", "no value") },
    });
    expect([describeError(args), describeError(params)]).toEqual([
      [
        "invalid_arguments: invalid arguments for action back",
        '  at the arguments: expected no keys, got unknown key "now"',
      ],
      [
        "invalid_params: device.select params are invalid",
        "  at the params: expected an object with key deviceId, got no value",
      ],
    ]);
  });

  test("adds the viewport when the Mock refuses a point off its screen", () => {
    const off = issue("/x", "x from 0 to 1279", "1500");
    const error = errorObject("invalid_arguments", {
      arg: "tap",
      details: { action: "tap", ...off, issues: [off], viewport: { width: 1280, height: 720 } },
    });
    expect(describeError(error)).toEqual([
      "invalid_arguments: invalid arguments for action tap",
      "  at /x: expected x from 0 to 1279, got 1500",
      "  viewport: 1280×720",
    ]);
  });

  test("lists the device's actions and guesses the intended one when the action is unknown", () => {
    const details = (action: string) => ({ action, availableActions: ["tap", "inputText", "scroll", "back"] });
    expect([
      describeError(errorObject("unknown_action", { arg: "tpa", details: details("tpa") })),
      describeError(errorObject("unknown_action", { arg: "swipe", details: details("swipe") })),
    ]).toEqual([
      [
        "unknown_action: unknown action: tpa",
        "  available actions: tap, inputText, scroll, back",
        "  did you mean tap?",
      ],
      ["unknown_action: unknown action: swipe", "  available actions: tap, inputText, scroll, back"],
    ]);
  });

  test("lists the devices to choose from with -d when a device must be selected", () => {
    const details = (ids: string[]) => ({
      availableDeviceIds: ids,
      deviceCount: ids.length,
      requiredFeature: "device.routing.v1",
      requiredMethod: "device.select",
    });
    expect([
      describeError(
        errorObject("device_selection_required", { details: details(["mock-1", "android-adb:emulator-5554"]) }),
      ),
      describeError(errorObject("device_selection_required", { details: details([]) })),
    ]).toEqual([
      [
        "device_selection_required: select a device before calling device methods",
        "  available devices: mock-1, android-adb:emulator-5554 (choose one with -d)",
      ],
      ["device_selection_required: select a device before calling device methods", "  no devices are available"],
    ]);
  });

  test("says what to do, without naming a protocol method, when the connection lacks a feature or a step", () => {
    expect(
      [
        errorObject("feature_not_negotiated", {
          arg: "timeoutMs",
          details: { field: "timeoutMs", requiredFeature: "request.control.v1" },
        }),
        errorObject("method_not_found", {
          arg: "events.list",
          details: { method: "events.list", requiredFeature: "events.snapshot.v1" },
        }),
        errorObject("protected_action_not_negotiated", {
          details: { action: "inputSecret", requiredFeature: "action.protected.v1" },
        }),
        errorObject("feature_dependency_unsatisfied", {
          details: { feature: "device.semanticActions.v1", requiredFeature: "observation.uiSnapshot.v1" },
        }),
        errorObject("request_timeout_not_supported", {
          arg: "devices.list",
          details: {
            field: "timeoutMs",
            method: "devices.list",
            supportedMethods: ["device.observe", "device.execute"],
          },
        }),
        errorObject("session_required", { details: { requiredMethod: "session.start" } }),
      ].map(describeError),
    ).toEqual([
      [
        "feature_not_negotiated: timeoutMs requires negotiated request control",
        "  timeoutMs needs the protocol feature request.control.v1, which this command and the daemon did not agree on; use the daemon's own version of devicerail (devicerail daemon status)",
      ],
      [
        "method_not_found: method is not available: events.list",
        "  this request needs the protocol feature events.snapshot.v1, which this command and the daemon did not agree on; use the daemon's own version of devicerail (devicerail daemon status)",
      ],
      [
        "protected_action_not_negotiated: protected action requires an explicitly negotiated feature",
        "  the action inputSecret needs the protocol feature action.protected.v1, which this command and the daemon did not agree on; use the daemon's own version of devicerail (devicerail daemon status)",
      ],
      [
        "feature_dependency_unsatisfied: semantic Actions require negotiated UI snapshot evidence",
        "  the feature device.semanticActions.v1 needs the protocol feature observation.uiSnapshot.v1, which this command and the daemon did not agree on; use the daemon's own version of devicerail (devicerail daemon status)",
      ],
      [
        "request_timeout_not_supported: timeoutMs is not supported by devices.list",
        "  timeoutMs is accepted by: device.observe, device.execute",
      ],
      [
        "session_required: start a session before recording device operations",
        "  start a Session first: device commands start one themselves, so retry the command",
      ],
    ]);
  });

  test("spells out versions, positions, limits and platform codes when the details carry them", () => {
    const offer = (maxMinor: number) => ({ ranges: [{ major: 1, minMinor: 0, maxMinor }] });
    expect(
      [
        errorObject("protocol_version_incompatible", {
          details: {
            clientProtocol: offer(2),
            reason: "noOverlap",
            serverProtocol: { ranges: [{ major: 1, minMinor: 3, maxMinor: 5 }] },
          },
        }),
        errorObject("parse_error", { details: { line: 1, column: 7 } }),
        errorObject("platform_error", { details: { platformCode: "android_device_unauthorized" }, retryable: true }),
        errorObject("media_capture_rate_limited", { details: { retryAfterMs: 250, streamId: "s-1" } }),
        errorObject("event_cursor_ahead", {
          arg: "s-1 has no event after 9",
          details: { afterSequence: 9, lastSequence: 4, sessionId: "s-1" },
        }),
        errorObject("required_feature_unsupported", {
          details: { available: ["events.snapshot.v1"], unsupportedRequired: ["x.v1"] },
        }),
      ].map(describeError),
    ).toEqual([
      [
        "protocol_version_incompatible: client and server do not share a protocol version",
        "  client offers 1.0–1.2; server offers 1.3–1.5",
        "  reason: noOverlap",
      ],
      ["parse_error: request is not valid JSON", "  at line 1, column 7"],
      ["platform_error: platform operation failed", "  platform code: android_device_unauthorized"],
      [
        "media_capture_rate_limited: media capture rate exceeds the per-stream limit",
        "  retry after 250 ms",
        "  streamId: s-1",
      ],
      ["event_cursor_ahead: session s-1 has no event after 9", "  afterSequence 9 is past the last event, 4"],
      [
        "required_feature_unsupported: one or more required protocol features are unsupported",
        "  unsupported required features: x.v1",
        "  features this server offers: events.snapshot.v1",
      ],
    ]);
  });

  test("lists unknown keys briefly, skipping what the message already says, when the shape is new", () => {
    const error = {
      code: -32000,
      message: "device mock-1 is not connected",
      data: {
        code: "device_not_connected",
        message: "device mock-1 is not connected",
        retryable: true,
        details: { deviceId: "mock-1", hint: "x".repeat(100), nested: { a: [1] } },
      },
    };
    expect(describeError(error)).toEqual([
      "device_not_connected: device mock-1 is not connected",
      `  hint: ${"x".repeat(80)}…`,
      '  nested: {"a":[1]}',
    ]);
  });

  test("gives the first line alone when details are null, a scalar or malformed", () => {
    const base = errorObject("element_not_found");
    const odd = [null, 5, "text", [1, 2], { pointer: 3, availableActions: "tap", viewport: { width: "wide" } }];
    expect(odd.map((details) => describeError({ ...base, data: { ...base.data, details } }))).toEqual([
      ["element_not_found: element was not found"],
      ["element_not_found: element was not found"],
      ["element_not_found: element was not found"],
      ["element_not_found: element was not found"],
      [
        "element_not_found: element was not found",
        "  pointer: 3",
        "  availableActions: tap",
        '  viewport: {"width":"wide"}',
      ],
    ]);
  });
});
