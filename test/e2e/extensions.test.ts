/** devicerail's methods beyond the reference, over the real daemon: devicerail.sessions.list and rpc.discover. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorObject } from "../../src/protocol/errors.ts";
import { METHOD_NAMES } from "../../src/protocol/methods.ts";
import { MAX_FRAME_BYTES } from "../../src/protocol/limits.ts";
import { type DaemonProcess, ROOT, helloParams, spawnDaemon, tempDataDir } from "../support/daemon.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

const OPENRPC = JSON.parse(readFileSync(join(ROOT, "src/protocol/generated/openrpc.json"), "utf8"));
const TAP = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d21";
const FLY = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d22";

/** Either client kind: the stdio daemon and a TCP socket answer `call` alike. */
type Caller = { call(method: string, params?: unknown): Promise<{ result?: any; error?: any }> };

/**
 * One finished Session with a successful tap, an unknown action (recorded, failed), a verdict and a
 * reason, then a second Session left active. Returns both ids.
 */
async function recordTwo(c: Caller): Promise<{ ended: string; active: string }> {
  await c.call("device.connect");
  const ended = (await c.call("session.start")).result.id as string;
  await c.call("device.observe");
  await c.call("device.execute", { id: TAP, name: "tap", arguments: { x: 5, y: 6 } });
  expect((await c.call("device.execute", { id: FLY, name: "fly", arguments: {} })).error.data.code).toBe(
    "unknown_action",
  );
  await c.call("verdict.record", { verdict: { status: "pass", summary: "the tap landed", evidence: [] } });
  await c.call("session.end", { outcome: "completed", reason: "checked by hand" });
  const active = (await c.call("session.start")).result.id as string;
  return { ended, active };
}

const summaryOf = (ids: { ended: string; active: string }) => [
  {
    id: ids.active,
    state: "active",
    startedAtMs: expect.any(Number),
    endedAtMs: null,
    eventCount: 1,
    lastSequence: 1,
    deviceId: "mock-1",
    durationMs: expect.any(Number),
    actions: 0,
    errors: 0,
    outcome: null,
    reason: null,
    verdict: null,
  },
  {
    id: ids.ended,
    state: "ended",
    startedAtMs: expect.any(Number),
    endedAtMs: expect.any(Number),
    eventCount: 8,
    lastSequence: 8,
    deviceId: "mock-1",
    durationMs: expect.any(Number),
    actions: 2,
    errors: 1,
    outcome: "completed",
    reason: "checked by hand",
    verdict: { status: "pass", summary: "the tap landed" },
  },
];

async function readyStdio(d: DaemonProcess) {
  await d.hello();
  return d;
}

