import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import * as v from "valibot";
import { TestEventSchema } from "../../src/protocol/types/event.ts";
import { ROOT, daemonCommand, daemonEnv, helloParams, tempDataDir } from "../support/daemon.ts";
import { TcpClient, listeningPort } from "../support/tcp-client.ts";

const ROUNDS = Number(process.env.DEVICERAIL_KILL_ROUNDS ?? 50);
const CLIENTS = 4;

/** What the daemon acknowledged: each must be on disk after any crash. */
interface Acked {
  sessions: Set<string>;
  verdicts: Map<string, { sessionId: string; event: unknown }>;
  /** Observation id → its Session and the digests of the evidence it references. */
  observations: Map<string, { sessionId: string; evidence: string[] }>;
  actions: Map<string, string>;
}

function startDaemon(dataDir: string) {
  return Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: daemonEnv({ DEVICERAIL_DATA_DIR: dataDir, DEVICERAIL_MOCK_DEVICES: String(CLIENTS) }),
  });
}

/** One client's Session: observations, taps and verdicts until the daemon disappears. */
async function load(port: number, index: number, round: number, acked: Acked): Promise<void> {
  let c: TcpClient;
  try {
    c = await TcpClient.connect(port);
    await c.call("system.hello", helloParams());
    await c.call("device.select", { deviceId: `mock-${index + 1}` });
    await c.call("device.connect");
    const start = await c.call("session.start");
    if (!start.result) throw new Error(`session.start failed: ${JSON.stringify(start.error)}`);
    const sessionId = start.result.id as string;
    acked.sessions.add(sessionId);
    for (let n = 0; ; n++) {
      const op = n % 3;
      if (op === 0) {
        const r = await c.call("verdict.record", {
          verdict: { status: "pass", summary: `round ${round} client ${index} step ${n}` },
        });
        if (r.result) acked.verdicts.set(r.result.event.eventId, { sessionId, event: r.result.event });
      } else if (op === 1) {
        const r = await c.call("device.observe");
        if (r.result)
          acked.observations.set(r.result.id, {
            sessionId,
            evidence: [r.result.screenshot?.sha256, r.result.uiSnapshot?.evidence.sha256].filter(
              (d) => typeof d === "string",
            ),
          });
      } else {
        const id = crypto.randomUUID();
        const r = await c.call("device.execute", { id, name: "tap", arguments: { x: n, y: index } });
        if (r.result) acked.actions.set(id, sessionId);
      }
    }
  } catch {
    // The daemon was killed: whatever was acknowledged before is what must survive.
  }
}

/** Checks every Session the daemon ever acknowledged against what it acknowledged. */
async function verify(port: number, acked: Acked, sessions: Iterable<string>): Promise<number> {
  const c = await TcpClient.connect(port);
  await c.call("system.hello", helloParams());
  let checked = 0;
  const digests = new Set<string>();
  for (const sessionId of sessions) {
    const r = await c.call("events.list", { sessionId });
    expect(r.error).toBeUndefined();
    const events = r.result as any[];
    for (const e of events) expect(v.safeParse(TestEventSchema, e).success).toBe(true);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]?.payload.type).toBe("sessionStarted");
    expect(events[events.length - 1]?.payload.type).toBe("sessionEnded");
    const started = events.filter((e) => e.payload.type === "actionStarted").map((e) => e.payload.call.id);
    const completed = events.filter((e) => e.payload.type === "actionCompleted").map((e) => e.payload.callId);
    expect(completed.sort()).toEqual(started.sort());
    const byId = new Map(events.map((e) => [e.eventId, e]));
    const observed = new Set(
      events.filter((e) => e.payload.type === "observationCaptured").map((e) => e.payload.observation.id),
    );
    for (const [eventId, v] of acked.verdicts)
      if (v.sessionId === sessionId) expect(byId.get(eventId)).toEqual(v.event);
    for (const [obsId, o] of acked.observations)
      if (o.sessionId === sessionId) {
        expect(observed.has(obsId)).toBe(true);
        for (const digest of o.evidence) digests.add(digest);
      }
    for (const [callId, s] of acked.actions) if (s === sessionId) expect(started.includes(callId)).toBe(true);
    checked += events.length;
  }
  c.close();
  // The bytes of every acknowledged observation's screenshot and UI tree, read back by digest.
  for (const digest of digests) {
    const res = await fetch(`http://127.0.0.1:${port}/evidence/${digest}`);
    expect(res.status).toBe(200);
    expect(new Bun.CryptoHasher("sha256").update(new Uint8Array(await res.arrayBuffer())).digest("hex")).toBe(digest);
  }
  return checked;
}

describe("durability under SIGKILL", () => {
  test(`every acknowledged event survives ${ROUNDS} kills at random moments`, async () => {
    const dataDir = tempDataDir();
    const acked: Acked = { sessions: new Set(), verdicts: new Map(), observations: new Map(), actions: new Map() };
    try {
      let previous: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const proc = startDaemon(dataDir);
        const port = await listeningPort(proc.stdout);
        await verify(port, acked, previous);
        const before = new Set(acked.sessions);
        const clients = Array.from({ length: CLIENTS }, (_, i) => load(port, i, round, acked));
        await Bun.sleep(40 + Math.floor(Math.random() * 260));
        proc.kill("SIGKILL");
        await proc.exited;
        await Promise.all(clients);
        previous = [...acked.sessions].filter((s) => !before.has(s));
      }
      const proc = startDaemon(dataDir);
      const port = await listeningPort(proc.stdout);
      const events = await verify(port, acked, acked.sessions);
      proc.kill("SIGTERM");
      await proc.exited;
      expect(acked.verdicts.size + acked.observations.size + acked.actions.size).toBeGreaterThan(ROUNDS * CLIENTS);
      process.stderr.write(
        `kill test: ${ROUNDS} rounds, ${acked.sessions.size} sessions, ${events} events verified (${acked.verdicts.size} verdicts, ${acked.observations.size} observations, ${acked.actions.size} actions acknowledged)\n`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
