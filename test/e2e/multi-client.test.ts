import { describe, expect, test } from "bun:test";
import { pollUntil } from "../support/wait.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];

/** One client's whole Session on its own device: select, connect, start, observe, tap, end. */
async function ownSession(port: number, deviceId: string) {
  const c = await RpcSocket.connect({ port });
  await c.hello();
  expect((await c.call("device.select", { deviceId })).result.device.id).toBe(deviceId);
  await c.call("device.connect");
  const started = await c.call("session.start");
  expect(started.error).toBeUndefined();
  const observed = await c.call("device.observe");
  const tapped = await c.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 10, y: 10 } });
  const ended = await c.call("session.end");
  const events = await c.call("events.list", { sessionId: started.result.id });
  c.close();
  return {
    sessionId: started.result.id as string,
    observed,
    tapped,
    ended,
    events: events.result as { deviceId?: string; payload: { type: string } }[],
  };
}

async function concurrentSessions(n: number) {
  await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_MOCK_DEVICES: String(n) });
  const runs = await Promise.all(Array.from({ length: n }, (_, i) => ownSession(d.port, `mock-${i + 1}`)));
  expect(new Set(runs.map((r) => r.sessionId)).size).toBe(n);
  runs.forEach((r, i) => {
    expect(r.observed.result.deviceId).toBe(`mock-${i + 1}`);
    expect(r.tapped.result.output).toEqual({ accepted: true, x: 10, y: 10 });
    expect(r.ended.result.state).toBe("ended");
    // Each Session recorded only its own device's work.
    expect(r.events.map((e) => [e.payload.type, e.deviceId])).toEqual([
      ["sessionStarted", `mock-${i + 1}`],
      ["observationCaptured", `mock-${i + 1}`],
      ["actionStarted", `mock-${i + 1}`],
      ["actionCompleted", `mock-${i + 1}`],
      ["sessionEnded", `mock-${i + 1}`],
    ]);
  });
}

/** Asks `events.list` from another connection until `done` holds; the daemon writes asynchronously to this client. */
const eventsUntil = (what: string, c: RpcSocket, sessionId: string, done: (types: string[]) => boolean) =>
  pollUntil(
    what,
    async () =>
      (await c.call("events.list", { sessionId })).result as {
        payload: { type: string; outcome?: unknown; reason?: unknown };
      }[],
    (events) => done(events.map((e) => e.payload.type)),
  );

describe("many TCP clients on one daemon", () => {
  test("two clients run separate Sessions with separate leases when they select different devices", () =>
    concurrentSessions(2));

  test(
    "32 clients run 32 Sessions concurrently when each leases its own mock device",
    () => concurrentSessions(32),
    30_000,
  );

  test("a second Session on a leased device is refused with device_in_use until the first ends", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_MOCK_DEVICES: "2" });
    const [a, b] = await Promise.all([RpcSocket.connect({ port: d.port }), RpcSocket.connect({ port: d.port })]);
    for (const c of [a, b]) {
      await c.hello();
      await c.call("device.select", { deviceId: "mock-1" });
      await c.call("device.connect");
    }
    const first = await a.call("session.start");
    expect(first.result.state).toBe("active");
    const refused = await b.call("session.start");
    const message = "device is leased by another owner: mock-1";
    expect(refused.error).toEqual({
      code: -32014,
      message,
      data: { code: "device_in_use", message, retryable: true, details: { deviceId: "mock-1" } },
    });
    await a.call("session.end");
    expect((await b.call("session.start")).result.state).toBe("active");
  });

  test("a client dropped mid-action gets its action completed as cancelled, its Session ended and its lease released", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_MOCK_HANG: "execute" });
    const a = await RpcSocket.connect({ port: d.port });
    await a.hello();
    await a.call("device.connect");
    const sessionId = (await a.call("session.start")).result.id as string;
    void a.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 1, y: 1 } }).catch(() => {});
    const b = await RpcSocket.connect({ port: d.port });
    await b.hello();
    await eventsUntil("the action did not start", b, sessionId, (t) => t.includes("actionStarted"));
    a.terminate();
    const events = await eventsUntil("the dropped client's Session did not end", b, sessionId, (t) =>
      t.includes("sessionEnded"),
    );
    expect(events.map((e) => e.payload.type)).toEqual([
      "sessionStarted",
      "actionStarted",
      "actionCompleted",
      "sessionEnded",
    ]);
    expect(events[2]?.payload.outcome).toEqual({
      outcome: "cancelled",
      error: {
        code: "action_cancelled",
        message: "request was cancelled: Shutdown",
        retryable: false,
        details: { reason: "shutdown" },
      },
    });
    expect([events[3]?.payload.outcome, events[3]?.payload.reason]).toEqual(["shutdown", "RPC connection closed"]);
    // The device is free again for anyone.
    expect((await b.call("session.start")).result.state).toBe("active");
  });
});
