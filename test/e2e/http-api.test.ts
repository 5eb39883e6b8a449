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
const post = (path: string, body: string) => fetch(`${base}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const events = async (sessionId: string) => (await rpc.call("events.list", { sessionId })).result as { payload: any }[];
const sessionEnd = async (sessionId: string) => (await events(sessionId)).at(-1)?.payload;

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
    expect([res.status, res.headers.get("content-type"), res.headers.get("cache-control")]).toEqual([200, "application/json", "no-store"]);
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
    expect(log[1]?.payload.observation.screenshot.sha256).toBe(new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
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
    expect(log.map((e) => e.payload.type)).toEqual(["sessionStarted", "actionStarted", "actionCompleted", "sessionEnded"]);
    expect(log[1]?.payload.call.arguments).toEqual({ x: 10, y: 20.5 });
    expect(log[2]?.payload.outcome).toEqual({ outcome: "succeeded", result });
  });

  test("device errors carry the JSON-RPC error with a fitting status, and a started Session ends failed", async () => {
    const unknown = await post("/devices/mock-1/actions/fly", "{}");
    const body = (await unknown.json()) as any;
    expect([unknown.status, body.error.code, body.error.data.code]).toEqual([404, -32000, "unknown_action"]);
    const ended = await sessionEnd(unknown.headers.get("devicerail-session") as string);
    expect([ended.type, ended.outcome]).toEqual(["sessionEnded", "failed"]);
    const badArgs = await post("/devices/mock-1/actions/tap", '{"x":"left"}');
    expect([badArgs.status, ((await badArgs.json()) as any).error.data.code]).toEqual([400, "invalid_arguments"]);
    const notJson = await post("/devices/mock-1/actions/tap", "{x:1}");
    expect([notJson.status, ((await notJson.json()) as any).error.data.code]).toEqual([400, "parse_error"]);
    const notObject = await post("/devices/mock-1/actions/tap", "[1,2]");
    expect([notObject.status, ((await notObject.json()) as any).error.data.code]).toEqual([400, "invalid_params"]);
    const noDevice = await get("/devices/nope/ui");
    expect([noDevice.status, ((await noDevice.json()) as any).error.data.code, noDevice.headers.get("devicerail-session")]).toEqual([404, "device_not_found", null]);
    // Two devices are registered, so `_` names none of them.
    const ambiguous = await get("/devices/_/screenshot.png");
    expect([ambiguous.status, ((await ambiguous.json()) as any).error.data.code]).toEqual([400, "device_selection_required"]);
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
      { code: "device_in_use", message: "device is leased by another owner: mock-2", retryable: true, details: { deviceId: "mock-2" } },
    ]);
    holder.close();
  });

  test("GET /sessions, /sessions/{id}/events and /sessions/{id}/export answer what the JSON-RPC methods answer", async () => {
    const tap = await post("/devices/mock-1/actions/tap", '{"x":1,"y":2}');
    const id = tap.headers.get("devicerail-session") as string;
    expect(await (await get("/sessions")).json()).toEqual((await rpc.call("sessions.list")).result);
    expect(await (await get(`/sessions/${id}/events`)).json()).toEqual((await rpc.call("events.list", { sessionId: id })).result);
    expect(await (await get(`/sessions/${id}/events?afterSequence=1&limit=2`)).json()).toEqual((await rpc.call("events.list", { sessionId: id, afterSequence: 1, limit: 2 })).result);
    expect(await (await get(`/sessions/${id}/export`)).json()).toEqual((await rpc.call("session.export", { sessionId: id })).result);
    expect(await (await get(`/sessions/${id}/export?afterSequence=2&limit=1`)).json()).toEqual((await rpc.call("session.export", { sessionId: id, afterSequence: 2, limit: 1 })).result);
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
    expect([tree.status, tree.headers.get("content-type")]).toEqual([200, "application/vnd.devicerail.ui-tree+json;version=1"]);
    expect(((await tree.json()) as { observationId: string }).observationId).toBe(observation.id);
    const unknown = await get(`/evidence/${"0".repeat(64)}`);
    expect([unknown.status, ((await unknown.json()) as any).error.data.code]).toEqual([404, "evidence_not_found"]);
    const malformed = await get("/evidence/..%2F..%2Fdevicerail.sqlite");
    expect([malformed.status, ((await malformed.json()) as any).error.data.code]).toEqual([400, "invalid_evidence_digest"]);
  });

  test("an unknown path answers 404 and a wrong method 405 with Allow", async () => {
    const nowhere = await get("/nowhere");
    expect([nowhere.status, ((await nowhere.json()) as any).error.data.code]).toEqual([404, "method_not_found"]);
    const wrong = await fetch(`${base}/devices`, { method: "DELETE" });
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "GET"]);
  });

  test.skipIf(!Bun.which("curl"))("curl lists devices, saves a screenshot and taps as a person would type it", async () => {
    const listed = await curl([`${base}/devices`]);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).devices.map((x: { id: string }) => x.id)).toEqual(["mock-1", "mock-2"]);
    const file = join(tmp, "shot.png");
    const shot = await curl(["-o", file, `${base}/devices/mock-1/screenshot.png`]);
    expect(shot.status).toBe(200);
    expect([...readFileSync(file).subarray(0, 8)]).toEqual(PNG);
    const tapped = await curl(["-X", "POST", "-H", "Content-Type: application/json", "-d", '{"x":5,"y":6}', `${base}/devices/mock-1/actions/tap`]);
    expect([tapped.status, JSON.parse(tapped.body).output]).toEqual([200, { accepted: true, x: 5, y: 6 }]);
    // curl's default form type is refused like a browser form's.
    expect((await curl(["-d", '{"x":5,"y":6}', `${base}/devices/mock-1/actions/tap`])).status).toBe(415);
  });

  test("the daemon logged no error while serving these requests", () => {
    expect(d.stderr).not.toContain('"level":50');
  });
});
