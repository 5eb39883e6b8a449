/**
 * The MCP resources of a Session and its evidence, read with the official SDK client over
 * Streamable HTTP: each client reads only its own, and a Session is read a page at a time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestEvent } from "../../src/protocol/types/event.ts";
import { type McpPeer, call, httpPeer } from "../support/mcp-client.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const VERDICTS = 60;
const SUMMARY = 16_000;
const RESOURCE_BYTES = 700_000;

let d: ServeDaemon;
let base: string;
let a: McpPeer;
let b: McpPeer;
let sessionA: string;
let sessionB: string;

const sessionOf = (peer: McpPeer) => peer.results.at(-1)?.structuredContent.sessionId as string;
const eventsOf = async (sessionId: string) =>
  (await (await fetch(`${base}/sessions/${sessionId}/events?limit=1000`)).json()) as TestEvent[];
const readText = async (peer: McpPeer, uri: string) =>
  ((await peer.client.readResource({ uri })).contents[0] as { text: string }).text;
/** The MCP error a refused read answers, as the SDK client raises it. */
async function refusal(peer: McpPeer, uri: string): Promise<{ code: number; data: unknown }> {
  try {
    await peer.client.readResource({ uri });
  } catch (e) {
    const err = e as { code: number; data: unknown };
    return { code: err.code, data: err.data };
  }
  throw new Error(`${uri} was read`);
}

/** The digests of the evidence a Session's events name. */
async function evidenceOf(sessionId: string): Promise<string[]> {
  return [
    ...new Set(
      [...JSON.stringify(await eventsOf(sessionId)).matchAll(/"sha256":"([0-9a-f]{64})"/g)].map((m) => m[1] as string),
    ),
  ];
}

beforeAll(async () => {
  d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_MOCK_DEVICES: "2" });
  base = `http://127.0.0.1:${d.port}`;
  a = await httpPeer(base, d.dataDir);
  b = await httpPeer(base, d.dataDir);
  // A's screen differs from B's (a typed name), so no screenshot or tree is in both Sessions.
  expect(
    (await call(a, "type_text", { deviceId: "mock-1", selector: { identifier: "username" }, text: "alice" })).isError,
  ).toBeFalsy();
  expect((await call(a, "device_observe", { deviceId: "mock-1" })).isError).toBeFalsy();
  sessionA = sessionOf(a);
  expect((await call(b, "device_observe", { deviceId: "mock-2" })).isError).toBeFalsy();
  sessionB = sessionOf(b);
  for (let i = 0; i < VERDICTS; i++)
    expect(
      (await call(a, "session_verdict", { deviceId: "mock-1", status: "pass", summary: `${i} ${"v".repeat(SUMMARY)}` }))
        .isError,
    ).toBeFalsy();
}, 60_000);

afterAll(async () => {
  await a?.close().catch(() => {});
  await b?.close().catch(() => {});
  await d?.[Symbol.asyncDispose]();
});

describe("MCP Session and evidence resources", () => {
  test("a client reads its own Session and evidence but not another client's, which read as not found, when two clients share the daemon", async () => {
    const theirs = await evidenceOf(sessionB);
    // The login screen before A typed is in both Sessions: each may read it.
    const shared = (await evidenceOf(sessionA)).filter((sha) => theirs.includes(sha));
    const mine = (await evidenceOf(sessionA)).filter((sha) => !theirs.includes(sha));
    expect(mine.length).toBeGreaterThan(1);
    for (const sha of shared)
      expect((await b.client.readResource({ uri: `devicerail://evidence/${sha}` })).contents).toHaveLength(1);
    expect(JSON.parse(await readText(a, `devicerail://sessions/${sessionA}?limit=1`)).events[0].sessionId).toBe(
      sessionA,
    );
    for (const sha of mine)
      expect((await a.client.readResource({ uri: `devicerail://evidence/${sha}` })).contents).toHaveLength(1);

    expect(await refusal(b, `devicerail://sessions/${sessionA}`)).toEqual({
      code: -32002,
      data: { code: "session_not_found", uri: `devicerail://sessions/${sessionA}` },
    });
    const unknown = crypto.randomUUID();
    expect(await refusal(b, `devicerail://sessions/${unknown}`)).toEqual({
      code: -32002,
      data: { code: "session_not_found", uri: `devicerail://sessions/${unknown}` },
    });
    for (const sha of mine)
      expect(await refusal(b, `devicerail://evidence/${sha}`)).toEqual({
        code: -32002,
        data: { code: "evidence_not_found", uri: `devicerail://evidence/${sha}` },
      });
    // B's own are B's.
    expect(
      JSON.parse(await readText(b, `devicerail://sessions/${sessionB}`)).events.map((e: TestEvent) => e.sessionId),
    ).toContain(sessionB);
    expect((await b.client.listResources()).resources.map((r) => r.uri)).toEqual([`devicerail://sessions/${sessionB}`]);
  }, 30_000);

  test("a Session larger than one resource is read a page at a time by following next, each page within a resource", async () => {
    const recorded = (await eventsOf(sessionA)).map((e) => e.sequence);
    expect(recorded.length).toBeGreaterThan(VERDICTS);
    let uri: string | undefined = `devicerail://sessions/${sessionA}`;
    const seen: number[] = [];
    let pages = 0;
    while (uri) {
      const text = await readText(a, uri);
      expect(text.length).toBeLessThanOrEqual(RESOURCE_BYTES);
      const page = JSON.parse(text) as { sessionId: string; events: TestEvent[]; next?: string };
      expect(page.sessionId).toBe(sessionA);
      seen.push(...page.events.map((e) => e.sequence));
      uri = page.next;
      if (uri)
        expect(uri).toMatch(
          new RegExp(`^devicerail://sessions/${sessionA}\\?afterSequence=${page.events.at(-1)?.sequence}&limit=200$`),
        );
      pages++;
    }
    expect(seen).toEqual(recorded);
    expect(pages).toBeGreaterThan(1);
  }, 30_000);

  test("a page names the next one by afterSequence and limit, and a bad limit is invalid_params", async () => {
    const first = JSON.parse(await readText(a, `devicerail://sessions/${sessionA}?limit=2`));
    expect([first.events.map((e: TestEvent) => e.sequence), first.next]).toEqual([
      [1, 2],
      `devicerail://sessions/${sessionA}?afterSequence=2&limit=2`,
    ]);
    const second = JSON.parse(await readText(a, first.next));
    expect(second.events.map((e: TestEvent) => e.sequence)).toEqual([3, 4]);
    const last = (await eventsOf(sessionA)).at(-1)?.sequence as number;
    expect(JSON.parse(await readText(a, `devicerail://sessions/${sessionA}?afterSequence=${last}`))).toEqual({
      sessionId: sessionA,
      events: [],
    });
    for (const query of ["limit=0", "limit=1001", "afterSequence=-1", "cursor=x"]) {
      const r = await refusal(a, `devicerail://sessions/${sessionA}?${query}`);
      expect([r.code, (r.data as { code: string }).code]).toEqual([-32602, "invalid_params"]);
    }
  }, 30_000);

  test("the resource template says how to page", async () => {
    const { resourceTemplates } = await a.client.listResourceTemplates();
    const session = resourceTemplates.find((t) => t.name === "session");
    expect(session?.uriTemplate).toBe("devicerail://sessions/{id}{?afterSequence,limit}");
    expect(session?.description).toContain("next");
  }, 30_000);
});
