import { describe, expect, test } from "bun:test";
import { availableFeatures, negotiate, selectVersion, type ServerServices } from "../../src/rpc/handshake.ts";
import { RpcError } from "../../src/protocol/rpc-error.ts";

const all: ServerServices = {
  eventStreamListener: true,
  screenshotPolicy: "capture",
  evidenceStore: true,
  mediaStreams: true,
};
const range = (major: number, minMinor: number, maxMinor: number) => ({ major, minMinor, maxMinor });
const server = { ranges: [range(1, 0, 5)] };

describe("selectVersion", () => {
  test("picks the greatest common (major, minor) when ranges overlap", () => {
    expect(selectVersion({ ranges: [range(1, 0, 2), range(3, 0, 0)] }, server)).toEqual({ major: 1, minor: 2 });
    expect(selectVersion({ ranges: [range(1, 0, 9)] }, { ranges: [range(1, 0, 5), range(2, 0, 1)] })).toEqual({
      major: 1,
      minor: 5,
    });
    expect(
      selectVersion({ ranges: [range(1, 0, 9), range(2, 0, 0)] }, { ranges: [range(1, 0, 5), range(2, 0, 1)] }),
    ).toEqual({ major: 2, minor: 0 });
  });

  test("names why when nothing overlaps", () => {
    expect(selectVersion({ ranges: [range(0, 1, 9)] }, server)).toBe("clientTooOld");
    expect(selectVersion({ ranges: [range(1, 6, 9)] }, server)).toBe("serverTooOld");
    expect(selectVersion({ ranges: [range(0, 0, 0), range(2, 0, 0)] }, server)).toBe("noCommonVersion");
  });
});

describe("availableFeatures", () => {
  test("the WebSocket listener, capture policy and evidence store each gate their features", () => {
    const offered = new Set(["events.snapshot.v1"]);
    expect(availableFeatures(5, all, offered)).toHaveLength(10);
    expect(availableFeatures(5, { ...all, eventStreamListener: false }, offered)).not.toContain("events.stream.v1");
    expect(availableFeatures(5, { ...all, screenshotPolicy: "omit" }, offered)).not.toContain("media.stream.v1");
    expect(availableFeatures(5, { ...all, mediaStreams: false }, offered)).not.toContain("media.stream.v1");
    expect(availableFeatures(5, { ...all, evidenceStore: false }, offered)).toEqual([
      "events.snapshot.v1",
      "request.control.v1",
      "device.routing.v1",
      "action.protected.v1",
      "events.stream.v1",
      "session.export.page.v1",
    ]);
    expect(availableFeatures(5, all, new Set())).not.toContain("session.export.page.v1");
  });
});

describe("negotiate", () => {
  const params = (features: object) => ({ client: { name: "c", version: "1" }, protocol: server, features });
  test("enables the sorted intersection of the offer and the available set", () => {
    const n = negotiate(
      params({ required: ["request.control.v1"], optional: ["verdict.record.v1", "x.v1", "events.stream.v1"] }),
      all,
    );
    expect(n.enabled).toEqual(["events.stream.v1", "request.control.v1", "verdict.record.v1"]);
  });

  test("throws feature_dependency_unsatisfied when semantic actions come without UI snapshots", () => {
    let thrown: unknown;
    try {
      negotiate(params({ optional: ["device.semanticActions.v1"] }), all);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RpcError);
    expect((thrown as RpcError).error.code).toBe(-32004);
    expect((thrown as RpcError).code).toBe("feature_dependency_unsatisfied");
  });

  test("throws retryable invalid_params pointing at the field, by name or by position, when the params do not decode", () => {
    const refusal = (raw: unknown, positional?: string[]) => {
      try {
        negotiate(raw, all, server, positional);
      } catch (e) {
        if (e instanceof RpcError) return e.error;
        throw e;
      }
      throw new Error("expected a refusal");
    };
    const missing = { pointer: "/client/version", expected: "a string", received: "no value" };
    const answer = (issue: typeof missing) => ({
      code: -32602,
      message: "system.hello params are invalid",
      data: {
        code: "invalid_params",
        message: "system.hello params are invalid",
        retryable: true,
        details: { method: "system.hello", ...issue, issues: [issue] },
      },
    });
    expect([
      refusal({ client: { name: "c" }, protocol: server }),
      refusal({ client: { name: "c" }, protocol: server }, ["client", "protocol", "features"]),
    ]).toEqual([answer(missing), answer({ ...missing, pointer: "/0/version" })]);
  });
});
