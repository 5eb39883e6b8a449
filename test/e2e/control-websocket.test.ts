import { describe, expect, test } from "bun:test";
import { helloParams } from "../support/daemon.ts";
import { ALL_FEATURES } from "../support/hello.ts";
import { pollUntil } from "../support/wait.ts";
import { RpcSocket, ServeDaemon, rawExchange, statusOf, within } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];

/** JSON-RPC over the daemon's `GET /rpc` WebSocket: answers by id, binary and raw sends, the close. */
class RpcWs {
  private readonly ws: WebSocket;
  private nextId = 1;
  private readonly waiting = new Map<unknown, (m: any) => void>();
  readonly unmatched: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<boolean>;

  constructor(port: number) {
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
    this.ws.addEventListener("message", (e) => {
      const m = JSON.parse(String(e.data));
      const w = this.waiting.get(m.id);
      if (w) {
        this.waiting.delete(m.id);
        w(m);
      } else this.unmatched.push(m);
    });
    this.closed = new Promise((resolve) =>
      this.ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })),
    );
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

  sendRaw(data: string | Uint8Array): void {
    this.ws.send(data);
  }

  close(): void {
    this.ws.close();
  }
}

/** One masked client text frame (RFC 6455 §5.2). */
function frame(text: string): Uint8Array {
  const payload = new TextEncoder().encode(text);
  const n = payload.length;
  const head =
    n < 126
      ? [0x81, 0x80 | n]
      : n < 65_536
        ? [0x81, 0x80 | 126, n >> 8, n & 0xff]
        : [0x81, 0x80 | 127, 0, 0, 0, 0, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  const mask = [1, 2, 3, 4];
  const out = new Uint8Array(head.length + 4 + n);
  out.set(head);
  out.set(mask, head.length);
  for (let i = 0; i < n; i++) out[head.length + 4 + i] = (payload[i] as number) ^ (mask[i % 4] as number);
  return out;
}

describe("JSON-RPC over WebSocket (GET /rpc)", () => {
  test("each WebSocket is its own webSocket/jsonMessage connection that can run a whole Session", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const [a, b] = [new RpcWs(d.port), new RpcWs(d.port)];
    expect(await Promise.all([a.opened, b.opened])).toEqual([true, true]);
    const hello = await a.call("system.hello", helloParams({ optional: ALL_FEATURES }));
    expect(hello.result.transport).toEqual({ kind: "webSocket", framing: "jsonMessage" });
    expect(hello.result.features.enabled).not.toContain("events.stream.v1");
    expect((await b.call("system.describe")).error.data.code).toBe("handshake_required");
    await a.call("device.connect");
    const session = (await a.call("session.start")).result;
    expect((await a.call("device.observe")).result.deviceId).toBe("mock-1");
    expect(
      (await a.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 3, y: 4 } })).result
        .output,
    ).toEqual({ accepted: true, x: 3, y: 4 });
    expect((await a.call("session.end")).result).toMatchObject({ id: session.id, state: "ended" });
    a.close();
    b.close();
  });

  test("a binary message is answered with invalid_request and the connection keeps working", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const c = new RpcWs(d.port);
    await c.opened;
    await c.call("system.hello", helloParams());
    c.sendRaw(new Uint8Array([0x7b, 0x7d]));
    const message = "WebSocket application messages must be text JSON";
    expect((await c.call("devices.list")).result.devices.map((d: { id: string }) => d.id)).toEqual(["mock-1"]);
    expect(c.unmatched).toEqual([
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message, data: { code: "invalid_request", message, retryable: false, details: null } },
      },
    ]);
  });

  test("a message over 1 MiB closes the WebSocket with 1009", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const c = new RpcWs(d.port);
    await c.opened;
    c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"sessions.list","pad":"${"p".repeat(1_048_576)}"}`);
    expect((await within(c.closed, 10_000, "not closed")).code).toBe(1009);
  });

  test("closing the WebSocket ends its Session with RPC connection closed", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const c = new RpcWs(d.port);
    await c.opened;
    await c.call("system.hello", helloParams());
    await c.call("device.connect");
    const sessionId = (await c.call("session.start")).result.id;
    c.close();
    const watcher = await RpcSocket.connect({ port: d.port });
    await watcher.hello();
    const last = await pollUntil(
      "the Session did not end",
      async () => ((await watcher.call("events.list", { sessionId })).result as { payload: any }[]).at(-1)?.payload,
      (payload) => payload?.type === "sessionEnded",
    );
    expect([last.outcome, last.reason]).toEqual(["shutdown", "RPC connection closed"]);
    expect((await watcher.call("session.start")).result.state).toBe("active");
  });

  test("GET /rpc without an upgrade answers 426", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const res = await fetch(`http://127.0.0.1:${d.port}/rpc`);
    expect([res.status, res.headers.get("upgrade")]).toEqual([426, "websocket"]);
  });

  test("a client that never reads is disconnected instead of growing the daemon's queues, and others are unaffected", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const closed = Promise.withResolvers<void>();
    const upgraded = Promise.withResolvers<string>();
    let head = "";
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port: d.port,
      socket: {
        data: (_s, chunk) => {
          head += new TextDecoder().decode(chunk);
          if (head.includes("\r\n\r\n")) upgraded.resolve(head);
        },
        close: () => closed.resolve(),
        error: () => closed.resolve(),
      },
    });
    const key = btoa("devicerail-slow!");
    socket.write(
      `GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    expect(await within(upgraded.promise, 10_000, "no upgrade")).toStartWith("HTTP/1.1 101");
    // Every answer is ~200 kB (the client name is echoed), far more than the socket buffers hold.
    const hello = { ...helloParams(), client: { name: "n".repeat(200_000), version: "1" } };
    (socket as unknown as { pause(): void }).pause();
    const frames = [frame(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "system.hello", params: hello }))];
    for (let i = 1; i <= 600; i++) frames.push(frame(`{"jsonrpc":"2.0","id":${i},"method":"system.describe"}`));
    const bytes = Buffer.concat(frames);
    // 600 small requests fit the socket buffers at once; the answers are what cannot drain.
    expect(socket.write(bytes)).toBe(bytes.length);
    await d.stderrContains("the client is not reading");
    (socket as unknown as { resume(): void }).resume();
    await within(closed.promise, 10_000, "the slow client was not disconnected");
    const other = await RpcSocket.connect({ port: d.port });
    expect((await other.hello()).result.transport.kind).toBe("tcp");
    expect(
      statusOf(
        await rawExchange(d.port, `GET /devices HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nConnection: close\r\n\r\n`),
      ),
    ).toBe(200);
  }, 30_000);

  test("SIGTERM closes open WebSockets with 1001 and the daemon exits 0", async () => {
    const d = await ServeDaemon.start(LISTEN);
    const c = new RpcWs(d.port);
    await c.opened;
    await c.call("system.hello", helloParams());
    d.proc.kill("SIGTERM");
    expect(await within(c.closed, 10_000, "not closed")).toEqual({ code: 1001, reason: "daemon shutdown" });
    expect(await d.exited).toBe(0);
    await d[Symbol.asyncDispose]();
  });
});
