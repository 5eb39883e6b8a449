/**
 * Records fixtures/protocol (the golden request/response pairs and their manifest): `bun run fixtures`.
 * The fixtures are data; this script is how they were made, so a change of the Mock or of a wire
 * shape is re-recorded rather than hand-edited. test/protocol/fixtures.test.ts replays them.
 *
// Three sources of fixtures:
//  1. hand-written pairs whose response is deterministic (replayed by the test as written);
//  2. the Mock transcript: one fresh daemon runs TRANSCRIPT in order and every step that names a
//     fixture becomes a pair whose response is the recorded answer. Its replay.before is the list of
//     earlier steps marked `state` (the ones that change what later answers say), and replay.bind
//     ties every daemon-generated UUID the fixture reuses (a Session id passed in params, an
//     Observation id, the Session id echoed in a result) to the before-step that produced it;
//  3. schema-only pairs (replay null + replayNote) for what the daemon cannot do yet.
//
// `--only DIR[,DIR…]` (a method name or `_envelope`) rewrites just those folders and their manifest
// entries and leaves every other file as it is. Each run's Session, Observation and event ids are
// random, so a whole recording rewrites nearly every file; a partial one instead carries over the
// ids the stored fixtures already bind (same before-step, same pointer), so the new pairs describe
// the same transcript Session as the old ones. rpc.discover's pair is the generated OpenRPC
// document: after `bun run gen` changes it, `bun run fixtures --only rpc.discover` refreshes it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MockApp } from "../drivers/mock/mock-app.ts";
import { renderScreen } from "../drivers/mock/mock-screen.ts";
import { METHOD_NAMES } from "../src/protocol/methods.ts";
import OPENRPC from "../src/protocol/generated/openrpc.json" with { type: "json" };
import { spawnDaemon } from "../test/support/daemon.ts";
import { ALL_FEATURES } from "../test/support/hello.ts";
import { methodSchemaId, schemaId } from "./gen-protocol.ts";
import { createHash } from "node:crypto";

const FIXTURES = join(import.meta.dir, "../fixtures");
const ROOT = join(FIXTURES, "protocol");
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const V4_G = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
const uuid = (s: string) => {
  if (!V4.test(s)) throw new Error(`not a v4 uuid: ${s}`);
  return s;
};

// ---------------------------------------------------------------- constants
/** What our daemon enables for a 1.5 stdio hello offering all ten. */
const ENABLED_15 = [
  "action.protected.v1",
  "device.routing.v1",
  "device.semanticActions.v1",
  "events.snapshot.v1",
  "events.stream.v1",
  "media.stream.v1",
  "observation.uiSnapshot.v1",
  "request.control.v1",
  "session.export.page.v1",
  "verdict.record.v1",
];

const CLIENT = { name: "devicerail-fixtures", version: "1.0.0" };
const SERVER = { name: "devicerail-daemon", version: "0.1.0" };
const STDIO = { kind: "stdio", framing: "ndjson" };
const WS = { kind: "webSocket", framing: "jsonMessage" };
const SERVER_OFFER = { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] };

const hello = (ranges: object[], required: string[] = [], optional: string[] = []) => ({
  client: CLIENT,
  protocol: { ranges },
  features: { required, optional },
});
const HELLO_ALL = hello([{ major: 1, minMinor: 0, maxMinor: 5 }], [], ALL_FEATURES);
const HELLO_10 = hello([{ major: 1, minMinor: 0, maxMinor: 0 }]);
const HELLO_12 = hello([{ major: 1, minMinor: 0, maxMinor: 2 }], [], ALL_FEATURES);
const HELLO_NO_SEMANTIC = hello(
  [{ major: 1, minMinor: 0, maxMinor: 5 }],
  [],
  ALL_FEATURES.filter((f) => f !== "device.semanticActions.v1"),
);

// Ids of the schema-only transcript (the WebSocket plane, a UI-tree driver) and the media stream ids.
const CONN_WS = uuid("0d2e4f61-7a8b-4c9d-9e0f-1a2b3c4d5e6f");
const S1 = uuid("7c9e6679-7425-40de-944b-e07fc1f90ae7");
const M1 = uuid("d9c8b7a6-9584-4736-a251-40f9e8d7c6b5");
const M_UNKNOWN = uuid("d9c8b7a6-9584-4736-a251-40f9e8d7c6b6");
const EPOCH = uuid("6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180");
const EPOCH_OLD = uuid("1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
const SUB = uuid("9f8e7d6c-5b4a-4392-a180-7f6e5d4c3b2a");
// Ids the client chooses (used verbatim by replayed requests).
const S_UNKNOWN = uuid("3f0c6b1e-8a2d-4c5b-9e7f-1a2b3c4d5e6f");
const O_UNKNOWN = uuid("5d6e7f80-9a1b-4c2d-be3f-4a5b6c7d8e9f");
const A1 = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d3");
const A_SEM = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d4");
const A_UNKNOWN = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d5");
const A_FIND = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d6");
const A_TAP_ELEMENT = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d7");
const A_WAIT = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d8");
const A_NOT_FOUND = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2d9");
const A_STALE = uuid("a0b1c2d3-e4f5-4a6b-9c7d-8e9fa0b1c2da");

// ---------------------------------------------------------------- evidence
const PNG_HEX =
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63089af3ea3f0005f402d88de408210000000049454e44ae426082";
const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const assetRef = (hex: string, mediaType: string) => ({
  id: `sha256:${hex}`,
  mediaType,
  uri: `devicerail://assets/sha256/${hex}`,
  sha256: hex,
});
const MOCK_PNG_SHA = sha(Buffer.from(PNG_HEX, "hex"));
if (MOCK_PNG_SHA !== "9387f2e81524bc51e5729791fb9b3483127b24276cb2adbcf0d7eb0d494944bd")
  throw new Error("mock png digest");
/** The Mock's first screen, light theme, nothing focused: what the transcript observes before any input. */
const LOGIN_SHOT = assetRef(sha(renderScreen(new MockApp().tree(), { dark: false, focusedNodeId: null })), "image/png");
const SHOT = assetRef(MOCK_PNG_SHA, "image/png");

const TAP_ARGS = { x: 640, y: 360 };
/** An ElementSelector with every member written, as the wire note of docs/protocol/devices-and-actions.md#selectors asks. */
const selector = (m: Record<string, unknown>) => ({
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
  ...m,
});

// ---------------------------------------------------------------- envelopes
type Id = string | number | null;
const request = (id: Id | undefined, method: string, params?: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  method,
  ...extra,
  ...(params === undefined ? {} : { params }),
});
const success = (id: Id, result: unknown) => ({ jsonrpc: "2.0", id, result });
const failure = (id: Id, code: number, dataCode: string, message: string, retryable: boolean, details: unknown) => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, data: { code: dataCode, message, retryable, details } },
});
const sessionRequired = (id: Id) =>
  failure(id, -32005, "session_required", "start a session before recording device operations", true, {
    requiredMethod: "session.start",
  });
