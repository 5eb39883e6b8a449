/**
 * Peers that connect and never finish their handshake (idle sockets, HTTP requests whose headers
 * trickle in) are bounded apart from working connections: they can push out each other, never
 * lock out a client that says hello or sends a whole request.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type net from "node:net";
import { helloParams } from "../support/daemon.ts";
import { RawNdjsonPeer, connectRaw } from "../support/raw-peer.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

/** Connections that connect and then say nothing. */
async function idlePeers(port: number, n: number): Promise<net.Socket[]> {
  const out: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = await connectRaw({ port });
    s.on("error", () => {});
    out.push(s);
  }
  return out;
}

/** HTTP connections that send part of a request head and then one more header byte every 200 ms, never finishing. */
async function slowHeaderPeers(port: number, n: number): Promise<{ sockets: net.Socket[]; stop(): void }> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = await connectRaw({ port });
    s.on("error", () => {});
    s.write(`GET /devices HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
    sockets.push(s);
  }
  const timer = setInterval(() => {
    for (const s of sockets) if (!s.destroyed) s.write("a");
  }, 200);
  return { sockets, stop: () => clearInterval(timer) };
}

/** connect + hello + system.describe of a new NDJSON client, in ms. */
async function wellBehavedClient(port: number): Promise<{ ms: number; transport: unknown }> {
  const t0 = performance.now();
  const c = await RawNdjsonPeer.connect({ port });
  const hello = await c.call("system.hello", helloParams());
  const described = await c.call("system.describe");
  const ms = performance.now() - t0;
  expect(hello.result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
  c.end();
  return { ms, transport: described.result.connection.transport };
}

async function getDevices(port: number): Promise<{ ms: number; status: number; ids: string[] }> {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/devices`);
  const body = (await res.json()) as { devices: { id: string }[] };
  return { ms: performance.now() - t0, status: res.status, ids: body.devices.map((d) => d.id) };
}

const closedCount = (sockets: net.Socket[]) => sockets.filter((s) => s.destroyed || s.readableEnded).length;

describe("a flood of idle and slow peers", () => {
  test("never locks out a client: hello and GET /devices each answer within 1 s under 200 idle and 50 slow-header connections", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_LOG_LEVEL: "warn" });
    const idle = await idlePeers(d.port, 200);
    const slow = await slowHeaderPeers(d.port, 50);
    try {
      const client = await wellBehavedClient(d.port);
      const devices = await getDevices(d.port);
      console.log(
        `flood: connect + hello + describe ${client.ms.toFixed(1)} ms, GET /devices ${devices.ms.toFixed(1)} ms`,
      );
      expect(client.transport).toEqual({ kind: "tcp", framing: "ndjson" });
      expect(client.ms).toBeLessThan(1_000);
      expect([devices.status, devices.ids]).toEqual([200, ["mock-1"]]);
      expect(devices.ms).toBeLessThan(1_000);
      // The oldest pending peers made room, and the daemon said so.
      await d.stderrContains("TCP connections shed");
      expect(closedCount(idle)).toBeGreaterThan(100);
    } finally {
      slow.stop();
      for (const s of [...idle, ...slow.sockets]) s.destroy();
    }
  }, 60_000);

  test("a working connection is never shed when pending ones keep arriving", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const worker = await RawNdjsonPeer.connect({ port: d.port });
    await worker.call("system.hello", helloParams());
    const idle = await idlePeers(d.port, 300);
    try {
      expect((await worker.call("devices.list")).result.devices.map((x: { id: string }) => x.id)).toEqual(["mock-1"]);
      expect(worker.closed).toBe(false);
    } finally {
      for (const s of idle) s.destroy();
    }
  }, 60_000);

  test("pending connections are closed at the handshake deadline while a client that said hello stays", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_HANDSHAKE_TIMEOUT_MS: "500" });
    const worker = await RawNdjsonPeer.connect({ port: d.port });
    await worker.call("system.hello", helloParams());
    const [idle] = await idlePeers(d.port, 1);
    const slow = await slowHeaderPeers(d.port, 1);
    const halfLine = await RawNdjsonPeer.connect({ port: d.port });
    halfLine.socket.write('{"jsonrpc":"2.0","id":1,"method":"system.hel');
    try {
      const closed = (s: net.Socket) =>
        new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once("close", () => resolve())));
      const t0 = performance.now();
      await Promise.all([closed(idle as net.Socket), closed(slow.sockets[0] as net.Socket), closed(halfLine.socket)]);
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThan(300);
      expect(ms).toBeLessThan(5_000);
      expect((await worker.call("system.describe")).result.connection.transport).toEqual({
        kind: "tcp",
        framing: "ndjson",
      });
      await d.stderrContains("handshakeTimedOut");
    } finally {
      slow.stop();
    }
  }, 30_000);

  test("daemon memory stays bounded when 2,000 peers connect and never speak", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const pid = d.proc.pid;
    // Warm-up: the first connections allocate the buffers every later one reuses.
    for (const s of await idlePeers(d.port, 100)) s.destroy();
    const before = rssMiB(pid);
    let peak = before;
    for (let batch = 0; batch < 10; batch++) {
      const idle = await idlePeers(d.port, 200);
      peak = Math.max(peak, rssMiB(pid));
      for (const s of idle) s.destroy();
    }
    console.log(
      `flood memory: rss before ${before.toFixed(1)} MiB, peak over 2,000 idle connections ${peak.toFixed(1)} MiB`,
    );
    expect(peak - before).toBeLessThan(40);
    expect((await wellBehavedClient(d.port)).ms).toBeLessThan(1_000);
  }, 60_000);
});
