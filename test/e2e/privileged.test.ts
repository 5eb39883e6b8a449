/**
 * Privileged methods (docs/protocol/transport-and-framing.md#privileged-methods) against the real
 * daemon: refused on the JSON-RPC WebSocket and on HTTP requests a web page sent, served on TCP
 * NDJSON with the token and on the Unix socket.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorObject } from "../../src/protocol/errors.ts";
import type { Privileged } from "../../src/protocol/methods.ts";
import { ROOT, helloParams } from "../support/daemon.ts";
import { RpcSocket, ServeDaemon, within } from "./serve-daemon.ts";

const TOKEN = "privileged-test-token-0123456789";
const PAGE_ORIGIN = "http://127.0.0.1:9";

const refusal = (method: string, transport: string, privileged: Privileged) =>
  errorObject("method_not_permitted_on_transport", {
    arg: method,
    details: { method, transport, privileged, allowedTransports: ["stdio", "tcp", "unix"] },
  });

/** JSON-RPC over `GET /rpc`, as a program (not a browser) would open it: with the bearer token. */
class RpcWs {
  private readonly ws: WebSocket;
  private nextId = 1;
  private readonly waiting = new Map<unknown, (m: any) => void>();
  readonly opened: Promise<boolean>;

  constructor(port: number) {
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`, { headers: { Authorization: `Bearer ${TOKEN}` } } as any);
    this.ws.addEventListener("message", (e) => {
      const m = JSON.parse(String(e.data));
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
    });
    this.opened = new Promise((resolve) => {
      this.ws.addEventListener("open", () => resolve(true));
      this.ws.addEventListener("error", () => resolve(false));
    });
  }

  call(method: string, params?: unknown): Promise<any> {
    const id = this.nextId++;
    const answer = new Promise((resolve) => this.waiting.set(id, resolve));
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    return within(answer, 10_000, `no answer to ${method}`);
  }

  close(): void {
    this.ws.close();
  }
}

interface Caller {
  call(method: string, params?: unknown): Promise<any>;
}

const tap = () => ({ id: crypto.randomUUID(), name: "tap", arguments: { x: 1, y: 2 } });
const secret = () => ({ id: crypto.randomUUID(), name: "inputSecret", arguments: { secret: "hunter2-privileged" } });

/** One ended Session with a tap in it, recorded by `c`. */
async function recordSession(c: Caller): Promise<string> {
  await c.call("device.connect");
  const id = (await c.call("session.start")).result.id as string;
  expect((await c.call("device.execute", tap())).result.output).toEqual({ accepted: true, x: 1, y: 2 });
  expect((await c.call("session.end")).result.state).toBe("ended");
  return id;
}

async function serve(): Promise<{ d: ServeDaemon; socket: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-privileged-"));
  const socket = join(dir, "rpc.sock");
  const d = await ServeDaemon.start(["--listen", "127.0.0.1:0", "--socket", socket], {
    DEVICERAIL_TOKEN: TOKEN,
    DEVICERAIL_ALLOWED_ORIGINS: PAGE_ORIGIN,
  });
  return { d, socket, dir };
}

describe("privileged methods", () => {
  test("are refused with method_not_permitted_on_transport on the JSON-RPC WebSocket while other methods and its own Session's reads work", async () => {
    const { d, dir } = await serve();
    await using _ = d;
    try {
      const owner = await RpcSocket.connect({ port: d.port }, { tokenLine: TOKEN });
      await owner.hello();
      const other = await recordSession(owner);

      const ws = new RpcWs(d.port);
      expect(await ws.opened).toBe(true);
      expect((await ws.call("system.hello", helloParams())).result.transport).toEqual({
        kind: "webSocket",
        framing: "jsonMessage",
      });
      const refused = async (method: string, params?: unknown) => (await ws.call(method, params)).error;
      expect(await refused("events.clear", { sessionId: other })).toEqual(
        refusal("events.clear", "webSocket", "always"),
      );
      expect(await refused("sessions.list")).toEqual(refusal("sessions.list", "webSocket", "always"));
      expect(await refused("devicerail.sessions.list", { limit: 5 })).toEqual(
        refusal("devicerail.sessions.list", "webSocket", "always"),
      );
      expect(await refused("events.list", { sessionId: other })).toEqual(
        refusal("events.list", "webSocket", "otherSession"),
      );
      expect(await refused("session.export", { sessionId: other })).toEqual(
        refusal("session.export", "webSocket", "otherSession"),
      );
      // An id that names no Session is refused the same way: the socket learns nothing about which exist.
      expect(await refused("events.list", { sessionId: crypto.randomUUID() })).toEqual(
        refusal("events.list", "webSocket", "otherSession"),
      );

      // Not privileged: the device list, the socket's own Session and its reads, a standard action.
      expect((await ws.call("devices.list")).result.devices.map((x: { id: string }) => x.id)).toEqual(["mock-1"]);
      await ws.call("device.connect");
      const own = (await ws.call("session.start")).result.id as string;
      expect((await ws.call("device.execute", tap())).result.output).toEqual({ accepted: true, x: 1, y: 2 });
      expect(await refused("device.execute", secret())).toEqual(
        refusal("device.execute", "webSocket", "protectedAction"),
      );
      expect((await ws.call("events.list", { sessionId: own })).result.map((e: any) => e.payload.type)).toEqual([
        "sessionStarted",
        "actionStarted",
        "actionCompleted",
      ]);
      expect((await ws.call("events.list")).result).toHaveLength(3);
      expect((await ws.call("session.end")).result.state).toBe("ended");
      expect((await ws.call("session.export", { sessionId: own })).result.session.id).toBe(own);
      ws.close();

      // Nothing the refused calls named changed: the other Session is still there, the secret never ran.
      expect((await owner.call("events.list", { sessionId: other })).result).toHaveLength(4);
      expect((await owner.call("events.list", { sessionId: own })).result.map((e: any) => e.payload.type)).toEqual([
        "sessionStarted",
        "actionStarted",
        "actionCompleted",
        "sessionEnded",
      ]);
      owner.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("reproduces the golden not-permitted-on-websocket fixture when its request is sent over GET /rpc", async () => {
    const { d, dir } = await serve();
    await using _ = d;
    try {
      const fixture = (kind: string) =>
        JSON.parse(
          readFileSync(join(ROOT, `fixtures/protocol/events.clear/not-permitted-on-websocket.${kind}.json`), "utf8"),
        );
      const { jsonrpc: _v, id: _id, ...request } = fixture("request");
      const ws = new RpcWs(d.port);
      expect(await ws.opened).toBe(true);
      await ws.call("system.hello", helloParams());
      // RpcWs numbers its requests; the fixture's id is 1 and this is the socket's second request.
      expect({ ...(await ws.call(request.method, request.params)), id: 1 }).toEqual(fixture("response"));
      ws.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("run on TCP NDJSON with the token and on the Unix socket", async () => {
    const { d, socket, dir } = await serve();
    await using _ = d;
    try {
      for (const [target, transport] of [
        [{ port: d.port }, "tcp"],
        [{ unix: socket }, "unix"],
      ] as const) {
        const writer = await RpcSocket.connect(target, { tokenLine: TOKEN });
        expect((await writer.hello()).result.transport.kind).toBe(transport);
        const recorded = await recordSession(writer);
        await writer.call("session.start");
        expect((await writer.call("device.execute", secret())).result.output).toEqual({ accepted: true });
        await writer.call("session.end");
        writer.close();

        // A second connection of the same transport reads, exports and deletes what the first recorded.
        const reader = await RpcSocket.connect(target, { tokenLine: TOKEN });
        await reader.hello();
        expect((await reader.call("sessions.list")).result.map((s: { id: string }) => s.id)).toContain(recorded);
        expect(
          (await reader.call("devicerail.sessions.list")).result.sessions.map((s: { id: string }) => s.id),
        ).toContain(recorded);
        expect((await reader.call("events.list", { sessionId: recorded })).result).toHaveLength(4);
        expect((await reader.call("session.export", { sessionId: recorded })).result.session.id).toBe(recorded);
        expect((await reader.call("events.clear", { sessionId: recorded })).result).toEqual({
          deleted: true,
          sessionId: recorded,
        });
        reader.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("are refused on the HTTP routes that map to them when a web page sent the request, and served to a client without Origin", async () => {
    const { d, dir } = await serve();
    await using _ = d;
    try {
      const owner = await RpcSocket.connect({ port: d.port }, { tokenLine: TOKEN });
      await owner.hello();
      const recorded = await recordSession(owner);
      await owner.call("session.start");
      const observed = (await owner.call("device.observe")).result;
      await owner.call("session.end");
      const sha = observed.screenshot.sha256 as string;
      const base = `http://127.0.0.1:${d.port}`;
      const get = (path: string, page: boolean) =>
        fetch(`${base}${path}`, {
          headers: { Authorization: `Bearer ${TOKEN}`, ...(page ? { Origin: PAGE_ORIGIN } : {}) },
        });
      const answer = async (res: Response) => ({ status: res.status, error: ((await res.json()) as any).error });

      const cases: [string, string, Privileged][] = [
        ["/sessions", "devicerail.sessions.list", "always"],
        [`/sessions/${recorded}/events`, "events.list", "otherSession"],
        [`/sessions/${recorded}/export`, "session.export", "otherSession"],
        [`/evidence/${sha}`, "GET /evidence/{id}", "always"],
      ];
      for (const [path, method, privileged] of cases) {
        expect({ path, ...(await answer(await get(path, true))) }).toEqual({
          path,
          status: 403,
          error: refusal(method, "http", privileged),
        });
        expect({ path, status: (await get(path, false)).status }).toEqual({ path, status: 200 });
      }
      const report = await get(`/sessions/${recorded}/report`, true);
      expect({ status: report.status, code: ((await report.json()) as any).error.data.code }).toEqual({
        status: 403,
        code: "method_not_permitted_on_transport",
      });
      expect((await get(`/sessions/${recorded}/report`, false)).status).toBe(200);
      expect((await get("/devices", true)).status).toBe(200);

      const before = (await owner.call("sessions.list")).result.length;
      const post = (page: boolean) =>
        fetch(`${base}/devices/_/actions/inputSecret`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${TOKEN}`,
            "Content-Type": "application/json",
            ...(page ? { Origin: PAGE_ORIGIN } : {}),
          },
          body: JSON.stringify({ secret: "hunter2-privileged" }),
        });
      const fromPage = await post(true);
      expect({ ...(await answer(fromPage)), session: fromPage.headers.get("devicerail-session") }).toEqual({
        status: 403,
        error: refusal("device.execute", "http", "protectedAction"),
        session: null,
      });
      // Refused before a Session was started for it.
      expect((await owner.call("sessions.list")).result).toHaveLength(before);
      expect((await post(false)).status).toBe(200);
      owner.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