const notAvailable = (id: Id, method: string, requiredFeature?: string) =>
  failure(
    id,
    -32601,
    "method_not_found",
    `method is not available: ${method}`,
    false,
    requiredFeature ? { method, requiredFeature } : { method },
  );
const noParams = (id: Id, method: string) =>
  failure(id, -32602, "invalid_params", `${method} does not accept params`, false, { method });
const helloResult = (minor: number, enabled: string[], connectionId: string, transport = STDIO) => ({
  connectionId,
  protocol: { selected: { major: 1, minor } },
  server: SERVER,
  transport,
  features: { enabled },
});
/** Replayed hello results: connectionId is compared by shape, so any v4 stands in for it. */
const CONN = uuid("5b1f0c2a-3d4e-4f60-8a71-92b3c4d5e6f7");

// ---------------------------------------------------------------- fixture table
interface Binding {
  step: number;
  pointer: string;
  recorded: string;
}
interface Replay {
  hello: object | null;
  before: object[];
  bind?: Record<string, Binding>;
}
interface Pair {
  dir: string; // method name or "_envelope"
  name: string;
  method: string | null;
  request: object | string; // string = raw line (.request.txt)
  response: object;
  requestId?: string;
  responseId?: string;
  replay: Replay | string; // string = replayNote
  note?: string;
  requestSchemaValid?: false;
}
const camel = (m: string) => m.replace(/\.([a-z])/g, (_, c: string) => c.toUpperCase());
const kebabMethod = (m: string) => m.replaceAll(".", "-");

const NEEDS_WS = "WebSocket plane: replayed over the daemon's real event WebSocket by test/e2e/event-stream.test.ts";
const NEEDS_OMIT =
  "needs a daemon started with screenshot policy omit (DEVICERAIL_SCREENSHOT_POLICY=omit), which never offers media.stream.v1 (docs/protocol/handshake.md#features)";

const pairs: Pair[] = [];
const add = (p: Pair) => pairs.push(p);
const replayAll = (before: object[] = []): Replay => ({ hello: HELLO_ALL, before });

// system.hello ------------------------------------------------------
add({
  dir: "system.hello",
  name: "v1-5-all-features",
  method: "system.hello",
  requestId: "handshake.system-hello.request.v1",
  responseId: "handshake.system-hello.response.v1",
  request: request("hello-1", "system.hello", HELLO_ALL),
  response: success("hello-1", helloResult(5, ENABLED_15, CONN)),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "v1-0-no-features",
  method: "system.hello",
  request: request("hello-1", "system.hello", {
    client: CLIENT,
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 0 }] },
  }),
  response: success("hello-1", helloResult(0, [], CONN)),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "v1-2",
  method: "system.hello",
  request: request(
    "hello-1",
    "system.hello",
    hello(
      [
        { major: 1, minMinor: 0, maxMinor: 2 },
        { major: 3, minMinor: 0, maxMinor: 0 },
      ],
      [],
      ALL_FEATURES,
    ),
  ),
  response: success(
    "hello-1",
    helloResult(2, ["action.protected.v1", "device.routing.v1", "events.snapshot.v1", "request.control.v1"], CONN),
  ),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "websocket",
  method: "system.hello",
  requestId: "stream.websocket-hello.request.v1",
  responseId: "stream.websocket-hello.response.v1",
  request: request(
    "ws-hello-1",
    "system.hello",
    hello([{ major: 1, minMinor: 5, maxMinor: 5 }], ["events.stream.v1"], []),
  ),
  response: success("ws-hello-1", helloResult(5, ["events.stream.v1"], CONN_WS, WS)),
  replay: NEEDS_WS,
});
const incompatible = (name: string, ranges: object[], reason: string) =>
  add({
    dir: "system.hello",
    name,
    method: "system.hello",
    request: request("hello-1", "system.hello", hello(ranges)),
    response: failure(
      "hello-1",
      -32003,
      "protocol_version_incompatible",
      "client and server do not share a protocol version",
      false,
      {
        clientProtocol: { ranges },
        reason,
        serverProtocol: SERVER_OFFER,
      },
    ),
    replay: { hello: null, before: [] },
  });
incompatible("client-too-old", [{ major: 0, minMinor: 1, maxMinor: 9 }], "clientTooOld");
incompatible("server-too-old", [{ major: 1, minMinor: 6, maxMinor: 9 }], "serverTooOld");
incompatible(
  "no-common-version",
  [
    { major: 0, minMinor: 0, maxMinor: 0 },
    { major: 2, minMinor: 0, maxMinor: 0 },
  ],
  "noCommonVersion",
);
add({
  dir: "system.hello",
  name: "feature-dependency-unsatisfied",
  method: "system.hello",
  request: request(
    "hello-1",
    "system.hello",
    hello([{ major: 1, minMinor: 0, maxMinor: 5 }], [], ["device.semanticActions.v1"]),
  ),
  response: failure(
    "hello-1",
    -32004,
    "feature_dependency_unsatisfied",
    "semantic Actions require negotiated UI snapshot evidence",
    false,
    {
      feature: "device.semanticActions.v1",
      requiredFeature: "observation.uiSnapshot.v1",
    },
  ),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "required-feature-unsupported",
  method: "system.hello",
  request: request(
    "hello-1",
    "system.hello",
    hello([{ major: 1, minMinor: 0, maxMinor: 2 }], ["media.stream.v1"], ["events.snapshot.v1"]),
  ),
  response: failure(
    "hello-1",
    -32004,
    "required_feature_unsupported",
    "one or more required protocol features are unsupported",
    true,
    {
      available: ["action.protected.v1", "device.routing.v1", "events.snapshot.v1", "request.control.v1"],
      unsupportedRequired: ["media.stream.v1"],
    },
  ),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "media-stream-unsupported",
  method: "system.hello",
  request: request(
    "hello-1",
    "system.hello",
    hello([{ major: 1, minMinor: 0, maxMinor: 5 }], ["media.stream.v1"], ["events.snapshot.v1"]),
  ),
  response: failure(
    "hello-1",
    -32004,
    "required_feature_unsupported",
    "one or more required protocol features are unsupported",
    true,
    {
      available: ENABLED_15.filter((f) => f !== "media.stream.v1"),
      unsupportedRequired: ["media.stream.v1"],
    },
  ),
  replay: NEEDS_OMIT,
});
add({
  dir: "system.hello",
  name: "empty-protocol-offer",
  method: "system.hello",
  request: request("hello-1", "system.hello", hello([])),
  response: failure(
    "hello-1",
    -32602,
    "invalid_params",
    "client protocol offer must contain at least one range",
    true,
    { reason: "emptyProtocolOffer" },
  ),
  replay: { hello: null, before: [] },
  requestSchemaValid: false,
});
add({
  dir: "system.hello",
  name: "inverted-range",
  method: "system.hello",
  request: request("hello-1", "system.hello", hello([{ major: 1, minMinor: 3, maxMinor: 2 }])),
  response: failure(
    "hello-1",
    -32602,
    "invalid_params",
    "client protocol offer contains an inverted minor range",
    true,
    {
      clientProtocol: { ranges: [{ major: 1, minMinor: 3, maxMinor: 2 }] },
      reason: "invalidProtocolRange",
    },
  ),
  replay: { hello: null, before: [] },
});
add({
  dir: "system.hello",
  name: "already-completed",
  method: "system.hello",
  request: request("hello-2", "system.hello", HELLO_ALL),
  response: failure(
    "hello-2",
    -32002,
    "handshake_already_completed",
    "this transport connection has already completed system.hello",
    false,
    null,
  ),
  replay: { hello: HELLO_ALL, before: [] },
});

