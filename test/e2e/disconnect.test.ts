/**
 * A client that dies never strands a phone: on every transport, a peer that resets its connection
 * at a random point of its work gets its in-flight calls cancelled, every started action exactly
 * one terminal actionCompleted, its Session ended (`shutdown`, `RPC connection closed`) and the
 * device free for the next client within a second.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { helloParams } from "../support/daemon.ts";
import { type PeerTarget, RawNdjsonPeer, RawWebSocket, connectRaw, reset } from "../support/raw-peer.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const ROUNDS = 50;
const FREE_WITHIN_MS = 1_000;

const roots: string[] = [];
afterAll(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const tap = () => ({ id: crypto.randomUUID(), name: "tap", arguments: { x: 1, y: 1 } });
/** Up to `ms` of the event loop's own time, so the reset lands at a different point each round. */
const jitter = async (ms: number) => {
  const until = performance.now() + Math.random() * ms;
  while (performance.now() < until) await new Promise<void>((r) => setImmediate(r));
};

/** What every victim can do: send a request, wait for some answers, die. */
interface Victim {
  send(method: string, params?: unknown): void;
  answers(count: number): Promise<unknown>;
  reset(): void;
}

const ndjsonVictim = async (target: PeerTarget): Promise<Victim> => {
  const p = await RawNdjsonPeer.connect(target);
  return { send: (m, params) => void p.send(m, params), answers: (n) => p.waitLines(n), reset: () => p.reset() };
};

const wsVictim = async (target: PeerTarget): Promise<Victim> => {
  const ws = await RawWebSocket.open(target, "/rpc");
  let id = 1;
  return {
    send: (method, params) =>
      ws.sendJson({ jsonrpc: "2.0", id: id++, method, ...(params === undefined ? {} : { params }) }),
    answers: (n) => ws.waitMessages(n),
    reset: () => ws.reset(),
  };
};

/**
 * A random stretch of a client's life before it dies: during or after its hello, while
 * session.start is running, with 1, 5 or 30 pipelined taps in flight, or while the daemon is
 * writing observations it never reads.
 */
async function play(v: Victim): Promise<string> {
  const point = Math.floor(Math.random() * 6);
  v.send("system.hello", helloParams());
  if (point === 0) return "during hello";
  await v.answers(1);
  if (point === 1) return "after hello";
  v.send("session.start");
  if (point === 2) return "during session.start";
  await v.answers(2);
  if (point === 3) return "after session.start";
  v.send("device.connect");
  await v.answers(3);
  if (point === 4) {
    const n = pick([1, 5, 30]);
    for (let i = 0; i < n; i++) v.send("device.execute", tap());
    if (Math.random() < 0.5) await v.answers(4);
    return `${n} taps in flight`;
  }
  for (let i = 0; i < 20; i++) v.send("device.observe");
  return "observations unread";
}

/** The checker: a well-behaved client on its own connection. */
class Checker {
  private readonly own = new Set<string>();
  private constructor(private readonly peer: RawNdjsonPeer) {}

  static async connect(target: PeerTarget): Promise<Checker> {
    const peer = await RawNdjsonPeer.connect(target);
    expect((await peer.call("system.hello", helloParams())).result).toBeDefined();
    return new Checker(peer);
  }

  async sessionIds(): Promise<Set<string>> {
    const list = (await this.peer.call("sessions.list")).result as { id: string }[];
    return new Set(list.map((s) => s.id));
  }

  /** Milliseconds until session.start succeeds (then the Session is ended again); throws past `limitMs`. */
  async leaseFreeAfter(t0: number, limitMs: number, what: string): Promise<number> {
    for (;;) {
      const r = await this.peer.call("session.start");
      if (r.result) {
        this.own.add(r.result.id);
        await this.peer.call("session.end");
        return performance.now() - t0;
      }
      expect(r.error.data.code).toBe("device_in_use");
      if (performance.now() - t0 > limitMs)
        throw new Error(`the device was still leased ${limitMs} ms after the client died (${what})`);
    }
  }

