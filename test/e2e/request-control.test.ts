import { describe, expect, test } from "bun:test";
import { type DaemonProcess, type RpcResponse, spawnDaemon, tempDataDir } from "../support/daemon.ts";

const A = "0a6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
const B = "0b6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";

/** A daemon whose mock actions (or observations) hang until their request is cancelled or times out. */
async function hanging(hang: "execute" | "observe", dataDir = tempDataDir()) {
  const d = spawnDaemon({ env: { DEVICERAIL_MOCK_HANG: hang, DEVICERAIL_DATA_DIR: dataDir } });
  await d.hello();
  await d.call("device.connect");
  const sessionId = (await d.call("session.start")).result.id as string;
  return { d, sessionId };
}

/** Collects answers by id, whatever order they come back in. */
async function answers(d: DaemonProcess, n: number): Promise<Record<string, RpcResponse>> {
  const out: Record<string, RpcResponse> = {};
  for (let i = 0; i < n; i++) {
    const r = await d.next();
    out[String(r.id)] = r;
  }
  return out;
}

const tap = (id: string, extra: object = {}) => ({
  jsonrpc: "2.0",
  method: "device.execute",
  params: { id: id === "a" ? A : B, name: "tap", arguments: { x: 1, y: 1 } },
  id,
  ...extra,
});

describe("request control over stdio", () => {
  test("two concurrent actions: one cancelled, one timed out, each with exactly one terminal event", async () => {
    const { d, sessionId } = await hanging("execute");
    await using _ = d;
    d.send(tap("a"));
    d.send(tap("b", { timeoutMs: 300 }));
    d.send({ jsonrpc: "2.0", id: "busy", method: "session.end" });
    const busy = await d.next();
    expect(busy.error?.data).toEqual({
      code: "session_busy",
      message: `session ${sessionId} still has 2 action(s) in flight`,
      retryable: true,
      details: { inFlightActions: 2, sessionId },
    });
    d.send({ jsonrpc: "2.0", id: "a", method: "sessions.list", params: {} });
    expect((await d.next()).error?.data).toEqual({
      code: "request_id_in_use",
      message: "request id is already active on this connection",
      retryable: false,
      details: { requestId: "a" },
    });
    d.send({ jsonrpc: "2.0", id: "cancel", method: "request.cancel", params: { requestId: "a" } });
    const got = await answers(d, 3);
    expect(got.cancel?.result).toEqual({ requestId: "a", status: "requested" });
    expect(got.a?.error?.data).toEqual({
      code: "request_cancelled",
      message: "request was cancelled: Requested",
      retryable: false,
      details: { reason: "requested" },
    });
    expect(got.b?.error?.data).toEqual({
      code: "request_timed_out",
      message: "Request timed out after 300 ms",
      retryable: true,
      details: { scope: "request", timeoutMs: 300 },
    });
    const events = (await d.call("events.list", { sessionId })).result as any[];
    const completed = Object.fromEntries(
      events.filter((e) => e.payload.type === "actionCompleted").map((e) => [e.payload.callId, e]),
    );
    expect(
      events
        .filter((e) => e.payload.type === "actionStarted")
        .map((e) => e.payload.call.id)
        .sort(),
    ).toEqual([A, B]);
    expect(completed[A].requestId).toBe("a");
    expect(completed[A].payload.outcome).toEqual({
      outcome: "cancelled",
      error: {
        code: "action_cancelled",
        message: "request was cancelled: Requested",
        retryable: false,
        details: { reason: "requested" },
      },
    });
    expect(completed[B].payload.outcome).toEqual({
      outcome: "timedOut",
      error: {
        code: "action_timeout",
        message: "Request timed out after 300 ms",
        retryable: true,
        details: { scope: "request", timeoutMs: 300 },
      },
      timeoutMs: 300,
    });
    expect((await d.call("session.end")).result.state).toBe("ended");
  });

  test("the earlier deadline wins: actionTimeoutMs before timeoutMs is action_timed_out", async () => {
    const { d, sessionId } = await hanging("execute");
    await using _ = d;
    const r = await d.call(
      "device.execute",
      { id: A, name: "tap", arguments: { x: 1, y: 1 }, actionTimeoutMs: 100 },
      { timeoutMs: 5000 },
    );
    expect(r.error?.data).toEqual({
      code: "action_timed_out",
      message: "Action timed out after 100 ms",
      retryable: true,
      details: { scope: "action", timeoutMs: 100 },
    });
    const last = ((await d.call("events.list", { sessionId })).result as any[]).at(-1);
    expect(last.payload.outcome).toEqual({
      outcome: "timedOut",
      error: {
        code: "action_timeout",
        message: "Action timed out after 100 ms",
        retryable: true,
        details: { scope: "action", timeoutMs: 100 },
      },
      timeoutMs: 100,
    });
  });

  test("a cancelled observation answers request_cancelled and leaves an error event", async () => {
    const { d, sessionId } = await hanging("observe");
    await using _ = d;
    d.send({ jsonrpc: "2.0", id: "obs", method: "device.observe" });
    d.send({ jsonrpc: "2.0", id: "cancel", method: "request.cancel", params: { requestId: "obs" } });
    const got = await answers(d, 2);
    expect(got.obs?.error?.data.code).toBe("request_cancelled");
    const events = (await d.call("events.list", { sessionId })).result as any[];
    expect(events.map((e) => [e.payload.type, e.requestId])).toEqual([
      ["sessionStarted", 3],
      ["error", "obs"],
    ]);
    expect(events[1].payload.error).toEqual(got.obs?.error?.data);
  });

  test("SIGTERM after end of input cancels the action still in flight with reason shutdown and ends the Session", async () => {
    const dataDir = tempDataDir();
    let sessionId = "";
    {
      const h = await hanging("execute", dataDir);
      await using d = h.d;
      sessionId = h.sessionId;
      d.send(tap("a"));
      // The action is running once its actionStarted is in the log.
      for (let i = 0; i < 200; i++) {
        const events = (await d.call("events.list", { sessionId })).result as any[];
        if (events.some((e) => e.payload.type === "actionStarted")) break;
      }
      // End of input alone waits for the action (it has no deadline); the signal cancels it.
      d.proc.stdin.end();
      expect(await Promise.race([d.exited, Bun.sleep(300).then(() => "still running")])).toBe("still running");
      d.proc.kill("SIGTERM");
      const r = await d.next();
      expect(r).toEqual({
        jsonrpc: "2.0",
        id: "a",
        error: {
          code: -32007,
          message: "request was cancelled: Shutdown",
          data: {
            code: "request_cancelled",
            message: "request was cancelled: Shutdown",
            retryable: false,
            details: { reason: "shutdown" },
          },
        },
      });
      expect(await d.exited).toBe(0);
    }
    await using again = spawnDaemon({ env: { DEVICERAIL_DATA_DIR: dataDir } });
    await again.hello();
    const events = (await again.call("events.list", { sessionId })).result as any[];
    expect(events.map((e) => e.payload.type)).toEqual([
      "sessionStarted",
      "actionStarted",
      "actionCompleted",
      "sessionEnded",
    ]);
    expect(events[2].payload.outcome.error.details).toEqual({ reason: "shutdown" });
    expect(events[3].payload).toEqual({ type: "sessionEnded", outcome: "shutdown", reason: "daemon shutdown" });
  });
});