// system.describe ----------------------------------------------------
add({
  dir: "system.describe",
  name: "default",
  method: "system.describe",
  requestId: "rpc.system-describe.request.v1",
  responseId: "rpc.system-describe.response.v1",
  request: request(1, "system.describe"),
  // The sole registered device (mock-1) is selected lazily by system.describe (docs/protocol/handshake.md#describing-the-connection).
  response: success(1, {
    connection: helloResult(5, ENABLED_15, CONN),
    client: CLIENT,
    deviceId: "mock-1",
    activeSessionId: null,
  }),
  replay: replayAll(),
});
add({
  dir: "system.describe",
  name: "params-not-accepted",
  method: "system.describe",
  request: request(1, "system.describe", { verbose: true }),
  response: noParams(1, "system.describe"),
  replay: replayAll(),
  requestSchemaValid: false,
});

// devices.list / device.select -------------------------------------------
add({
  dir: "devices.list",
  name: "routing-not-negotiated",
  method: "devices.list",
  request: request(1, "devices.list"),
  response: notAvailable(1, "devices.list", "device.routing.v1"),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "device.select",
  name: "not-found",
  method: "device.select",
  request: request(1, "device.select", { deviceId: "android-adb:emulator-5554" }),
  response: failure(1, -32011, "device_not_found", "device is not registered: android-adb:emulator-5554", false, {
    deviceId: "android-adb:emulator-5554",
  }),
  replay: replayAll(),
});

// device.connect / disconnect / capabilities ------------------------------
add({
  dir: "device.connect",
  name: "params-not-accepted",
  method: "device.connect",
  request: request(1, "device.connect", { deviceId: "mock-1" }),
  response: noParams(1, "device.connect"),
  replay: replayAll(),
  requestSchemaValid: false,
});
add({
  dir: "device.disconnect",
  name: "timeout-not-negotiated",
  method: "device.disconnect",
  request: request(1, "device.disconnect", undefined, { timeoutMs: 5000 }),
  response: failure(1, -32602, "feature_not_negotiated", "timeoutMs requires negotiated request control", false, {
    field: "timeoutMs",
    requiredFeature: "request.control.v1",
  }),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "device.capabilities",
  name: "params-not-accepted",
  method: "device.capabilities",
  request: request(1, "device.capabilities", ["verbose"]),
  response: noParams(1, "device.capabilities"),
  replay: replayAll(),
  requestSchemaValid: false,
});

// device.observe -------------------------------------------------------------
add({
  dir: "device.observe",
  name: "session-required",
  method: "device.observe",
  request: request(1, "device.observe"),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "device.observe",
  name: "not-connected",
  method: "device.observe",
  responseId: "rpc.failure.v1",
  request: request(31, "device.observe"),
  response: failure(31, -32000, "device_not_connected", "device mock-1 is not connected", true, { deviceId: "mock-1" }),
  replay: replayAll([request("session-start-1", "session.start")]),
  note: "the failure is also appended to the Session as an error event with the same ErrorInfo (docs/protocol/devices-and-actions.md#observing)",
});

// device.execute ---------------------------------------------------------------
add({
  dir: "device.execute",
  name: "semantic-not-negotiated",
  method: "device.execute",
  request: request(1, "device.execute", {
    id: A_SEM,
    name: "tapElement",
    arguments: {
      target: {
        kind: "selector",
        selector: {
          context: null,
          role: "button",
          name: "Sign in",
          value: null,
          identifier: null,
          text: null,
          css: null,
        },
      },
    },
  }),
  response: failure(
    1,
    -32601,
    "semantic_action_not_negotiated",
    "semantic action requires an explicitly negotiated feature",
    false,
    {
      action: "tapElement",
      requiredFeature: "device.semanticActions.v1",
    },
  ),
  replay: { hello: HELLO_NO_SEMANTIC, before: [] },
});
add({
  dir: "device.execute",
  name: "action-timeout-not-negotiated",
  method: "device.execute",
  request: request(1, "device.execute", { id: A1, name: "tap", arguments: TAP_ARGS, actionTimeoutMs: 2000 }),
  response: failure(1, -32602, "feature_not_negotiated", "actionTimeoutMs requires negotiated request control", false, {
    field: "actionTimeoutMs",
    requiredFeature: "request.control.v1",
  }),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "device.execute",
  name: "session-required",
  method: "device.execute",
  request: request(1, "device.execute", { id: A1, name: "tap", arguments: TAP_ARGS }),
  response: sessionRequired(1),
  replay: replayAll([request(1, "device.connect")]),
});

// media.stream.* (recorded in the Mock transcript; here: not negotiated at 1.2, the feature needs 1.4) ----
for (const [method, params, extra] of [
  ["media.stream.start", { streamId: M1, kind: "screenshot" }, {}],
  ["media.stream.capture", { streamId: M1, frameIndex: 1 }, { timeoutMs: 5000 }],
  ["media.stream.end", { streamId: M1 }, {}],
] as const)
  add({
    dir: method,
    name: "not-available",
    method,
    request: request(1, method, params, extra),
    response: notAvailable(1, method, "media.stream.v1"),
    replay: { hello: HELLO_12, before: [] },
  });

// request.cancel --------------------------------------------------------------------
add({
  dir: "request.cancel",
  name: "default",
  method: "request.cancel",
  requestId: "rpc.request-cancel.request.v1",
  responseId: "rpc.request-cancel.response.v1",
  request: request("cancel-1", "request.cancel", { requestId: 42 }),
  response: success("cancel-1", { requestId: 42, status: "notFound" }),
  replay: replayAll(),
});
add({
  dir: "request.cancel",
  name: "string-id",
  method: "request.cancel",
  request: request("cancel-2", "request.cancel", { requestId: "42" }),
  response: success("cancel-2", { requestId: "42", status: "notFound" }),
  replay: replayAll(),
});
/** What invalid_params says to fix (docs/protocol/errors.md): where, what was expected, what came. */
const REQUEST_ID_ISSUE = {
  pointer: "/requestId",
  expected: "a string or an integer from 0 to 9007199254740991",
  received: "null",
};
add({
  dir: "request.cancel",
  name: "invalid-params",
  method: "request.cancel",
  request: request("cancel-1", "request.cancel", { requestId: null }),
  response: failure("cancel-1", -32602, "invalid_params", "request.cancel params are invalid", false, {
    method: "request.cancel",
    ...REQUEST_ID_ISSUE,
    issues: [REQUEST_ID_ISSUE],
  }),
  replay: replayAll(),
  requestSchemaValid: false,
});

