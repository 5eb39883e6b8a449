import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, type RpcResponse, helloParams, spawnDaemon } from "../support/daemon.ts";
import { RpcSocket, ServeDaemon, type Target, within } from "./serve-daemon.ts";

const SUBPROTOCOL = "devicerail.events.v1";
const fixture = (path: string) => JSON.parse(readFileSync(join(ROOT, "fixtures/protocol", path), "utf8"));

/** A WebSocket client that keeps every message, in order. */
class Socket {
  readonly messages: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: WebSocket;
  private isClosed = false;
  /** Woken by every message and by the close. */
  private waiters: (() => void)[] = [];

  constructor(url: string, headers?: Record<string, string>) {
    this.ws = new WebSocket(url, { protocols: [SUBPROTOCOL], headers } as never);
    this.ws.addEventListener("message", (e) => {
      this.messages.push(JSON.parse(String(e.data)));
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      this.ws.addEventListener("close", (e) => {
        this.isClosed = true;
        this.wake();
        resolve({ code: e.code, reason: e.reason });
      }),
    );
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  opened(): Promise<boolean> {
    return new Promise((resolve) => {
      this.ws.addEventListener("open", () => resolve(true));
      this.ws.addEventListener("error", () => resolve(false));
    });
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  /** Waits until `count` messages have arrived (or the socket closed). */
  async atLeast(count: number): Promise<any[]> {
    while (this.messages.length < count && !this.isClosed) await new Promise<void>((r) => this.waiters.push(r));
    return this.messages;
  }

  close(): void {
    this.ws.close();
  }
}

/** The control connection that opens streams: what the tests need of it, on any transport. */
type Control = { call(method: string, params?: unknown): Promise<RpcResponse>; [Symbol.asyncDispose](): Promise<void> };

/** A `serve` daemon and one NDJSON client on its TCP port or Unix socket. */
async function socketControl(args: string[], target: (d: ServeDaemon) => Target): Promise<Control> {
  const d = await ServeDaemon.start(args);
  const c = await RpcSocket.connect(target(d));
  return {
    call: (method, params) => c.call(method, params),
    async [Symbol.asyncDispose]() {
      c.close();
      await d[Symbol.asyncDispose]();
    },
  };
}

/** events.stream.v1 is served alike to stdio, TCP and Unix socket control connections. */
const CONTROLS: [string, () => Promise<Control>][] = [
  ["stdio", async () => spawnDaemon()],
  ["TCP", () => socketControl(["--listen", "127.0.0.1:0"], (d) => ({ port: d.port }))],
  [
    "a Unix socket",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "devicerail-es-"));
      roots.push(dir);
      const path = join(dir, "run", "rpc.sock");
      return socketControl(["--socket", path], () => ({ unix: path }));
    },
  ],
];