  /** Sessions that appeared since `before` and are not the checker's own. */
  async newSessions(before: Set<string>): Promise<{ id: string; state: string }[]> {
    const list = (await this.peer.call("sessions.list")).result as { id: string; state: string }[];
    return list.filter((s) => !before.has(s.id) && !this.own.has(s.id));
  }

  async events(sessionId: string): Promise<any[]> {
    return (await this.peer.call("events.list", { sessionId })).result;
  }

  end(): void {
    this.peer.end();
  }
}

/** Every started action completed exactly once, and the Session ended as the protocol says a closed connection ends it. */
async function expectCleanEnd(
  checker: Checker,
  sessionId: string,
  what: string,
  ends: "connectionClosed" | "any",
): Promise<void> {
  const events = await checker.events(sessionId);
  const started = events.filter((e) => e.payload.type === "actionStarted").map((e) => e.payload.call.id);
  const completed = events.filter((e) => e.payload.type === "actionCompleted").map((e) => e.payload.callId);
  expect({ what, completed: [...completed].sort() }).toEqual({ what, completed: [...started].sort() });
  const last = events.at(-1).payload;
  expect({ what, type: last.type }).toEqual({ what, type: "sessionEnded" });
  if (ends === "connectionClosed" || last.outcome === "shutdown")
    expect({ what, outcome: last.outcome, reason: last.reason }).toEqual({
      what,
      outcome: "shutdown",
      reason: "RPC connection closed",
    });
  // No call completes twice anywhere in the log.
  expect(new Set(completed).size).toBe(completed.length);
}

async function disconnectLoop(
  d: ServeDaemon,
  victimTarget: PeerTarget,
  open: (t: PeerTarget) => Promise<Victim>,
  label: string,
): Promise<number> {
  const checker = await Checker.connect({ port: d.port });
  let worst = 0;
  const seen = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const before = await checker.sessionIds();
    const victim = await open(victimTarget);
    const what = await play(victim);
    await jitter(3);
    victim.reset();
    const t0 = performance.now();
    worst = Math.max(worst, await checker.leaseFreeAfter(t0, FREE_WITHIN_MS, `${label} round ${round}, ${what}`));
    seen.set(what, (seen.get(what) ?? 0) + 1);
    for (const s of await checker.newSessions(before)) {
      expect({ round, what, state: s.state }).toEqual({ round, what, state: "ended" });
      await expectCleanEnd(checker, s.id, `${label} round ${round}, ${what}`, "connectionClosed");
    }
  }
  checker.end();
  console.log(
    `${label}: ${ROUNDS} rounds (${[...seen].map(([k, n]) => `${k} ×${n}`).join(", ")}), worst reset → free lease ${worst.toFixed(1)} ms`,
  );
  return worst;
}

const listenAndSocket = async () => {
  const root = mkdtempSync(join(tmpdir(), "devicerail-rst-"));
  roots.push(root);
  const socket = join(root, "run", "rpc.sock");
  const d = await ServeDaemon.start(["--listen", "127.0.0.1:0", "--socket", socket]);
  return { d, socket };
};

