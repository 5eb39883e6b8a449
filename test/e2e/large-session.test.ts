/**
 * Reading a Session larger than one answer (1 MiB) over HTTP: the events route says how to page,
 * the export and the live report are written out whole, page by page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestEvent } from "../../src/protocol/types/event.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

const VERDICTS = 200;
const SUMMARY = 16_000;

let d: ServeDaemon;
let base: string;
let ended: string;
let active: string;
let holder: RpcSocket;

/** A Session on its own connection: an observation, then VERDICTS verdicts of SUMMARY characters (about 3 MB). */
async function record(deviceId: string): Promise<{ rpc: RpcSocket; sessionId: string }> {
  const rpc = await RpcSocket.connect({ port: d.port });
  await rpc.hello();
  expect((await rpc.call("device.select", { deviceId })).error).toBeUndefined();
  await rpc.call("device.connect");
  const sessionId = (await rpc.call("session.start")).result.id as string;
  expect((await rpc.call("device.observe")).error).toBeUndefined();
  const answers = Array.from({ length: VERDICTS }, (_, i) =>
    rpc.call("verdict.record", {
      verdict: { status: i % 7 ? "pass" : "fail", summary: `${i} ${"v".repeat(SUMMARY)}`, evidence: [] },
    }),
  );
  for (const a of await Promise.all(answers)) expect(a.error).toBeUndefined();
  return { rpc, sessionId };
}

beforeAll(async () => {
  d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_MOCK_DEVICES: "2" });
  base = `http://127.0.0.1:${d.port}`;
  const devices = ((await (await fetch(`${base}/devices`)).json()) as { devices: { id: string }[] }).devices.map(
    (x) => x.id,
  );
  const a = await record(devices[0] as string);
  await a.rpc.call("session.end", { outcome: "completed" });
  a.rpc.close();
  ended = a.sessionId;
  const b = await record(devices[1] as string);
  holder = b.rpc;
  active = b.sessionId;
}, 60_000);

afterAll(async () => {
  holder?.close();
  await d?.[Symbol.asyncDispose]();
});

const sequences = (events: TestEvent[]) => events.map((e) => e.sequence);
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("GET /sessions/{id}/events", () => {
  test("answers 413 naming a page that fits when the log is larger than one answer", async () => {
    const res = await fetch(`${base}/sessions/${ended}/events`);
    expect(res.status).toBe(413);
    const { error } = (await res.json()) as {
      error: {
        data: { code: string; message: string; details: { fittingLimit: number; next: string; limitBytes: number } };
      };
    };
    expect(error.data.code).toBe("response_frame_too_large");
    expect(error.data.details.limitBytes).toBe(1_048_576);
    expect(error.data.details.next).toBe(`/sessions/${ended}/events?limit=${error.data.details.fittingLimit}`);
    expect(error.data.message).toContain("afterSequence");
    const page = await fetch(`${base}${error.data.details.next}`);
    expect(page.status).toBe(200);
    expect(sequences((await page.json()) as TestEvent[])).toEqual(oneTo(error.data.details.fittingLimit));
  }, 30_000);

  test("answers a page that fits as before when given a limit", async () => {
    const res = await fetch(`${base}/sessions/${ended}/events?afterSequence=2&limit=3`);
    expect(res.status).toBe(200);
    expect(sequences((await res.json()) as TestEvent[])).toEqual([3, 4, 5]);
  }, 30_000);
});

describe("GET /sessions/{id}/export", () => {
  test("writes the whole log of an ended Session larger than one answer", async () => {
    const res = await fetch(`${base}/sessions/${ended}/export`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      session: { id: string; state: string; lastSequence: number };
      events: TestEvent[];
    };
    // sessionStarted, the observation, the verdicts, sessionEnded.
    expect([body.session.id, body.session.state, body.session.lastSequence]).toEqual([ended, "ended", VERDICTS + 3]);
    expect(sequences(body.events)).toEqual(oneTo(VERDICTS + 3));
    expect(body.events.filter((e) => e.payload.type === "verdictRecorded")).toHaveLength(VERDICTS);
  }, 30_000);

  test("writes an active Session up to its last event when the export began", async () => {
    const res = await fetch(`${base}/sessions/${active}/export`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      session: { id: string; state: string; lastSequence: number };
      events: TestEvent[];
    };
    expect([body.session.id, body.session.state, body.session.lastSequence]).toEqual([active, "active", VERDICTS + 2]);
    expect(sequences(body.events)).toEqual(oneTo(VERDICTS + 2));
  }, 30_000);

  test("answers 404 for an unknown Session and a page when asked for one", async () => {
    expect((await fetch(`${base}/sessions/${crypto.randomUUID()}/export`)).status).toBe(404);
    const page = (await (await fetch(`${base}/sessions/${ended}/export?limit=2`)).json()) as {
      events: TestEvent[];
      nextAfterSequence: number;
    };
    expect([sequences(page.events), page.nextAfterSequence]).toEqual([[1, 2], 2]);
  }, 30_000);
});

describe("GET /sessions/{id}/report", () => {
  test("holds every event of a Session larger than one answer, ended or active", async () => {
    for (const [id, count] of [
      [ended, VERDICTS + 3],
      [active, VERDICTS + 2],
    ] as const) {
      const res = await fetch(`${base}/sessions/${id}/report`);
      expect(res.status).toBe(200);
      const html = await res.text();
      const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
      const model = JSON.parse(data) as {
        session: { id: string };
        events: TestEvent[];
        images: Record<string, unknown>;
      };
      expect(model.session.id).toBe(id);
      expect(sequences(model.events)).toEqual(oneTo(count));
      expect(Object.keys(model.images)).toHaveLength(1);
    }
  }, 60_000);
});