describe("devicerail.sessions.list", () => {
  test("summarises every Session newest first over stdio, filtered by state and limit, while sessions.list keeps its bare array", async () => {
    await using d = await readyStdio(spawnDaemon());
    const ids = await recordTwo(d);
    const all = (await d.call("devicerail.sessions.list")).result;
    expect(all).toEqual({ sessions: summaryOf(ids) });
    const [active, ended] = all.sessions;
    expect(ended.durationMs).toBe(ended.endedAtMs - ended.startedAtMs);
    expect(active.startedAtMs).toBeGreaterThanOrEqual(ended.endedAtMs);
    const reference = (await d.call("sessions.list")).result;
    expect(Array.isArray(reference)).toBe(true);
    const info = ({ id, state, startedAtMs, endedAtMs, eventCount, lastSequence }: any) => ({
      id,
      state,
      startedAtMs,
      endedAtMs,
      eventCount,
      lastSequence,
    });
    expect(all.sessions.map(info).sort((a: any, b: any) => a.id.localeCompare(b.id))).toEqual(reference);
    expect({
      ended: (await d.call("devicerail.sessions.list", { state: "ended" })).result.sessions.map((s: any) => s.id),
      active: (await d.call("devicerail.sessions.list", { state: "active" })).result.sessions.map((s: any) => s.id),
      newest: (await d.call("devicerail.sessions.list", { limit: 1 })).result.sessions.map((s: any) => s.id),
    }).toEqual({ ended: [ids.ended], active: [ids.active], newest: [ids.active] });
  });

  test("shows the earlier daemon's Sessions, the active one ended by the shutdown, when the daemon restarts on the same data directory", async () => {
    const dataDir = tempDataDir();
    let ids: { ended: string; active: string };
    {
      await using first = await readyStdio(spawnDaemon({ env: { DEVICERAIL_DATA_DIR: dataDir } }));
      ids = await recordTwo(first);
      expect(await first.close()).toBe(0);
    }
    await using second = await readyStdio(spawnDaemon({ env: { DEVICERAIL_DATA_DIR: dataDir } }));
    const [closed, ended] = summaryOf(ids);
    expect((await second.call("devicerail.sessions.list")).result).toEqual({
      sessions: [
        {
          ...closed,
          state: "ended",
          endedAtMs: expect.any(Number),
          eventCount: 2,
          lastSequence: 2,
          outcome: "shutdown",
          reason: "daemon shutdown",
        },
        ended,
      ],
    });
  });

  test("lists a Session another TCP client is recording, with its live counts", async () => {
    await using daemon = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const recorder = await RpcSocket.connect({ port: daemon.port });
    const reader = await RpcSocket.connect({ port: daemon.port });
    try {
      await recorder.hello();
      await reader.hello();
      const ids = await recordTwo(recorder);
      await recorder.call("device.execute", {
        id: "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d23",
        name: "tap",
        arguments: { x: 1, y: 1 },
      });
      const [active, ended] = summaryOf(ids);
      expect((await reader.call("devicerail.sessions.list")).result).toEqual({
        sessions: [{ ...active, eventCount: 3, lastSequence: 3, actions: 1 }, ended],
      });
    } finally {
      recorder.close();
      reader.close();
    }
  });

  test("answers method_not_found without events.snapshot.v1 and invalid_params for an unknown state or a limit out of range", async () => {
    await using d = spawnDaemon();
    await d.hello({ optional: [] });
    expect((await d.call("devicerail.sessions.list")).error).toEqual(
      errorObject("method_not_found", {
        arg: "devicerail.sessions.list",
        details: { method: "devicerail.sessions.list", requiredFeature: "events.snapshot.v1" },
      }),
    );
    await using e = await readyStdio(spawnDaemon());
    const refusals = [];
    for (const params of [{ state: "deleted" }, { limit: 0 }, { limit: 1001 }, { limit: 2.5 }, { order: "oldest" }]) {
      const error = (await e.call("devicerail.sessions.list", params)).error;
      refusals.push({
        code: error?.code,
        message: error?.message,
        dataCode: error?.data.code,
        method: error?.data.details.method,
      });
    }
    const refused = {
      code: -32602,
      message: "devicerail.sessions.list params are invalid",
      dataCode: "invalid_params",
      method: "devicerail.sessions.list",
    };
    expect(refusals).toEqual(Array(5).fill(refused));
  });
});

describe("rpc.discover", () => {
  test("answers the generated OpenRPC document, one frame well under the limit, listing every method", async () => {
    await using d = await readyStdio(spawnDaemon());
    d.send({ jsonrpc: "2.0", id: "discover", method: "rpc.discover" });
    const line = (await d.nextLine()) as string;
    expect(JSON.parse(line)).toEqual({ jsonrpc: "2.0", id: "discover", result: OPENRPC });
    expect(new TextEncoder().encode(line).length).toBeLessThan(MAX_FRAME_BYTES / 4);
    expect(OPENRPC.methods.map((m: { name: string }) => m.name)).toEqual(METHOD_NAMES);
  });

  test("needs the hello first and takes no params, like every other method", async () => {
    await using d = spawnDaemon();
    expect((await d.call("rpc.discover")).error).toEqual(
      errorObject("handshake_required", { details: { requiredMethod: "system.hello" } }),
    );
    expect((await d.call("system.hello", helloParams({ optional: [] }))).result).toBeDefined();
    expect((await d.call("rpc.discover", { verbose: true })).error).toEqual(
      errorObject("params_not_accepted", { arg: "rpc.discover", details: { method: "rpc.discover" } }),
    );
    expect((await d.call("rpc.discover", {})).result).toEqual(OPENRPC);
  });

  test("answers the same document over TCP", async () => {
    await using daemon = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const c = await RpcSocket.connect({ port: daemon.port });
    try {
      await c.hello();
      expect((await c.call("rpc.discover")).result).toEqual(OPENRPC);
    } finally {
      c.close();
    }
  });
});