const roots: string[] = [];
afterAll(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

async function session(d: Control): Promise<string> {
  await d.call("system.hello", helloParams());
  await d.call("device.connect");
  return (await d.call("session.start")).result.id as string;
}

const open = async (d: Control, sessionId: string, originPolicy: object = { kind: "absent" }) =>
  (await d.call("events.stream.open", { sessionId, originPolicy })).result as {
    endpoint: string;
    streamEpoch: string;
    expiresAtMs: number;
  };

const wsHello = (minor = 5) => ({
  jsonrpc: "2.0",
  id: "ws-hello-1",
  method: "system.hello",
  params: helloParams({ min: minor, max: minor, required: ["events.stream.v1"], optional: [] }),
});

/** Opens a stream, does the socket's hello and subscribe; returns the socket after the subscribe answer. */
async function subscribed(d: Control, sessionId: string, params: object = { sessionId }) {
  const { endpoint, streamEpoch } = await open(d, sessionId);
  const ws = new Socket(endpoint);
  expect(await ws.opened()).toBe(true);
  ws.send(wsHello());
  ws.send({ jsonrpc: "2.0", id: "sub", method: "events.subscribe", params });
  await ws.atLeast(2);
  return { ws, streamEpoch, endpoint };
}

const events = (ws: Socket) => ws.messages.filter((m) => m.method === "events.stream.event").map((m) => m.params);

for (const [transport, start] of CONTROLS)
  describe(`the event WebSocket over the real daemon (control connection on ${transport})`, () => {
    test("answers the fixtures' hello and subscribe, then replays and tails live with no gap and no duplicate", async () => {
      await using d = await start();
      const sessionId = await session(d);
      await d.call("device.observe");
      const { endpoint, streamEpoch } = await open(d, sessionId);
      expect(endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v\/[0-9a-f]{64}$/);
      const ws = new Socket(endpoint);
      expect(await ws.opened()).toBe(true);
      // The recorded requests of fixtures/protocol, sent as they are.
      const helloFixture = fixture("system.hello/websocket.request.json");
      ws.send(helloFixture);
      ws.send({ ...fixture("events.subscribe/default.request.json"), params: { sessionId } });
      const [hello, sub] = await ws.atLeast(2);
      const expectedHello = fixture("system.hello/websocket.response.json");
      expect({
        ...hello,
        result: { ...hello.result, connectionId: "x", server: { ...hello.result.server, version: "v" } },
      }).toEqual({
        ...expectedHello,
        result: {
          ...expectedHello.result,
          connectionId: "x",
          server: { ...expectedHello.result.server, version: "v" },
        },
      });
      expect(sub).toEqual({
        jsonrpc: "2.0",
        id: "ws-subscribe-1",
        result: {
          subscriptionId: expect.any(String),
          sessionId,
          replayThrough: { streamEpoch, sessionId, sequence: 2 },
          sessionState: "active",
        },
      });
      // Live: one action (started + completed), then the end of the Session.
      await d.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 1, y: 1 } });
      await d.call("session.end");
      expect(await ws.closed).toEqual({ code: 1000, reason: "stream terminal" });
      const seen = events(ws);
      expect(seen.map((p) => [p.cursor.sequence, p.event.sequence, p.event.payload.type])).toEqual([
        [1, 1, "sessionStarted"],
        [2, 2, "observationCaptured"],
        [3, 3, "actionStarted"],
        [4, 4, "actionCompleted"],
        [5, 5, "sessionEnded"],
      ]);
      expect(
        seen.every(
          (p) =>
            p.subscriptionId === sub.result.subscriptionId &&
            p.cursor.streamEpoch === streamEpoch &&
            p.cursor.sessionId === sessionId,
        ),
      ).toBe(true);
      expect(ws.messages.at(-1)).toEqual({
        jsonrpc: "2.0",
        method: "events.stream.terminal",
        params: {
          subscriptionId: sub.result.subscriptionId,
          sessionId,
          lastEmittedCursor: { streamEpoch, sessionId, sequence: 5 },
          termination: { reason: "sessionEnded" },
        },
      });
      // The same events as events.list, byte for byte in value.
      expect(seen.map((p) => p.event)).toEqual((await d.call("events.list", { sessionId })).result);
    });

    test("resumes after a cursor without repeating what the client confirmed", async () => {
      await using d = await start();
      const sessionId = await session(d);
      for (let i = 0; i < 3; i++) await d.call("device.observe");
      const first = await subscribed(d, sessionId);
      await first.ws.atLeast(6);
      const confirmed = events(first.ws)[2].cursor;
      first.ws.close();
      const second = await subscribed(d, sessionId, { sessionId, afterCursor: confirmed });
      await second.ws.atLeast(3);
      expect(events(second.ws).map((p) => p.event.sequence)).toEqual([4]);
      expect(second.ws.messages[1].result.replayThrough).toEqual({
        streamEpoch: confirmed.streamEpoch,
        sessionId,
        sequence: 4,
      });
    });

    test("refuses a used capability, a wrong Origin without burning the capability, and a wrong subprotocol", async () => {
      await using d = await start();
      const sessionId = await session(d);
      const { endpoint } = await open(d, sessionId);
      expect(await new Socket(endpoint, { Origin: "http://evil.example" }).opened()).toBe(false);
      const ok = new Socket(endpoint);
      expect(await ok.opened()).toBe(true);
      expect(await new Socket(endpoint).opened()).toBe(false);
      const exact = await open(d, sessionId, { kind: "exact", origin: "http://127.0.0.1:5173" });
      expect(await new Socket(exact.endpoint).opened()).toBe(false);
      expect(await new Socket(exact.endpoint, { Origin: "http://127.0.0.1:5173" }).opened()).toBe(true);
      const wrongProtocol = await open(d, sessionId);
      const ws = new WebSocket(wrongProtocol.endpoint, ["something.else"]);
      expect(await new Promise((r) => (ws.onopen = () => r(true)) && (ws.onerror = () => r(false)))).toBe(false);
    });

    test("rejects a cursor of another Session, of another daemon lifetime and ahead of the log, with the socket closed 1008", async () => {
      await using d = await start();
      const sessionId = await session(d);
      const other = "3f0c6b1e-8a2d-4c5b-9e7f-1a2b3c4d5e6f";
      const epochMismatch = fixture("events.subscribe/cursor-epoch-mismatch.request.json");
      const cases: [object, string][] = [
        [{ sessionId: other }, "stream_cursor_session_mismatch"],
        [
          { sessionId, afterCursor: { ...epochMismatch.params.afterCursor, sessionId } },
          "stream_cursor_epoch_mismatch",
        ],
      ];
      for (const [params, code] of cases) {
        const { ws } = await subscribed(d, sessionId, params);
        expect([ws.messages[1].error.data.code, await ws.closed]).toEqual([
          code,
          { code: 1008, reason: "subscribe rejected" },
        ]);
      }
      const { streamEpoch } = await open(d, sessionId);
      const { ws } = await subscribed(d, sessionId, {
        sessionId,
        afterCursor: { streamEpoch, sessionId, sequence: 99 },
      });
      expect(ws.messages[1].error.data).toEqual({
        code: "stream_cursor_ahead",
        message: "event cursor is ahead of the Session head",
        retryable: false,
        details: { afterSequence: 99, lastSequence: 1 },
      });
    });

    test("stops before an event the socket's protocol minor cannot carry, never skipping it", async () => {
      await using d = await start();
      const sessionId = await session(d);
      // With UI snapshots negotiated, the observation needs protocol 1.5.
      await d.call("device.observe");
      const { endpoint } = await open(d, sessionId);
      const ws = new Socket(endpoint);
      expect(await ws.opened()).toBe(true);
      ws.send(wsHello(3));
      ws.send({ jsonrpc: "2.0", id: "sub", method: "events.subscribe", params: { sessionId } });
      expect(await ws.closed).toEqual({ code: 1000, reason: "stream terminal" });
      expect(events(ws).map((p) => p.event.sequence)).toEqual([1]);
      expect(ws.messages.at(-1).params.termination).toEqual({
        reason: "internalError",
        error: {
          code: "stream_event_protocol_incompatible",
          message: "an event requires a newer negotiated protocol version",
          retryable: false,
          details: { requiredProtocol: { major: 1, minor: 5 }, selectedProtocol: { major: 1, minor: 3 }, sequence: 2 },
        },
      });
    });

    test("closes 1002 when the first message is not a hello, and ends an ended Session's stream at once", async () => {
      await using d = await start();
      const sessionId = await session(d);
      const { endpoint } = await open(d, sessionId);
      const bad = new Socket(endpoint);
      expect(await bad.opened()).toBe(true);
      bad.send({ jsonrpc: "2.0", id: 1, method: "events.subscribe", params: { sessionId } });
      expect([(await bad.atLeast(1))[0].error.data.code, await bad.closed]).toEqual([
        "handshake_required",
        { code: 1002, reason: "hello rejected" },
      ]);
      await d.call("session.end");
      const { ws } = await subscribed(d, sessionId, { sessionId });
      expect(await ws.closed).toEqual({ code: 1000, reason: "stream terminal" });
      expect(events(ws).map((p) => p.event.payload.type)).toEqual(["sessionStarted", "sessionEnded"]);
    });
  });