// session.* / sessions.list / session.export (without a Session) -------------------------
add({
  dir: "session.current",
  name: "session-required",
  method: "session.current",
  request: request(1, "session.current"),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "session.end",
  name: "session-required",
  method: "session.end",
  request: request(1, "session.end", { outcome: "completed" }),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "sessions.list",
  name: "default",
  method: "sessions.list",
  requestId: "rpc.sessions-list.request.v1",
  responseId: "rpc.sessions-list.response.v1",
  request: request(1, "sessions.list"),
  response: success(1, []),
  replay: replayAll(),
});
add({
  dir: "sessions.list",
  name: "snapshot-not-negotiated",
  method: "sessions.list",
  request: request(1, "sessions.list"),
  response: notAvailable(1, "sessions.list", "events.snapshot.v1"),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "session.export",
  name: "after-sequence-without-limit",
  method: "session.export",
  request: request(1, "session.export", { sessionId: S_UNKNOWN, afterSequence: 4 }),
  response: failure(1, -32602, "invalid_params", "session.export afterSequence requires limit", false, {
    method: "session.export",
  }),
  replay: replayAll(),
});
add({
  dir: "session.export",
  name: "page-not-negotiated",
  method: "session.export",
  request: request(1, "session.export", { sessionId: S_UNKNOWN, limit: 4 }),
  response: notAvailable(1, "session.export", "session.export.page.v1"),
  replay: {
    hello: hello([{ major: 1, minMinor: 0, maxMinor: 5 }], [], ["events.snapshot.v1", "request.control.v1"]),
    before: [],
  },
});
add({
  dir: "events.list",
  name: "session-required",
  method: "events.list",
  request: request(1, "events.list", { limit: 100 }),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "events.list",
  name: "session-not-found",
  method: "events.list",
  request: request(1, "events.list", { sessionId: S_UNKNOWN }),
  response: failure(1, -32006, "session_not_found", `session not found: ${S_UNKNOWN}`, false, { sessionId: S_UNKNOWN }),
  replay: replayAll(),
});
add({
  dir: "events.clear",
  name: "session-required",
  method: "events.clear",
  request: request(1, "events.clear"),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "events.clear",
  name: "session-not-found",
  method: "events.clear",
  request: request(1, "events.clear", { sessionId: S_UNKNOWN }),
  response: failure(1, -32006, "session_not_found", `session not found: ${S_UNKNOWN}`, false, { sessionId: S_UNKNOWN }),
  replay: replayAll(),
  note: "deliberately not the reference's idempotent {deleted:true} for ids that never existed (docs/protocol/sessions-and-events.md#deleting-a-session)",
});
add({
  dir: "events.clear",
  name: "not-permitted-on-websocket",
  method: "events.clear",
  request: request(1, "events.clear", { sessionId: S1 }),
  response: failure(
    1,
    -32015,
    "method_not_permitted_on_transport",
    "events.clear is privileged and not permitted on this transport: use stdio, the Unix socket or TCP NDJSON",
    false,
    {
      method: "events.clear",
      transport: "webSocket",
      privileged: "always",
      allowedTransports: ["stdio", "tcp", "unix"],
    },
  ),
  replay:
    "JSON-RPC over WebSocket (GET /rpc), where privileged methods are refused: replayed over the daemon's real WebSocket by test/e2e/privileged.test.ts; over stdio the same request is session-not-found",
  note: "privileged methods are refused on transports a web page can reach (docs/protocol/transport-and-framing.md#privileged-methods)",
});

// events.stream.* / events.subscribe --------------------------------------------------------
add({
  dir: "events.stream.open",
  name: "invalid-origin",
  method: "events.stream.open",
  request: request(33, "events.stream.open", {
    sessionId: S1,
    originPolicy: { kind: "exact", origin: "http://localhost:8080" },
  }),
  response: failure(33, -32602, "invalid_stream_origin", "event stream Origin policy is invalid", false, null),
  replay: replayAll(),
});
add({
  dir: "events.stream.open",
  name: "stream-not-negotiated",
  method: "events.stream.open",
  request: request(1, "events.stream.open", { sessionId: S1, originPolicy: { kind: "absent" } }),
  response: notAvailable(1, "events.stream.open", "events.stream.v1"),
  replay: { hello: HELLO_12, before: [] },
});
add({
  dir: "events.subscribe",
  name: "default",
  method: "events.subscribe",
  requestId: "stream.events-subscribe.request.v1",
  responseId: "stream.events-subscribe.response.v1",
  request: request("ws-subscribe-1", "events.subscribe", { sessionId: S1 }),
  response: success("ws-subscribe-1", {
    subscriptionId: SUB,
    sessionId: S1,
    replayThrough: { streamEpoch: EPOCH, sessionId: S1, sequence: 4 },
    sessionState: "active",
  }),
  replay: NEEDS_WS,
});
add({
  dir: "events.subscribe",
  name: "cursor-epoch-mismatch",
  method: "events.subscribe",
  request: request("ws-subscribe-1", "events.subscribe", {
    sessionId: S1,
    afterCursor: { streamEpoch: EPOCH_OLD, sessionId: S1, sequence: 3 },
  }),
  response: failure(
    "ws-subscribe-1",
    -32013,
    "stream_cursor_epoch_mismatch",
    "event cursor belongs to another daemon lifetime",
    true,
    null,
  ),
  replay: `${NEEDS_WS}; the socket is then closed with 1008 "subscribe rejected"`,
});
add({
  dir: "events.subscribe",
  name: "control-plane",
  method: "events.subscribe",
  request: request(1, "events.subscribe", { sessionId: S1 }),
  response: notAvailable(1, "events.subscribe"),
  replay: replayAll(),
});

// ui.snapshot.get / verdict.record (without the transcript) ------------------------------------
add({
  dir: "ui.snapshot.get",
  name: "session-required",
  method: "ui.snapshot.get",
  request: request(1, "ui.snapshot.get", { observationId: O_UNKNOWN }),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "verdict.record",
  name: "session-required",
  method: "verdict.record",
  request: request(1, "verdict.record", {
    verdict: { status: "pass", summary: "home screen shown", evidence: [SHOT] },
  }),
  response: sessionRequired(1),
  replay: replayAll(),
});
add({
  dir: "verdict.record",
  name: "evidence-not-reachable",
  method: "verdict.record",
  request: request(1, "verdict.record", {
    verdict: { status: "pass", summary: "home screen shown", evidence: [SHOT] },
  }),
  response: failure(
    1,
    -32602,
    "evidence_not_reachable",
    "verdict evidence must already be reachable from the active Session log",
    false,
    {
      digest: MOCK_PNG_SHA,
    },
  ),
  replay: replayAll([request("session-start-1", "session.start")]),
});

