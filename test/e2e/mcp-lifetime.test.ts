/**
 * How long an MCP client's work lives in the daemon: an action that overruns its budget, a call the
 * client cancels, and clients that go away over HTTP without saying goodbye. In each case the
 * Session ends and the device is freed, and nothing waits forever.
 */
import { describe, expect, test } from "bun:test";
import { call, errorOf, httpPeer, ownerAuth } from "../support/mcp-client.ts";
import { pollUntil } from "../support/wait.ts";
import { ROOT, daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const json = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, {
    ...init,
    headers: { ...(init?.headers as Record<string, string> | undefined), ...(owners.get(new URL(url).origin) ?? {}) },
  });
  return { status: r.status, body: (await r.json()) as any };
};
/** The owner's credential for the TCP port of a daemon `devicerail mcp` started (it requires the data directory's token). */
const owners = new Map<string, Record<string, string>>();
const sessionsOn = async (base: string) =>
  (await json(`${base}/sessions`)).body.sessions as {
    id: string;
    state: string;
    outcome: string | null;
    reason: string | null;
  }[];
const eventsOf = async (base: string, id: string) =>
  (await json(`${base}/sessions/${id}/events`)).body as { payload: any }[];

async function serve(env: Record<string, string> = {}): Promise<{ d: ServeDaemon; base: string } & AsyncDisposable> {
  const d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], env);
  return { d, base: `http://127.0.0.1:${d.port}`, [Symbol.asyncDispose]: () => d[Symbol.asyncDispose]() };
}

const MCP_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const rpc = (id: number | null, method: string, params: object = {}) =>
  JSON.stringify(id === null ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id, method, params });

describe("MCP tool calls that do not finish", () => {
  test("an action that outlasts DEVICERAIL_MCP_ACTION_TIMEOUT_MS fails with action_timed_out and says its outcome is unknown", async () => {
    await using s = await serve({ DEVICERAIL_MOCK_HANG: "execute", DEVICERAIL_MCP_ACTION_TIMEOUT_MS: "300" });
    await using peer = await httpPeer(s.base, s.d.dataDir);
    const r = errorOf(await call(peer, "tap", { deviceId: "mock-1", x: 10, y: 10 }));
    expect([r.isError, r.code, r.retryable, r.error.details]).toEqual([
      true,
      "action_timed_out",
      "true",
      { scope: "action", timeoutMs: 300 },
    ]);
    expect(r.text).toContain("outcome: unknown — tap may or may not have taken effect; observe before trying again");
  }, 30_000);

  test("a call the client cancels is cancelled in the daemon and recorded so", async () => {
    await using s = await serve({ DEVICERAIL_MOCK_HANG: "execute" });
    await using peer = await httpPeer(s.base, s.d.dataDir);
    const observed = await call(peer, "ui_tree", { deviceId: "mock-1" });
    const sessionId = observed.structuredContent.sessionId as string;
    // The SDK's client gives up after its timeout and sends notifications/cancelled.
    await expect(call(peer, "tap", { deviceId: "mock-1", x: 10, y: 10 }, { timeoutMs: 300 })).rejects.toThrow(
      /timed out/i,
    );
    const events = await pollUntil(
      "the tap recorded as cancelled",
      () => eventsOf(s.base, sessionId),
      (e) => e.some((x) => x.payload.type === "actionCompleted"),
      10_000,
    );
    expect(events.map((e) => [e.payload.type, e.payload.call?.name ?? e.payload.outcome?.outcome ?? null])).toEqual([
      ["sessionStarted", null],
      ["observationCaptured", null],
      ["actionStarted", "tap"],
      ["actionCompleted", "cancelled"],
    ]);
    // The Session goes on: the next call is served.
    expect((await call(peer, "ui_tree", { deviceId: "mock-1" })).isError).toBeUndefined();
  }, 30_000);
});