/** A WebSocket client on a raw TCP socket that does the handshake and then reads only when told. */
async function rawSubscriber(endpoint: string, sessionId: string) {
  const url = new URL(endpoint);
  const chunks: Uint8Array[] = [];
  let reading = false;
  let headRead = false;
  const upgraded = Promise.withResolvers<void>();
  /** Settles once the server's Close frame is in (or the connection ended without one). */
  const ended = Promise.withResolvers<void>();
  const sock = await Bun.connect({
    hostname: url.hostname,
    port: Number(url.port),
    socket: {
      data(s, data) {
        chunks.push(new Uint8Array(data));
        if (reading) {
          if (closedFrame(chunks)) ended.resolve();
          return;
        }
        // The response head is read whole; after it, nothing until drain().
        if (!headRead && new TextDecoder().decode(Bun.concatArrayBuffers(chunks)).includes("\r\n\r\n")) {
          headRead = true;
          upgraded.resolve();
        }
        if (headRead) s.pause?.();
      },
      close: () => ended.resolve(),
      error: () => ended.resolve(),
    },
  });
  const mask = (payload: Uint8Array) => {
    const key = crypto.getRandomValues(new Uint8Array(4));
    const len = payload.length;
    const head = len < 126 ? [0x81, 0x80 | len] : [0x81, 0x80 | 126, len >> 8, len & 255];
    const out = new Uint8Array(head.length + 4 + len);
    out.set(head);
    out.set(key, head.length);
    for (let i = 0; i < len; i++) out[head.length + 4 + i] = (payload[i] as number) ^ (key[i % 4] as number);
    return out;
  };
  sock.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${SUBPROTOCOL}\r\n\r\n`,
  );
  const text = (m: unknown) => mask(new TextEncoder().encode(JSON.stringify(m)));
  await within(upgraded.promise, 10_000, "no upgrade response");
  sock.write(text(wsHello()));
  sock.write(text({ jsonrpc: "2.0", id: "sub", method: "events.subscribe", params: { sessionId } }));
  return {
    /** Starts reading and returns the text messages received once the server closed. */
    async drain(): Promise<any[]> {
      reading = true;
      if (closedFrame(chunks)) ended.resolve();
      sock.resume?.();
      await within(ended.promise, 5_000, "no Close frame");
      sock.end();
      return framesOf(chunks);
    },
  };
}

/** Text messages of the server's (unmasked) frames after the HTTP response head. */
function framesOf(chunks: Uint8Array[]): any[] {
  const all = Bun.concatArrayBuffers(chunks, Infinity, true);
  let at = new TextDecoder().decode(all.subarray(0, 4096)).indexOf("\r\n\r\n") + 4;
  const out: any[] = [];
  while (at + 2 <= all.length) {
    const op = (all[at] as number) & 15;
    let len = (all[at + 1] as number) & 127;
    let head = 2;
    if (len === 126) (len = ((all[at + 2] as number) << 8) | (all[at + 3] as number)), (head = 4);
    else if (len === 127)
      (len = Number(new DataView(all.buffer, all.byteOffset + at + 2, 8).getBigUint64(0))), (head = 10);
    if (at + head + len > all.length) break;
    if (op === 1) out.push(JSON.parse(new TextDecoder().decode(all.subarray(at + head, at + head + len))));
    if (op === 8) out.push({ close: ((all[at + head] as number) << 8) | (all[at + head + 1] as number) });
    at += head + len;
  }
  return out;
}

const closedFrame = (chunks: Uint8Array[]) => framesOf(chunks).some((m) => "close" in m);

describe("a subscriber that stops reading", () => {
  test("gets a slowConsumer terminal after the bounded queue stalls, while appends go on", async () => {
    await using d = spawnDaemon();
    const sessionId = await session(d);
    const { endpoint } = await open(d, sessionId);
    const slow = await rawSubscriber(endpoint, sessionId);
    // Big events: each inputText call records its 60 KB argument verbatim.
    const text = "x".repeat(60_000);
    const started = Date.now();
    for (let i = 0; i < 200; i++)
      expect(
        (await d.call("device.execute", { id: crypto.randomUUID(), name: "inputText", arguments: { text } })).error,
      ).toBeUndefined();
    const appendMs = Date.now() - started;
    // The subscriber deliberately reads nothing past the daemon's 2 s stall limit: it gets no signal
    // of the terminal until it reads, and reading earlier would drain the queue instead.
    await Bun.sleep(2_500);
    const frames = await slow.drain();
    const terminal = frames.find((m) => m.method === "events.stream.terminal");
    expect(terminal?.params.termination).toEqual({
      reason: "slowConsumer",
      error: {
        code: "stream_slow_consumer",
        message: "subscriber exceeded its bounded queue",
        retryable: true,
        details: null,
      },
    });
    const delivered = frames.filter((m) => m.method === "events.stream.event").map((m) => m.params.event.sequence);
    // What was sent is a gap-free prefix, and the terminal names its end.
    expect(delivered).toEqual(delivered.map((_, i) => i + 1));
    expect(terminal.params.lastEmittedCursor.sequence).toBe(delivered.at(-1) as number);
    expect(delivered.length).toBeLessThan(401);
    expect(frames.at(-1)).toEqual({ close: 1000 });
    // The log never waited for the subscriber: 401 events were appended and acknowledged.
    expect((await d.call("session.current")).result.sessionId).toBe(sessionId);
    expect(appendMs).toBeLessThan(20_000);
  }, 40_000);
});