// devicerail.sessions.list / rpc.discover (the extensions) ------------------------------------
add({
  dir: "devicerail.sessions.list",
  name: "default",
  method: "devicerail.sessions.list",
  request: request(1, "devicerail.sessions.list", { limit: 20 }),
  response: success(1, { sessions: [] }),
  replay: replayAll(),
});
add({
  dir: "devicerail.sessions.list",
  name: "snapshot-not-negotiated",
  method: "devicerail.sessions.list",
  request: request(1, "devicerail.sessions.list"),
  response: notAvailable(1, "devicerail.sessions.list", "events.snapshot.v1"),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "rpc.discover",
  name: "default",
  method: "rpc.discover",
  request: request(1, "rpc.discover"),
  response: success(1, OPENRPC),
  replay: replayAll(),
  note: "the generated src/protocol/generated/openrpc.json, embedded in the daemon",
});
add({
  dir: "rpc.discover",
  name: "handshake-required",
  method: "rpc.discover",
  request: request(1, "rpc.discover"),
  response: handshakeRequired(1),
  replay: { hello: null, before: [] },
  note: "discovery is a method like the others: it needs the hello first",
});

// _envelope -------------------------------------------------------------------------------------------
/** What any method but system.hello gets before the handshake. */
function handshakeRequired(id: number) {
  return failure(id, -32001, "handshake_required", "system.hello must succeed before any other method", true, {
    requiredMethod: "system.hello",
  });
}
const parseError = (column: number) =>
  failure(null, -32700, "parse_error", "request is not valid JSON", false, { column, line: 1 });
const invalidRequest = () =>
  failure(null, -32600, "invalid_request", "request does not match the DeviceRail JSON-RPC subset", false, null);
add({
  dir: "_envelope",
  name: "parse-error-truncated",
  method: null,
  request: '{"jsonrpc":"2.0","id":1,"method":"system.describe"',
  response: parseError(50),
  replay: { hello: null, before: [] },
});
add({
  dir: "_envelope",
  name: "parse-error-trailing",
  method: null,
  request: '{"jsonrpc":"2.0","id":1,"method":"system.describe"}}',
  response: parseError(52),
  replay: replayAll(),
});
add({
  dir: "_envelope",
  name: "invalid-request-missing-id",
  method: "system.describe",
  request: request(undefined, "system.describe"),
  response: invalidRequest(),
  replay: { hello: null, before: [] },
  requestSchemaValid: false,
});
add({
  dir: "_envelope",
  name: "invalid-request-unknown-key",
  method: "device.connect",
  request: request(7, "device.connect", undefined, { deadlineMs: 5000 }),
  response: invalidRequest(),
  replay: replayAll(),
  requestSchemaValid: false,
});
add({
  dir: "_envelope",
  name: "invalid-request-null-params",
  method: "session.end",
  request: request(8, "session.end", null),
  response: invalidRequest(),
  replay: replayAll(),
  requestSchemaValid: false,
});
add({
  dir: "_envelope",
  name: "handshake-required",
  method: "system.describe",
  request: request(1, "system.describe"),
  response: handshakeRequired(1),
  replay: { hello: null, before: [] },
});
add({
  dir: "_envelope",
  name: "method-not-found",
  method: "system.shutdown",
  request: request(1, "system.shutdown"),
  response: notAvailable(1, "system.shutdown"),
  replay: replayAll(),
});
add({
  dir: "_envelope",
  name: "request-timeout-not-supported",
  method: "session.current",
  request: request(1, "session.current", undefined, { timeoutMs: 1000 }),
  response: failure(
    1,
    -32602,
    "request_timeout_not_supported",
    "timeoutMs is not supported by session.current",
    false,
    {
      field: "timeoutMs",
      method: "session.current",
      supportedMethods: [
        "device.connect",
        "device.disconnect",
        "device.capabilities",
        "device.observe",
        "device.execute",
        "media.stream.capture",
      ],
    },
  ),
  replay: replayAll(),
});
add({
  dir: "_envelope",
  name: "feature-not-negotiated",
  method: "device.connect",
  request: request(1, "device.connect", undefined, { timeoutMs: 1000 }),
  response: failure(1, -32602, "feature_not_negotiated", "timeoutMs requires negotiated request control", false, {
    field: "timeoutMs",
    requiredFeature: "request.control.v1",
  }),
  replay: { hello: HELLO_10, before: [] },
});
add({
  dir: "_envelope",
  name: "hello-timeout",
  method: "system.hello",
  request: request("hello-1", "system.hello", HELLO_ALL, { timeoutMs: 1000 }),
  response: failure(
    "hello-1",
    -32602,
    "feature_not_negotiated",
    "timeoutMs requires negotiated request control",
    false,
    {
      field: "timeoutMs",
      requiredFeature: "request.control.v1",
    },
  ),
  replay: { hello: null, before: [] },
});
add({
  dir: "_envelope",
  name: "hello-timeout-when-ready",
  method: "system.hello",
  request: request("hello-2", "system.hello", HELLO_ALL, { timeoutMs: 1000 }),
  response: failure(
    "hello-2",
    -32602,
    "feature_not_negotiated",
    "timeoutMs requires negotiated request control",
    false,
    {
      field: "timeoutMs",
      requiredFeature: "request.control.v1",
    },
  ),
  replay: replayAll([request(1, "system.describe")]),
});

// ---------------------------------------------------------------- the Mock transcript (recorded)
/**
 * One connection on a fresh daemon (hello offering everything), in this order. `state: true` marks
 * the steps that change what later steps answer (selection, connection, Session, event log, frame
 * counter); only those are replayed before a later fixture.
 */
