import { describe, expect, test } from "bun:test";
import { ALL_FEATURES, helloParams, spawnDaemon } from "../support/daemon.ts";

const SERVER_OFFER = { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] };
// events.stream.v1 needs the WebSocket listener, not built yet.
const AVAILABLE = [...ALL_FEATURES].sort();

const err = (code: number, dataCode: string, message: string, retryable: boolean, details: unknown) => ({
  code,
  message,
  data: { code: dataCode, message, retryable, details },
});

describe("connection state machine", () => {
  test("methods before hello answer handshake_required when the connection is awaiting hello", async () => {
    await using d = spawnDaemon();
    for (const method of ["system.describe", "devices.list", "no.such.method", "device.observe"]) {
      const r = await d.call(method);
      expect(r.error).toEqual(
        err(-32001, "handshake_required", "system.hello must succeed before any other method", true, {
          requiredMethod: "system.hello",
        }),
      );
    }
  });

  test("a second hello answers handshake_already_completed when the connection is ready", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const r = await d.call("system.hello", helloParams());
    expect(r.error).toEqual(
      err(
        -32002,
        "handshake_already_completed",
        "this transport connection has already completed system.hello",
        false,
        null,
      ),
    );
  });

  test("timeoutMs on hello is feature_not_negotiated even on a ready connection", async () => {
    await using d = spawnDaemon();
    const expected = err(-32602, "feature_not_negotiated", "timeoutMs requires negotiated request control", false, {
      field: "timeoutMs",
      requiredFeature: "request.control.v1",
    });
    expect((await d.call("system.hello", helloParams(), { timeoutMs: 10 })).error).toEqual(expected);
    await d.hello();
    expect((await d.call("system.hello", helloParams(), { timeoutMs: 10 })).error).toEqual(expected);
  });

  test("a failed hello leaves the connection awaiting hello so the client can retry", async () => {
    await using d = spawnDaemon();
    const bad = await d.call("system.hello", helloParams({ min: 6, max: 9 }));
    expect(bad.error?.data.code).toBe("protocol_version_incompatible");
    expect((await d.call("system.describe")).error?.data.code).toBe("handshake_required");
    const ok = await d.hello();
    expect(ok.result.protocol.selected).toEqual({ major: 1, minor: 5 });
  });

  test("hello result and describe agree when hello succeeds", async () => {
    await using d = spawnDaemon();
    const hello = await d.hello();
    expect(hello.result).toEqual({
      connectionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      protocol: { selected: { major: 1, minor: 5 } },
      server: { name: "devicerail-daemon", version: expect.any(String) },
      transport: { kind: "stdio", framing: "ndjson" },
      features: { enabled: AVAILABLE },
    });
    const describeResult = (await d.call("system.describe")).result;
    expect(describeResult).toEqual({
      connection: hello.result,
      client: { name: "devicerail-tests", version: "1.0.0" },
      // The sole registered device is selected lazily (docs/protocol/devices-and-actions.md#routing).
      deviceId: "mock-1",
      activeSessionId: null,
    });
  });
});