describe("a client that dies without closing", () => {
  test("frees its device within 1 s with every action completed once when a TCP client resets at random points", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    expect(await disconnectLoop(d, { port: d.port }, ndjsonVictim, "TCP")).toBeLessThan(FREE_WITHIN_MS);
  }, 120_000);

  test("frees its device within 1 s with every action completed once when a Unix socket client dies at random points", async () => {
    const { d, socket } = await listenAndSocket();
    await using _ = d;
    expect(await disconnectLoop(d, { unix: socket }, ndjsonVictim, "Unix socket")).toBeLessThan(FREE_WITHIN_MS);
  }, 120_000);

  test("frees its device within 1 s when a JSON-RPC WebSocket client resets without a Close frame", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    expect(await disconnectLoop(d, { port: d.port }, wsVictim, "WebSocket /rpc")).toBeLessThan(FREE_WITHIN_MS);
  }, 120_000);

  test("frees its device within 1 s when a JSON-RPC WebSocket client on the Unix socket dies without a Close frame", async () => {
    const { d, socket } = await listenAndSocket();
    await using _ = d;
    expect(await disconnectLoop(d, { unix: socket }, wsVictim, "WebSocket /rpc on the Unix socket")).toBeLessThan(
      FREE_WITHIN_MS,
    );
  }, 120_000);

  test("an HTTP client that resets mid-request leaves no Session active and its actions completed once", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const checker = await Checker.connect({ port: d.port });
    let worst = 0;
    const before = await checker.sessionIds();
    for (let round = 0; round < ROUNDS; round++) {
      const socket = await connectRaw({ port: d.port });
      socket.on("error", () => {});
      const [request, what] = pick([
        [
          `POST /devices/_/actions/tap HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"x":1,"y":1}\r\n`,
          "tap",
        ],
        [`GET /devices/_/screenshot.png HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\n\r\n`, "screenshot"],
        [`GET /devices/_/ui HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\n\r\n`, "ui"],
      ] as const);
      socket.write(request);
      await jitter(8);
      reset(socket);
      const t0 = performance.now();
      worst = Math.max(worst, await checker.leaseFreeAfter(t0, FREE_WITHIN_MS, `HTTP round ${round}, ${what}`));
    }
    // A request either finished (completed) or was cut off (shutdown, connection closed); none is left open.
    const sessions = await checker.newSessions(before);
    expect(sessions.filter((s) => s.state !== "ended")).toEqual([]);
    for (const s of sessions) await expectCleanEnd(checker, s.id, `HTTP Session ${s.id}`, "any");
    checker.end();
    console.log(
      `HTTP: ${ROUNDS} rounds (${sessions.length} Sessions), worst reset → free lease ${worst.toFixed(1)} ms`,
    );
    expect(worst).toBeLessThan(FREE_WITHIN_MS);
  }, 120_000);

  test("event WebSocket subscribers that reset give back their slots and leave the Session running", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const owner = await RawNdjsonPeer.connect({ port: d.port });
    expect((await owner.call("system.hello", helloParams())).result.features.enabled).toContain("events.stream.v1");
    await owner.call("device.connect");
    const sessionId = (await owner.call("session.start")).result.id as string;
    const subscribe = async () => {
      const { endpoint } = (await owner.call("events.stream.open", { sessionId, originPolicy: { kind: "absent" } }))
        .result as { endpoint: string };
      const url = new URL(endpoint);
      return RawWebSocket.open({ port: Number(url.port) }, url.pathname, {
        host: url.host,
        protocol: "devicerail.events.v1",
      });
    };
    const wsHello = {
      jsonrpc: "2.0",
      id: "h",
      method: "system.hello",
      params: helloParams({ min: 5, max: 5, required: ["events.stream.v1"], optional: [] }),
    };
    // More rounds than the plane has socket slots (32): a slot kept by a dead subscriber would refuse the later ones.
    for (let round = 0; round < ROUNDS; round++) {
      const ws = await subscribe();
      const point = Math.floor(Math.random() * 3);
      if (point > 0) {
        ws.sendJson(wsHello);
        await ws.waitMessages(1);
      }
      if (point > 1) {
        ws.sendJson({ jsonrpc: "2.0", id: "s", method: "events.subscribe", params: { sessionId } });
        // Live events are being written to it when it dies.
        for (let i = 0; i < 3; i++) owner.send("device.execute", tap());
      }
      await jitter(3);
      ws.reset();
    }
    // 32 live subscribers at once, each replaying the whole log: every slot came back.
    const all = await Promise.all(Array.from({ length: 32 }, () => subscribe()));
    for (const ws of all) {
      ws.sendJson(wsHello);
      ws.sendJson({ jsonrpc: "2.0", id: "s", method: "events.subscribe", params: { sessionId } });
    }
    const answers = await Promise.all(all.map((ws) => ws.waitMessages(2)));
    expect(answers.map((m) => m[1].result?.sessionId)).toEqual(all.map(() => sessionId));
    expect((await owner.call("session.current")).result).toEqual({ sessionId });
    expect((await owner.call("device.execute", tap())).result).toBeDefined();
    for (const ws of all) ws.reset();
  }, 120_000);
});