interface Step {
  req: object;
  state?: true;
  fixture?: {
    dir: string;
    name: string;
    requestId?: string;
    responseId?: string;
    requestSchemaValid?: false;
    note?: string;
  };
}
const VERDICT = {
  status: "pass",
  summary: "Tapped the centre of the screen; the after-Observation shows the expected screen.",
  evidence: [LOGIN_SHOT],
};
// Session and Observation ids are random: `$session` / `$observation` stand for the recorded ones.
const TRANSCRIPT: Step[] = [
  {
    req: request(1, "devices.list"),
    fixture: {
      dir: "devices.list",
      name: "default",
      requestId: "rpc.devices-list.request.v1",
      responseId: "rpc.devices-list.response.v1",
    },
  },
  {
    req: request(2, "device.select", { deviceId: "mock-1" }),
    state: true,
    fixture: {
      dir: "device.select",
      name: "default",
      requestId: "rpc.device-select.request.v1",
      responseId: "rpc.device-select.response.v1",
    },
  },
  {
    req: request(3, "device.connect"),
    state: true,
    fixture: {
      dir: "device.connect",
      name: "default",
      requestId: "rpc.device-connect.request.v1",
      responseId: "rpc.device-connect.response.v1",
    },
  },
  {
    req: request(4, "device.capabilities"),
    fixture: {
      dir: "device.capabilities",
      name: "default",
      requestId: "rpc.device-capabilities.request.v1",
      responseId: "rpc.device-capabilities.response.v1",
    },
  },
  { req: request(5, "devices.list"), fixture: { dir: "devices.list", name: "connected" } },
  {
    req: request("session-start-1", "session.start"),
    state: true,
    fixture: {
      dir: "session.start",
      name: "default",
      requestId: "rpc.session-start.request.v1",
      responseId: "rpc.session-start.response.v1",
    },
  },
  { req: request(20, "session.start"), fixture: { dir: "session.start", name: "already-active" } },
  {
    req: request(21, "device.select", { deviceId: "mock-1" }),
    fixture: { dir: "device.select", name: "lease-active" },
  },
  {
    req: request(6, "session.current"),
    fixture: {
      dir: "session.current",
      name: "default",
      requestId: "rpc.session-current.request.v1",
      responseId: "rpc.session-current.response.v1",
    },
  },
  { req: request(28, "system.describe"), fixture: { dir: "system.describe", name: "active-session" } },
  {
    req: request(7, "device.observe"),
    state: true,
    fixture: {
      dir: "device.observe",
      name: "default",
      requestId: "rpc.device-observe.request.v1",
      responseId: "rpc.device-observe.response.v1",
    },
  },
  {
    req: request(
      8,
      "device.execute",
      { id: A1, name: "tap", arguments: TAP_ARGS, actionTimeoutMs: 2000 },
      { timeoutMs: 5000 },
    ),
    state: true,
    fixture: {
      dir: "device.execute",
      name: "tap",
      requestId: "rpc.device-execute.timeout.v1",
      responseId: "rpc.device-execute.response.v1",
    },
  },
  {
    req: request(29, "device.execute", { id: A1, name: "tap", arguments: TAP_ARGS }),
    fixture: {
      dir: "device.execute",
      name: "duplicate-call-id",
      note: "rejected before anything is appended to the Session",
    },
  },
  {
    req: request(30, "device.execute", {
      id: A_UNKNOWN,
      name: "swipe",
      arguments: { startX: 640, startY: 600, endX: 640, endY: 200 },
    }),
    state: true,
    fixture: {
      dir: "device.execute",
      name: "unknown-action",
      note: "the call is recorded redacted (arguments null, argumentsRedacted true) and completes as failed; see events.list/unknown-action-redacted",
    },
  },
  {
    req: request(41, "device.execute", {
      id: A_FIND,
      name: "findElement",
      arguments: { selector: selector({ identifier: "username" }) },
    }),
    state: true,
    fixture: {
      dir: "device.execute",
      name: "find-element",
      note: "read-only: the before Observation is also the after one",
    },
  },
  {
    req: request(42, "device.execute", {
      id: A_TAP_ELEMENT,
      name: "tapElement",
      arguments: { target: { kind: "selector", selector: selector({ role: "TextField", name: "User name" }) } },
    }),
    state: true,
    fixture: {
      dir: "device.execute",
      name: "tap-element",
      note: "the Mock has no native element press, so the tap is a coordinate fallback",
    },
  },
  {
    req: request(43, "device.execute", {
      id: A_WAIT,
      name: "waitForElement",
      arguments: { selector: selector({ identifier: "sign_in" }), condition: "visible" },
    }),
    state: true,
    fixture: { dir: "device.execute", name: "wait-for-element" },
  },
  {
    req: request(44, "device.execute", {
      id: A_NOT_FOUND,
      name: "findElement",
      arguments: { selector: selector({ text: { value: "Forgot password?", mode: "exact" } }) },
    }),
    state: true,
    fixture: { dir: "device.execute", name: "element-not-found", note: "recorded as a failed action" },
  },
  {
    req: request(45, "device.execute", {
      id: A_STALE,
      name: "tapElement",
      arguments: {
        target: {
          kind: "node",
          node: {
            observationId: O_UNKNOWN,
            context: { contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "login-1" },
            stableNodeId: "login/username",
          },
        },
      },
    }),
    state: true,
    fixture: {
      dir: "device.execute",
      name: "element-stale",
      note: "a node reference into an Observation this daemon never made",
    },
  },
  {
    req: request(46, "events.stream.open", { sessionId: "$session", originPolicy: { kind: "absent" } }),
    fixture: {
      dir: "events.stream.open",
      name: "default",
      requestId: "stream.events-open.request.v1",
      responseId: "stream.events-open.response.v1",
      note: "the endpoint carries a random port and token; the replay compares it by shape",
    },
  },
  {
    req: request(14, "ui.snapshot.get", { observationId: "$observation" }),
    fixture: {
      dir: "ui.snapshot.get",
      name: "default",
      requestId: "rpc.ui-snapshot-get.request.v1",
      responseId: "rpc.ui-snapshot-get.response.v1",
    },
  },
  {
    req: request(15, "ui.snapshot.get", { observationId: O_UNKNOWN }),
    fixture: { dir: "ui.snapshot.get", name: "not-found" },
  },
  {
    req: request(16, "verdict.record", { verdict: VERDICT }),
    state: true,
    fixture: {
      dir: "verdict.record",
      name: "default",
      requestId: "rpc.verdict-record.request.v1",
      responseId: "rpc.verdict-record.response.v1",
    },
  },
  {
    req: request(17, "verdict.record", { verdict: { status: "fail", summary: " \t ", evidence: [] } }),
    fixture: { dir: "verdict.record", name: "blank-summary" },
  },
  {
    req: request(18, "events.list", { afterSequence: 1, limit: 3 }),
    fixture: {
      dir: "events.list",
      name: "default",
      requestId: "rpc.events-list.request.v1",
      responseId: "rpc.events-list.response.v1",
    },
  },
  {
    req: request(31, "events.list", { afterSequence: 4, limit: 2 }),
    fixture: { dir: "events.list", name: "unknown-action-redacted" },
  },
  { req: request(19, "events.clear", {}), fixture: { dir: "events.clear", name: "session-active" } },
  { req: request(32, "session.export", { limit: 4 }), fixture: { dir: "session.export", name: "page-active" } },
  { req: request(33, "session.export"), fixture: { dir: "session.export", name: "active" } },
  {
    req: request(10, "media.stream.start", { streamId: M1, kind: "screenshot" }),
    state: true,
    fixture: {
      dir: "media.stream.start",
      name: "default",
      requestId: "rpc.media-stream-start.request.v1",
      responseId: "rpc.media-stream-start.response.v1",
    },
  },
  {
    req: request(36, "media.stream.start", { streamId: M1, kind: "screenshot" }),
    fixture: {
      dir: "media.stream.start",
      name: "already-started",
      note: "same id, kind, Session and device: the stored info again, no second mediaStreamStarted (docs/protocol/media-streams.md#starting-a-stream)",
    },
  },
  {
    req: request(37, "media.stream.start", { streamId: M1, kind: "video" }),
    fixture: { dir: "media.stream.start", name: "conflict" },
  },
  {
    req: request(11, "media.stream.capture", { streamId: M1, frameIndex: 1 }),
    state: true,
    fixture: {
      dir: "media.stream.capture",
      name: "default",
      requestId: "rpc.media-stream-capture.request.v1",
      responseId: "rpc.media-stream-capture.response.v1",
      note: "appends observationCaptured, then mediaFrameCaptured whose evidence is that Observation's screenshot",
    },
  },
  {
    req: request(38, "media.stream.capture", { streamId: M1, frameIndex: 1 }),
    fixture: {
      dir: "media.stream.capture",
      name: "exact-retry",
      note: "the committed frame again, no new events (docs/protocol/media-streams.md#capturing-frames)",
    },
  },
  {
    req: request(12, "media.stream.capture", { streamId: M1, frameIndex: 3 }),
    fixture: { dir: "media.stream.capture", name: "out-of-order" },
  },
  {
    req: request(39, "media.stream.capture", { streamId: M1, frameIndex: 2, durationMs: 40 }),
    fixture: { dir: "media.stream.capture", name: "invalid-frame" },
  },
  {
    req: request(13, "media.stream.end", { streamId: M1 }),
    state: true,
    fixture: {
      dir: "media.stream.end",
      name: "default",
      requestId: "rpc.media-stream-end.request.v1",
      responseId: "rpc.media-stream-end.response.v1",
    },
  },
  {
    req: request(40, "media.stream.end", { streamId: M_UNKNOWN }),
    fixture: { dir: "media.stream.end", name: "not-found" },
  },
  {
    req: request("session-end-1", "session.end", { outcome: "completed", reason: "tap flow verified" }),
    state: true,
    fixture: {
      dir: "session.end",
      name: "default",
      requestId: "rpc.session-end.request.v1",
      responseId: "rpc.session-end.response.v1",
    },
  },
  {
    req: request(22, "session.export", { sessionId: "$session" }),
    fixture: {
      dir: "session.export",
      name: "default",
      requestId: "rpc.session-export.request.v1",
      responseId: "rpc.session-export.response.v1",
    },
  },
  {
    req: request(23, "session.export", { sessionId: "$session", limit: 4 }),
    fixture: { dir: "session.export", name: "page-first" },
  },
  {
    req: request(24, "session.export", { sessionId: "$session", afterSequence: 8, limit: 4 }),
    fixture: { dir: "session.export", name: "page-last" },
  },
  { req: request(25, "sessions.list"), fixture: { dir: "sessions.list", name: "ended-session" } },
  { req: request(47, "devicerail.sessions.list"), fixture: { dir: "devicerail.sessions.list", name: "ended-session" } },
  {
    req: request(26, "events.clear", { sessionId: "$session" }),
    state: true,
    fixture: {
      dir: "events.clear",
      name: "default",
      requestId: "rpc.events-clear.request.v1",
      responseId: "rpc.events-clear.response.v1",
    },
  },
  {
    req: request(34, "events.clear", { sessionId: "$session" }),
    fixture: {
      dir: "events.clear",
      name: "already-deleted",
      note: "deliberately not the reference's idempotent {deleted:true} (docs/protocol/sessions-and-events.md#deleting-a-session)",
    },
  },
  { req: request(35, "sessions.list"), fixture: { dir: "sessions.list", name: "after-clear" } },
  {
    req: request(27, "device.disconnect"),
    state: true,
    fixture: {
      dir: "device.disconnect",
      name: "default",
      requestId: "rpc.device-disconnect.request.v1",
      responseId: "rpc.device-disconnect.response.v1",
    },
  },
];

