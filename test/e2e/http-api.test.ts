import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

let d: ServeDaemon;
let rpc: RpcSocket;
let base: string;
const tmp = mkdtempSync(join(tmpdir(), "devicerail-http-test-"));

beforeAll(async () => {
  d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_MOCK_DEVICES: "2" });
  base = `http://127.0.0.1:${d.port}`;
  rpc = await RpcSocket.connect({ port: d.port });
  await rpc.hello();
});
afterAll(async () => {
  rpc.close();
  await d[Symbol.asyncDispose]();
  rmSync(tmp, { recursive: true, force: true });
});

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const get = (path: string) => fetch(`${base}${path}`, { headers: { Accept: "*/*" } });
const post = (path: string, body: string) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const events = async (sessionId: string) => (await rpc.call("events.list", { sessionId })).result as { payload: any }[];
const sessionEnd = async (sessionId: string) => (await events(sessionId)).at(-1)?.payload;
/** Every recorded Session's id, sorted. */
const sessionIds = async () => ((await rpc.call("sessions.list")).result as { id: string }[]).map((s) => s.id).sort();
/** The action names a device advertises, read over a socket connection of its own. */
async function actionNames(deviceId: string): Promise<string[]> {
  const c = await RpcSocket.connect({ port: d.port });
  try {
    await c.hello();
    await c.call("device.select", { deviceId });
    return ((await c.call("device.capabilities")).result as { name: string }[]).map((a) => a.name);
  } finally {
    c.close();
  }
}