describe("version negotiation", () => {
  const cases: [string, { major: number; minMinor: number; maxMinor: number }[], unknown][] = [
    ["highest common minor of equal majors", [{ major: 1, minMinor: 0, maxMinor: 9 }], { major: 1, minor: 5 }],
    [
      "pair intersection picks the best range",
      [
        { major: 1, minMinor: 0, maxMinor: 2 },
        { major: 3, minMinor: 0, maxMinor: 0 },
      ],
      { major: 1, minor: 2 },
    ],
    [
      "unsorted ranges",
      [
        { major: 1, minMinor: 3, maxMinor: 3 },
        { major: 1, minMinor: 0, maxMinor: 1 },
      ],
      { major: 1, minor: 3 },
    ],
    ["exact single minor", [{ major: 1, minMinor: 0, maxMinor: 0 }], { major: 1, minor: 0 }],
  ];
  for (const [name, ranges, selected] of cases)
    test(`selects ${JSON.stringify(selected)} when offering ${name}`, async () => {
      await using d = spawnDaemon();
      const r = await d.call("system.hello", { ...helloParams(), protocol: { ranges } });
      expect(r.result.protocol.selected).toEqual(selected);
    });

  const failures: [string, { major: number; minMinor: number; maxMinor: number }[]][] = [
    ["clientTooOld", [{ major: 0, minMinor: 1, maxMinor: 9 }]],
    ["serverTooOld", [{ major: 1, minMinor: 6, maxMinor: 9 }]],
    [
      "noCommonVersion",
      [
        { major: 0, minMinor: 0, maxMinor: 0 },
        { major: 2, minMinor: 0, maxMinor: 0 },
      ],
    ],
    ["serverTooOld", [{ major: 2, minMinor: 0, maxMinor: 3 }]],
  ];
  for (const [reason, ranges] of failures)
    test(`answers ${reason} with both offers when offering ${JSON.stringify(ranges)}`, async () => {
      await using d = spawnDaemon();
      const r = await d.call("system.hello", { ...helloParams(), protocol: { ranges } });
      expect(r.error).toEqual(
        err(-32003, "protocol_version_incompatible", "client and server do not share a protocol version", false, {
          clientProtocol: { ranges },
          reason,
          serverProtocol: SERVER_OFFER,
        }),
      );
    });

  test("an empty offer is invalid_params emptyProtocolOffer", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", { ...helloParams(), protocol: { ranges: [] } });
    expect(r.error).toEqual(
      err(-32602, "invalid_params", "client protocol offer must contain at least one range", true, {
        reason: "emptyProtocolOffer",
      }),
    );
  });

  test("an inverted range is invalid_params invalidProtocolRange with the offer", async () => {
    await using d = spawnDaemon();
    const ranges = [
      { major: 1, minMinor: 0, maxMinor: 5 },
      { major: 1, minMinor: 4, maxMinor: 2 },
    ];
    const r = await d.call("system.hello", { ...helloParams(), protocol: { ranges } });
    expect(r.error).toEqual(
      err(-32602, "invalid_params", "client protocol offer contains an inverted minor range", true, {
        clientProtocol: { ranges },
        reason: "invalidProtocolRange",
      }),
    );
  });

  test("undecodable hello params are retryable invalid_params", async () => {
    await using d = spawnDaemon();
    const MINOR = "an integer from 0 to 65535";
    const bad: [unknown, string, string, string][] = [
      [{ ...helloParams(), extra: 1 }, "", "only the keys client, protocol, features", 'unknown key "extra"'],
      [{ client: { name: "x" }, protocol: SERVER_OFFER }, "/client/version", "a string", "no value"],
      [
        { ...helloParams(), features: { required: ["a", "a"] } },
        "/features/required",
        "an array without repeated items, each a string",
        '["a","a"]',
      ],
      [
        { ...helloParams(), protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 70000 }] } },
        "/protocol/ranges/0/maxMinor",
        MINOR,
        "70000",
      ],
      [
        { ...helloParams(), protocol: { ranges: [{ major: 1.5, minMinor: 0, maxMinor: 1 }] } },
        "/protocol/ranges/0/major",
        MINOR,
        "1.5",
      ],
      [undefined, "", "an object with keys client, protocol and optional key features", "no value"],
    ];
    for (const [p, pointer, expected, received] of bad) {
      const r = await d.call("system.hello", p);
      const issue = { pointer, expected, received };
      expect(r.error).toEqual(
        err(-32602, "invalid_params", "system.hello params are invalid", true, {
          method: "system.hello",
          ...issue,
          issues: [issue],
        }),
      );
    }
    d.writeRaw(
      '{"jsonrpc":"2.0","id":"f","method":"system.hello","params":{"client":{"name":"a","version":"b"},"protocol":{"ranges":[{"major":1.0,"minMinor":0,"maxMinor":5}]}}}\n',
    );
    expect((await d.next()).error?.data.message).toBe("system.hello params are invalid");
  });
});