type J = null | boolean | number | string | J[] | { [k: string]: J };
const mapStrings = (x: J, f: (s: string) => string): J =>
  typeof x === "string"
    ? f(x)
    : Array.isArray(x)
      ? x.map((y) => mapStrings(y, f))
      : x && typeof x === "object"
        ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, mapStrings(v, f)]))
        : x;
const uuidsIn = (x: unknown): string[] => JSON.stringify(x).match(V4_G) ?? [];
/** JSON Pointer of the first string exactly equal to `value` in `node`, or null. */
function pointerTo(node: J, value: string, at = ""): string | null {
  if (node === value) return at;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const p = pointerTo(node[i] as J, value, `${at}/${i}`);
      if (p !== null) return p;
    }
  } else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      const p = pointerTo(v, value, `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`);
      if (p !== null) return p;
    }
  }
  return null;
}
const BIND_NAMES: Record<string, string> = {
  "session.start": "session",
  "device.observe": "observation",
  "device.execute": "observation",
  "verdict.record": "event",
};

async function recordTranscript(): Promise<void> {
  await using d = spawnDaemon();
  d.send(request("hello-1", "system.hello", HELLO_ALL));
  const h = await d.next();
  if (h.error) throw new Error(`transcript hello failed: ${JSON.stringify(h)}`);
  const vars = new Map<string, string>(); // "$session" → recorded value
  const done: { req: J; res: J; state: boolean }[] = [];
  for (const step of TRANSCRIPT) {
    const req = mapStrings(step.req as J, (s) => vars.get(s) ?? s);
    if (JSON.stringify(req).includes('"$')) throw new Error(`unbound variable in ${JSON.stringify(req)}`);
    d.send(req);
    const res = (await d.next()) as unknown as J;
    const method = (req as { method: string }).method;
    if (method === "session.start" && !("error" in (res as object)))
      vars.set("$session", (res as { result: { id: string } }).result.id);
    if (method === "device.observe" && !("error" in (res as object)))
      vars.set("$observation", (res as { result: { id: string } }).result.id);
    if (step.fixture) {
      const before = done.filter((x) => x.state);
      // Bind every UUID the fixture reuses that a kept step's response produced (not one a request chose).
      const bind: Record<string, Binding> = {};
      const bound = new Set<string>();
      const used = [...before.flatMap((x) => uuidsIn(x.req)), ...uuidsIn(req), ...uuidsIn(res)];
      for (const u of used) {
        if (bound.has(u)) continue;
        for (let i = 0; i < before.length; i++) {
          if (before.slice(0, i + 1).some((x) => uuidsIn(x.req).includes(u))) break;
          const kept = before[i] as (typeof before)[number];
          const pointer = pointerTo(kept.res, u);
          if (pointer === null) continue;
          const base = BIND_NAMES[(kept.req as { method: string }).method] ?? "value";
          let name = base;
          for (let n = 2; name in bind; n++) name = `${base}${n}`;
          bind[name] = { step: i, pointer, recorded: u };
          bound.add(u);
          break;
        }
      }
      add({
        ...step.fixture,
        method,
        request: req as object,
        response: res as object,
        replay: {
          hello: HELLO_ALL,
          before: before.map((x) => x.req as object),
          ...(Object.keys(bind).length ? { bind } : {}),
        },
      });
    }
    done.push({ req, res, state: step.state === true });
  }
  console.log(`transcript: ${TRANSCRIPT.length} steps, Session ${vars.get("$session")}`);
}
await recordTranscript();