/** curl as a person would type it; stdout, and the status from -w. */
async function curl(args: string[]): Promise<{ body: string; status: number }> {
  const p = Bun.spawn(["curl", "-s", "-w", "\n%{http_code}", ...args], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  expect(await p.exited).toBe(0);
  const nl = out.lastIndexOf("\n");
  return { body: out.slice(0, nl), status: Number(out.slice(nl + 1)) };
}

describe("the HTTP API", () => {
  test("GET /devices answers the devices.list result", async () => {
    const res = await get("/devices");
    expect([res.status, res.headers.get("content-type"), res.headers.get("cache-control")]).toEqual([
      200,
      "application/json",
      "no-store",
    ]);
    expect(await res.json()).toEqual((await rpc.call("devices.list")).result);
  });

  test("GET /devices/{id}/screenshot.png answers PNG bytes recorded in its own completed Session", async () => {
    const res = await get("/devices/mock-2/screenshot.png");
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "image/png"]);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 8)]).toEqual(PNG);
    const sessionId = res.headers.get("devicerail-session") as string;
    const log = await events(sessionId);
    expect(log.map((e) => e.payload.type)).toEqual(["sessionStarted", "observationCaptured", "sessionEnded"]);
    expect(log[1]?.payload.observation.deviceId).toBe("mock-2");
    expect(log[1]?.payload.observation.screenshot.sha256).toBe(
      new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
    );
    expect(log[2]?.payload.outcome).toBe("completed");
  });

  test("GET /devices/{id}/ui answers the UiSnapshot of a fresh observation", async () => {
    const res = await get("/devices/mock-1/ui");
    expect(res.status).toBe(200);
    const snapshot = (await res.json()) as { observationId: string; nodes: { role: string }[] };
    const log = await events(res.headers.get("devicerail-session") as string);
    expect(snapshot.observationId).toBe(log[1]?.payload.observation.id);
    expect(snapshot.nodes.length).toBe(log[1]?.payload.observation.uiSnapshot.nodeCount);
  });

  test("POST /devices/{id}/actions/{name} answers the ActionResult and records the action in its Session", async () => {
    const res = await post("/devices/mock-1/actions/tap", '{"x":10,"y":20.5}');
    expect(res.status).toBe(200);
    const text = await res.text();
    const result = JSON.parse(text);
    expect(result.output).toEqual({ accepted: true, x: 10, y: 20.5 });
    const log = await events(res.headers.get("devicerail-session") as string);
    expect(log.map((e) => e.payload.type)).toEqual([
      "sessionStarted",
      "actionStarted",
      "actionCompleted",
      "sessionEnded",
    ]);
    expect(log[1]?.payload.call.arguments).toEqual({ x: 10, y: 20.5 });
    expect(log[2]?.payload.outcome).toEqual({ outcome: "succeeded", result });
  });

  test("device errors carry the JSON-RPC error with a fitting status, and a started Session ends failed", async () => {
    const badArgs = await post("/devices/mock-1/actions/tap", '{"x":"left"}');
    expect([badArgs.status, ((await badArgs.json()) as any).error.data.code]).toEqual([400, "invalid_arguments"]);
    const ended = await sessionEnd(badArgs.headers.get("devicerail-session") as string);
    expect([ended.type, ended.outcome]).toEqual(["sessionEnded", "failed"]);
    const notJson = await post("/devices/mock-1/actions/tap", "{x:1}");
    expect([notJson.status, ((await notJson.json()) as any).error.data.code]).toEqual([400, "parse_error"]);
    const notObject = await post("/devices/mock-1/actions/tap", "[1,2]");
    expect([notObject.status, ((await notObject.json()) as any).error.data.code]).toEqual([400, "invalid_params"]);
    const noDevice = await get("/devices/nope/ui");
    expect([
      noDevice.status,
      ((await noDevice.json()) as any).error.data.code,
      noDevice.headers.get("devicerail-session"),
    ]).toEqual([404, "device_not_found", null]);
    // Two devices are registered, so `_` names none of them.
    const ambiguous = await get("/devices/_/screenshot.png");
    expect([ambiguous.status, ((await ambiguous.json()) as any).error.data.code]).toEqual([
      400,
      "device_selection_required",
    ]);
  });

  test("an unknown action answers 404 unknown_action listing the device's actions, with no Session started", async () => {
    const res = await post("/devices/mock-1/actions/fly", "{}");
    expect([res.status, res.headers.get("devicerail-session"), await res.json()]).toEqual([
      404,
      null,
      {
        error: {
          code: -32000,
          message: "unknown action: fly",
          data: {
            code: "unknown_action",
            message: "unknown action: fly",
            retryable: false,
            details: { action: "fly", availableActions: await actionNames("mock-1") },
          },
        },
      },
    ]);
  });

  test("requests refused before they reach a device record no Session, and each accepted one exactly one", async () => {
    const before = await sessionIds();
    const refused = [
      await post("/devices/mock-1/actions/tap", "{x:1}"),
      await post("/devices/mock-1/actions/tap", "[1,2]"),
      await post("/devices/mock-1/actions/tap", '"tap"'),
      await post("/devices/mock-1/actions/fly", '{"x":1}'),
      await post("/devices/nope/actions/tap", '{"x":1,"y":1}'),
      await get("/devices/nope/screenshot.png"),
      await get("/devices/_/ui"),
    ];
    expect(refused.map((r) => [r.status, r.headers.get("devicerail-session")])).toEqual([
      [400, null],
      [400, null],
      [400, null],
      [404, null],
      [404, null],
      [404, null],
      [400, null],
    ]);
    expect(await sessionIds()).toEqual(before);
    const accepted = [await post("/devices/mock-1/actions/tap", '{"x":1,"y":1}'), await get("/devices/mock-2/ui")];
    const named = accepted.map((r) => r.headers.get("devicerail-session") as string);
    expect(accepted.map((r) => r.status)).toEqual([200, 200]);
    expect(await sessionIds()).toEqual([...before, ...named].sort());
  });

  test("a device leased by a socket client's Session answers 409 device_in_use", async () => {
    const holder = await RpcSocket.connect({ port: d.port });
    await holder.hello();
    await holder.call("device.select", { deviceId: "mock-2" });
    await holder.call("device.connect");
    await holder.call("session.start");
    const res = await post("/devices/mock-2/actions/tap", '{"x":1,"y":1}');
    expect([res.status, ((await res.json()) as any).error.data]).toEqual([
      409,
      {
        code: "device_in_use",
        message: "device is leased by another owner: mock-2",
        retryable: true,
        details: { deviceId: "mock-2" },
      },
    ]);
    // Ended before the close, so later tests see no active Session whose duration still grows.
    await holder.call("session.end");
    holder.close();
  });

  test("a device whose holder ends its Session within 2 s is waited for, as on every surface (client/device-session.ts)", async () => {
    const holder = await RpcSocket.connect({ port: d.port });
    await holder.hello();
    await holder.call("device.select", { deviceId: "mock-2" });
    await holder.call("device.connect");
    const held = (await holder.call("session.start")).result as { id: string };
    const asked = post("/devices/mock-2/actions/tap", '{"x":1,"y":1}');
    await Bun.sleep(300);
    await holder.call("session.end");
    holder.close();
    const res = await asked;
    expect(res.status).toBe(200);
    expect(res.headers.get("devicerail-session")).not.toBe(held.id);
  });

  test("GET /sessions answers the devicerail.sessions.list result, newest first, with ?state= and ?limit=", async () => {
    const tap = await post("/devices/mock-1/actions/tap", '{"x":1,"y":2}');
    const id = tap.headers.get("devicerail-session") as string;
    const res = await get("/sessions");
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/json"]);
    const body = (await res.json()) as { sessions: any[] };
    expect(body).toEqual((await rpc.call("devicerail.sessions.list")).result);
    const { startedAtMs, endedAtMs } = (await rpc.call("session.export", { sessionId: id })).result.session;
    expect(body.sessions[0]).toEqual({
      id,
      state: "ended",
      startedAtMs,
      endedAtMs,
      eventCount: 4,
      lastSequence: 4,
      deviceId: "mock-1",
      durationMs: endedAtMs - startedAtMs,
      actions: 1,
      errors: 0,
      outcome: "completed",
      reason: null,
      verdict: null,
    });
    expect(await (await get("/sessions?limit=1")).json()).toEqual({ sessions: [body.sessions[0]] });
    expect(await (await get("/sessions?state=ended&limit=2")).json()).toEqual({ sessions: body.sessions.slice(0, 2) });
    expect(await (await get("/sessions?state=active")).json()).toEqual({ sessions: [] });
    for (const query of ["limit=ten", "limit=0", "state=deleted"]) {
      const bad = await get(`/sessions?${query}`);
      expect([query, bad.status, ((await bad.json()) as any).error.data.code]).toEqual([query, 400, "invalid_params"]);
    }
  });

  test("GET /sessions/{id}/events and /sessions/{id}/export answer what the JSON-RPC methods answer", async () => {
    const tap = await post("/devices/mock-1/actions/tap", '{"x":1,"y":2}');
    const id = tap.headers.get("devicerail-session") as string;
    expect(await (await get(`/sessions/${id}/events`)).json()).toEqual(
      (await rpc.call("events.list", { sessionId: id })).result,
    );
    expect(await (await get(`/sessions/${id}/events?afterSequence=1&limit=2`)).json()).toEqual(
      (await rpc.call("events.list", { sessionId: id, afterSequence: 1, limit: 2 })).result,
    );
    expect(await (await get(`/sessions/${id}/export`)).json()).toEqual(
      (await rpc.call("session.export", { sessionId: id })).result,
    );
    expect(await (await get(`/sessions/${id}/export?afterSequence=2&limit=1`)).json()).toEqual(
      (await rpc.call("session.export", { sessionId: id, afterSequence: 2, limit: 1 })).result,
    );
    const badLimit = await get(`/sessions/${id}/events?limit=ten`);
    expect([badLimit.status, ((await badLimit.json()) as any).error.data.code]).toEqual([400, "invalid_params"]);
    const missing = await get(`/sessions/${crypto.randomUUID()}/events`);
    expect([missing.status, ((await missing.json()) as any).error.data.code]).toEqual([404, "session_not_found"]);
  });

  test("GET /evidence/{sha256} answers the stored bytes with their media type, 404 when unknown", async () => {
    const res = await get("/devices/mock-1/ui");
    const observation = (await events(res.headers.get("devicerail-session") as string))[1]?.payload.observation;
    const png = await get(`/evidence/${observation.screenshot.sha256}`);
    expect([png.status, png.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect([...new Uint8Array(await png.arrayBuffer()).subarray(0, 8)]).toEqual(PNG);
    const tree = await get(`/evidence/${observation.uiSnapshot.evidence.sha256}`);
    expect([tree.status, tree.headers.get("content-type")]).toEqual([
      200,
      "application/vnd.devicerail.ui-tree+json;version=1",
    ]);
    expect(((await tree.json()) as { observationId: string }).observationId).toBe(observation.id);
    const unknown = await get(`/evidence/${"0".repeat(64)}`);
    expect([unknown.status, ((await unknown.json()) as any).error.data.code]).toEqual([404, "evidence_not_found"]);
    const malformed = await get("/evidence/..%2F..%2Fdevicerail.sqlite");
    expect([malformed.status, ((await malformed.json()) as any).error.data.code]).toEqual([
      400,
      "invalid_evidence_digest",
    ]);
  });

  test("GET /evidence/sha256:{hex} answers the same bytes, so an AssetRef id from a response works as it is", async () => {
    const res = await get("/devices/mock-1/ui");
    const observation = (await events(res.headers.get("devicerail-session") as string))[1]?.payload.observation;
    const { id, sha256 } = observation.screenshot as { id: string; sha256: string };
    expect(id).toBe(`sha256:${sha256}`);
    const bytes = new Uint8Array(await (await get(`/evidence/${sha256}`)).arrayBuffer());
    for (const path of [`/evidence/${id}`, `/evidence/${encodeURIComponent(id)}`]) {
      const named = await get(path);
      expect([path, named.status, named.headers.get("content-type")]).toEqual([path, 200, "image/png"]);
      expect(new Uint8Array(await named.arrayBuffer())).toEqual(bytes);
    }
    const unknown = await get(`/evidence/sha256:${"0".repeat(64)}`);
    expect([unknown.status, ((await unknown.json()) as any).error.data.code]).toEqual([404, "evidence_not_found"]);
    const malformed = await get("/evidence/sha256:nothex");
    expect([malformed.status, ((await malformed.json()) as any).error.data]).toEqual([
      400,
      {
        code: "invalid_evidence_digest",
        message: "evidence digest is invalid",
        retryable: false,
        details: { digest: "sha256:nothex" },
      },
    ]);
  });

  test("an unknown path answers 404 and a wrong method 405 with Allow", async () => {
    const nowhere = await get("/nowhere");
    expect([nowhere.status, ((await nowhere.json()) as any).error.data.code]).toEqual([404, "method_not_found"]);
    const wrong = await fetch(`${base}/devices`, { method: "DELETE" });
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "GET"]);
  });

  test.skipIf(!Bun.which("curl"))(
    "curl lists devices, saves a screenshot and taps as a person would type it",
    async () => {
      const listed = await curl([`${base}/devices`]);
      expect(listed.status).toBe(200);
      expect(JSON.parse(listed.body).devices.map((x: { id: string }) => x.id)).toEqual(["mock-1", "mock-2"]);
      const file = join(tmp, "shot.png");
      const shot = await curl(["-o", file, `${base}/devices/mock-1/screenshot.png`]);
      expect(shot.status).toBe(200);
      expect([...readFileSync(file).subarray(0, 8)]).toEqual(PNG);
      const tapped = await curl([
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        '{"x":5,"y":6}',
        `${base}/devices/mock-1/actions/tap`,
      ]);
      expect([tapped.status, JSON.parse(tapped.body).output]).toEqual([200, { accepted: true, x: 5, y: 6 }]);
      // curl's default form type is refused like a browser form's.
      expect((await curl(["-d", '{"x":5,"y":6}', `${base}/devices/mock-1/actions/tap`])).status).toBe(415);
    },
  );

  test("the daemon logged no error while serving these requests", () => {
    expect(d.stderr).not.toContain('"level":50');
  });
});