describe("feature negotiation", () => {
  test("nothing is enabled implicitly when no features are offered", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", { ...helloParams(), features: { required: [], optional: [] } });
    expect(r.result.features).toEqual({ enabled: [] });
    const noFeatures = await d.call("sessions.list");
    expect(noFeatures.error).toEqual(
      err(-32601, "method_not_found", "method is not available: sessions.list", false, {
        method: "sessions.list",
        requiredFeature: "events.snapshot.v1",
      }),
    );
  });

  test("unknown optional names are ignored and required ones fail when unsupported", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", {
      ...helloParams(),
      features: { required: ["zzz.v9", "events.stream.v1", "aaa.v2"], optional: ["nope"] },
    });
    expect(r.error).toEqual(
      err(-32004, "required_feature_unsupported", "one or more required protocol features are unsupported", true, {
        // session.export.page.v1 is available only when events.snapshot.v1 is offered too.
        available: AVAILABLE.filter((f) => f !== "session.export.page.v1"),
        unsupportedRequired: ["aaa.v2", "zzz.v9"],
      }),
    );
    const ok = await d.call("system.hello", {
      ...helloParams(),
      features: { required: ["request.control.v1"], optional: ["nope"] },
    });
    expect(ok.result.features).toEqual({ enabled: ["request.control.v1"] });
  });

  test("semantic actions without UI snapshots fail the hello with feature_dependency_unsatisfied", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", {
      ...helloParams(),
      features: { required: [], optional: ["device.semanticActions.v1", "verdict.record.v1"] },
    });
    expect(r.error).toEqual(
      err(-32004, "feature_dependency_unsatisfied", "semantic Actions require negotiated UI snapshot evidence", false, {
        feature: "device.semanticActions.v1",
        requiredFeature: "observation.uiSnapshot.v1",
      }),
    );
    const ok = await d.call("system.hello", {
      ...helloParams(),
      features: { optional: ["device.semanticActions.v1", "observation.uiSnapshot.v1"] },
    });
    expect(ok.result.features.enabled).toEqual(["device.semanticActions.v1", "observation.uiSnapshot.v1"]);
  });

  const byMinor: [number, string[]][] = [
    [0, ["events.snapshot.v1"]],
    [1, ["events.snapshot.v1", "request.control.v1"]],
    [2, ["action.protected.v1", "device.routing.v1", "events.snapshot.v1", "request.control.v1"]],
    [3, ["action.protected.v1", "device.routing.v1", "events.snapshot.v1", "events.stream.v1", "request.control.v1"]],
    [
      4,
      [
        "action.protected.v1",
        "device.routing.v1",
        "events.snapshot.v1",
        "events.stream.v1",
        "media.stream.v1",
        "request.control.v1",
        "session.export.page.v1",
      ],
    ],
    [5, AVAILABLE],
  ];
  for (const [minor, enabled] of byMinor)
    test(`features are gated by the selected minor when 1.${minor} is selected`, async () => {
      await using d = spawnDaemon();
      const r = await d.call("system.hello", helloParams({ max: minor }));
      expect(r.result.features.enabled).toEqual(enabled);
    });

  test("session.export.page.v1 is available only when events.snapshot.v1 is offered too", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", { ...helloParams(), features: { required: ["session.export.page.v1"] } });
    expect(r.error?.data.code).toBe("required_feature_unsupported");
    expect(r.error?.data.details.available).not.toContain("session.export.page.v1");
    const ok = await d.call("system.hello", {
      ...helloParams(),
      features: { required: ["session.export.page.v1"], optional: ["events.snapshot.v1"] },
    });
    expect(ok.result.features.enabled).toEqual(["events.snapshot.v1", "session.export.page.v1"]);
  });

  test("screenshot policy omit yields observations with screenshotOmission policy and no evidence", async () => {
    await using d = spawnDaemon({ env: { DEVICERAIL_SCREENSHOT_POLICY: "omit" } });
    await d.hello();
    await d.call("device.connect");
    await d.call("session.start");
    const obs = (await d.call("device.observe")).result;
    expect(obs).toEqual(expect.objectContaining({ screenshot: null, screenshotOmission: "policy" }));
    expect(obs.uiSnapshotOmission).toBe("policy");
    expect(obs.uiSnapshot).toBeUndefined();
    const tap = (
      await d.call("device.execute", {
        id: "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11",
        name: "tap",
        arguments: { x: 1, y: 1 },
      })
    ).result;
    expect(tap.evidence).toEqual([]);
    expect(tap.after).toEqual(expect.objectContaining({ screenshot: null, screenshotOmission: "policy" }));
  });
});