// ---------------------------------------------------------------- write
interface StoredEntry {
  id: string;
  path: string;
  replay: { before: { method: string }[]; bind?: Record<string, Binding> } | null;
}

/**
 * Gives fresh pairs the ids the stored fixtures bind to the same pointer of the same before-step
 * (same index, same method), so that a partial recording describes the stored transcript's Session
 * and Observations instead of this run's.
 */
function rebase(fresh: Pair[], stored: StoredEntry[]): void {
  const key = (before: { method: string }[], b: Binding) => `${b.step} ${before[b.step]?.method} ${b.pointer}`;
  const old = new Map<string, string>();
  for (const e of stored)
    for (const b of Object.values(e.replay?.bind ?? {})) old.set(key(e.replay?.before ?? [], b), b.recorded);
  for (const p of fresh) {
    if (typeof p.replay === "string" || !p.replay.bind) continue;
    const swaps: [string, string][] = [];
    for (const b of Object.values(p.replay.bind)) {
      const was = old.get(key(p.replay.before as { method: string }[], b));
      if (was === undefined)
        throw new Error(
          `--only: ${p.dir}/${p.name} binds ${b.pointer} of before-step ${b.step}, which no stored fixture binds; record everything`,
        );
      swaps.push([b.recorded, was]);
    }
    const swap = <T>(x: T): T =>
      mapStrings(x as J, (str) => swaps.reduce((acc, [now, was]) => acc.replaceAll(now, was), str)) as T;
    Object.assign(p, { request: swap(p.request), response: swap(p.response), replay: swap(p.replay) });
  }
}

const onlyAt = process.argv.indexOf("--only");
/** The folders this run rewrites; null rewrites all of fixtures/protocol. */
const only = onlyAt < 0 ? null : new Set((process.argv[onlyAt + 1] ?? "").split(",").filter(Boolean));
if (only?.size === 0) throw new Error("--only needs a comma-separated list of fixture folders");
for (const dir of only ?? [])
  if (!pairs.some((p) => p.dir === dir)) throw new Error(`--only: nothing is recorded into ${dir}`);
const rewrites = (p: Pair) => only === null || only.has(p.dir);
const stored =
  only === null
    ? []
    : (JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8")) as { fixtures: StoredEntry[] }).fixtures;
const storedById = new Map(stored.map((e) => [e.id, e]));
rebase(
  pairs.filter((p) => only !== null && rewrites(p)),
  stored,
);

const order = [...METHOD_NAMES, "_envelope"] as string[];
pairs.sort(
  (a, b) => order.indexOf(a.dir) - order.indexOf(b.dir) || Number(b.name === "default") - Number(a.name === "default"),
);
const isError = (r: object) => "error" in r;
const manifest: object[] = [];
/** Files to write, relative to fixtures/: gathered first, so a refused partial run changes nothing. */
const files = new Map<string, string>();
const ids = new Set<string>();
const useId = (id: string) => {
  if (ids.has(id)) throw new Error(`duplicate id ${id}`);
  ids.add(id);
  return id;
};
/** A folder this run does not rewrite keeps its stored entry, which must describe the same file. */
const keep = (entry: { id: string; path: string }): object => {
  const was = storedById.get(entry.id);
  if (!was || was.path !== entry.path)
    throw new Error(`--only: ${entry.path} is not in the stored manifest as ${entry.id}; record everything`);
  return was;
};
const paths = new Set<string>();
for (const p of pairs) {
  const group =
    p.dir === "_envelope" ? "envelope" : p.method === "system.hello" && p.name !== "websocket" ? "handshake" : "rpc";
  const base =
    p.dir === "_envelope"
      ? `envelope.${p.name}`
      : `${group}.${kebabMethod(p.method as string)}${p.name === "default" ? "" : `.${p.name}`}`;
  const err = isError(p.response);
  const reqId = useId(p.requestId ?? `${base}.request.v1`);
  const resId = useId(p.responseId ?? `${base}.${err ? "error" : "response"}.v1`);
  const raw = typeof p.request === "string";
  const reqPath = `protocol/${p.dir}/${p.name}.request.${raw ? "txt" : "json"}`;
  const resPath = `protocol/${p.dir}/${p.name}.response.json`;
  if (paths.has(reqPath)) throw new Error(`duplicate path ${reqPath}`);
  paths.add(reqPath);
  if (!rewrites(p)) {
    manifest.push(keep({ id: reqId, path: reqPath }), keep({ id: resId, path: resPath }));
    continue;
  }
  files.set(reqPath, raw ? `${p.request}\n` : `${JSON.stringify(p.request, null, 2)}\n`);
  files.set(resPath, `${JSON.stringify(p.response, null, 2)}\n`);
  const known = p.method !== null && (METHOD_NAMES as string[]).includes(p.method);
  const envelope = p.dir === "_envelope";
  manifest.push({
    id: reqId,
    path: reqPath,
    method: p.method,
    kind: raw ? "rawLine" : known ? `${camel(p.method as string)}Request` : "rpcRequest",
    schema: raw ? null : envelope ? schemaId("RpcRequest") : methodSchemaId(p.method as string, "request"),
    ...(p.requestSchemaValid === false ? { schemaValid: false } : {}),
    replay: typeof p.replay === "string" ? null : { ...p.replay, response: resId },
    ...(typeof p.replay === "string" ? { replayNote: p.replay } : {}),
    ...(p.note ? { note: p.note } : {}),
  });
  manifest.push({
    id: resId,
    path: resPath,
    method: p.method,
    kind: err ? "rpcFailure" : `${camel(p.method as string)}Response`,
    schema: known ? methodSchemaId(p.method as string, "response") : schemaId("RpcFailure"),
    replay: null,
  });
}
const dropped = stored.filter((e) => !ids.has(e.id)).map((e) => e.path);
if (dropped.length)
  throw new Error(
    `--only: the stored manifest lists fixtures this recorder no longer makes (${dropped.join(", ")}); record everything`,
  );
if (only === null) rmSync(ROOT, { recursive: true, force: true });
else for (const dir of only) rmSync(join(ROOT, dir), { recursive: true, force: true });
for (const [path, content] of files) {
  mkdirSync(join(FIXTURES, path, ".."), { recursive: true });
  writeFileSync(join(FIXTURES, path), content);
}
writeFileSync(
  join(ROOT, "manifest.json"),
  `${JSON.stringify({ manifestVersion: 1, protocol: { major: 1, minor: 5 }, fixtures: manifest }, null, 2)}\n`,
);
console.log(`${pairs.length} pairs, ${manifest.length} fixtures${only ? ` (rewrote ${[...only].join(", ")})` : ""}`);