describe("MCP clients over HTTP that go without DELETE", () => {
  test("a client whose event stream closes is ended after the grace period and its device freed", async () => {
    await using s = await serve();
    const peer = await httpPeer(s.base, s.d.dataDir);
    const sessionId = (await call(peer, "tap", { deviceId: "mock-1", x: 10, y: 10 })).structuredContent
      .sessionId as string;
    expect((await sessionsOn(s.base)).find((x) => x.id === sessionId)?.state).toBe("active");
    const t0 = performance.now();
    // Closing the client drops its event stream without ending the MCP session (no DELETE).
    await peer.client.close();
    const ended = await pollUntil(
      "the Session ended",
      () => sessionsOn(s.base),
      (all) => all.find((x) => x.id === sessionId)?.state === "ended",
      15_000,
    );
    const ms = performance.now() - t0;
    console.log(`mcp http client gone (stream closed) → Session ended in ${ms.toFixed(0)} ms`);
    expect(ended.find((x) => x.id === sessionId)).toEqual(
      expect.objectContaining({ state: "ended", outcome: "shutdown", reason: "RPC connection closed" }),
    );
    expect(ms).toBeGreaterThan(4_000);
    expect(ms).toBeLessThan(8_000);
    const tap = await fetch(`${s.base}/devices/mock-1/actions/tap`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"x":1,"y":1}',
    });
    expect(tap.status).toBe(200);
  }, 30_000);

  test("a client that never opens an event stream is ended after DEVICERAIL_MCP_IDLE_MS of silence", async () => {
    await using s = await serve({ DEVICERAIL_MCP_IDLE_MS: "1000" });
    const init = await fetch(`${s.base}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: rpc(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bare", version: "1" },
      }),
    });
    expect(init.status).toBe(200);
    const sid = init.headers.get("mcp-session-id") as string;
    await init.text();
    const headers = { ...MCP_HEADERS, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18" };
    expect(
      (await fetch(`${s.base}/mcp`, { method: "POST", headers, body: rpc(null, "notifications/initialized") })).status,
    ).toBe(202);
    const tap = await fetch(`${s.base}/mcp`, {
      method: "POST",
      headers,
      body: rpc(2, "tools/call", { name: "tap", arguments: { deviceId: "mock-1", x: 5, y: 5 } }),
    });
    const text = await tap.text();
    const sessionId = /session ([0-9a-f-]{36})/.exec(text)?.[1] as string;
    expect(sessionId).toBeDefined();
    const t0 = performance.now();
    await pollUntil(
      "the Session ended",
      () => sessionsOn(s.base),
      (all) => all.find((x) => x.id === sessionId)?.state === "ended",
      10_000,
    );
    const ms = performance.now() - t0;
    expect(ms).toBeGreaterThan(700);
    expect(ms).toBeLessThan(4_000);
    // The MCP session is gone too: its id is no longer known.
    const after = await fetch(`${s.base}/mcp`, { method: "POST", headers, body: rpc(3, "tools/list") });
    expect([after.status, ((await after.json()) as any).error.code]).toEqual([404, -32001]);
  }, 30_000);

  test("requests without a session are refused in JSON-RPC form: GET needs one, a first POST must initialize", async () => {
    await using s = await serve();
    const get = await fetch(`${s.base}/mcp`, { headers: { Accept: "text/event-stream" } });
    expect([get.status, ((await get.json()) as any).error.code]).toEqual([400, -32000]);
    expect([get.headers.get("cache-control"), get.headers.get("x-content-type-options")]).toEqual([
      "no-store",
      "nosniff",
    ]);
    const notInit = await fetch(`${s.base}/mcp`, { method: "POST", headers: MCP_HEADERS, body: rpc(1, "tools/list") });
    expect(notInit.status).toBe(400);
    const bad = await fetch(`${s.base}/mcp`, { method: "POST", headers: MCP_HEADERS, body: "{not json" });
    expect([bad.status, ((await bad.json()) as any).error.code]).toEqual([400, -32700]);
    // None of them left an MCP session behind: a real client still initializes and works.
    await using peer = await httpPeer(s.base, s.d.dataDir);
    expect((await call(peer, "devices_list")).isError).toBeUndefined();
  }, 30_000);
});

describe("devicerail mcp fed by a pipe", () => {
  test("answers every request before it exits when stdin ends, and ends its Session as completed", async () => {
    const dataDir = tempDataDir();
    const lines = [
      rpc(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "pipe", version: "1" },
      }),
      rpc(null, "notifications/initialized"),
      rpc(2, "tools/call", { name: "ui_tree", arguments: { deviceId: "mock-1" } }),
      rpc(3, "tools/call", { name: "tap", arguments: { deviceId: "mock-1", x: 640, y: 148 } }),
    ];
    const proc = Bun.spawn(daemonCommand(["mcp"]), {
      cwd: ROOT,
      env: daemonEnv({ DEVICERAIL_DATA_DIR: dataDir }),
      stdin: new Blob([`${lines.join("\n")}\n`]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    // Requests run side by side, as a host may send them: answers come in the order they finish.
    const answers = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .sort((a, b) => a.id - b.id);
    expect(answers.map((a) => [a.id, a.result?.isError ?? false])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(answers[2].result.content[0].text).toMatch(/^tap at 640,148 on mock-1: ok \(tap, /);
    const sessionId = /session ([0-9a-f-]{36})/.exec(answers[1].result.content[0].text)?.[1];
    const { readRecord } = await import("../../src/server/daemon-record.ts");
    const base = `http://127.0.0.1:${readRecord(dataDir)?.port}`;
    owners.set(new URL(base).origin, ownerAuth(dataDir));
    const ended = await pollUntil(
      "the Session ended",
      () => sessionsOn(base),
      (all) => all.find((x) => x.id === sessionId)?.state === "ended",
      10_000,
    );
    expect(ended.find((x) => x.id === sessionId)).toEqual(expect.objectContaining({ outcome: "completed" }));
  }, 30_000);
});
