import { afterEach, describe, expect, test } from "bun:test";
import {
  CAPABILITY_TTL_MS,
  EventStreams,
  MAX_CAPABILITIES,
  MAX_SUBSCRIBERS_PER_SESSION,
} from "../../../src/core/streams/event-stream.ts";
import type { TestEvent } from "../../../src/protocol/types/event.ts";
import { coreHarness } from "../../support/core-harness.ts";

const harnesses: { cleanup(): void }[] = [];
afterEach(() => {
  for (const h of harnesses.splice(0)) h.cleanup();
});

async function setup() {
  const h = await coreHarness();
  harnesses.push(h);
  let now = 1_000_000;
  const streams = new EventStreams(h.core.log, () => now);
  const { session } = await h.core.log.startSession();
  return { h, streams, sessionId: session.id, advance: (ms: number) => (now += ms) };
}

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { error: { data: { code: string } } }).error.data.code;
  }
  return "no error";
};

describe("EventStreams capabilities", () => {
  test("a capability is single use and expires after its TTL", async () => {
    const { streams, sessionId, advance } = await setup();
    const a = streams.open(sessionId, { kind: "absent" });
    expect(a.token).toMatch(/^[0-9a-f]{64}$/);
    expect(streams.consume(a.token, null)).toEqual({
      sessionId,
      originPolicy: { kind: "absent" },
      expiresAtMs: a.expiresAtMs,
    });
    expect(streams.consume(a.token, null)).toBeNull();
    const b = streams.open(sessionId, { kind: "absent" });
    advance(CAPABILITY_TTL_MS);
    expect(streams.consume(b.token, null)).toBeNull();
  });

  test("an Origin that breaks the policy is refused without consuming the capability", async () => {
    const { streams, sessionId } = await setup();
    const c = streams.open(sessionId, { kind: "exact", origin: "http://127.0.0.1:5173" });
    expect(streams.consume(c.token, null)).toBeNull();
    expect(streams.consume(c.token, "http://evil.example")).toBeNull();
    expect(streams.consume(c.token, "http://127.0.0.1:5173")).not.toBeNull();
    const d = streams.open(sessionId, { kind: "absent" });
    expect(streams.consume(d.token, "http://127.0.0.1:5173")).toBeNull();
    expect(streams.consume(d.token, null)).not.toBeNull();
  });

  test("exact origins other than http(s)://127.0.0.1 with an explicit non-default port are invalid_stream_origin", async () => {
    const { streams, sessionId } = await setup();
    const bad = [
      "http://localhost:8080",
      "http://127.0.0.1",
      "http://127.0.0.1:80",
      "https://127.0.0.1:443",
      "http://127.0.0.1:0",
      "http://127.0.0.1:08080",
      "http://127.0.0.1:65536",
      "ftp://127.0.0.1:21",
      "http://127.0.0.1:8080/",
    ];
    expect(bad.map((origin) => codeOf(() => streams.open(sessionId, { kind: "exact", origin })))).toEqual(
      bad.map(() => "invalid_stream_origin"),
    );
    expect(codeOf(() => streams.open(sessionId, { kind: "exact", origin: "https://127.0.0.1:8443" }))).toBe("no error");
  });

  test("at most MAX_CAPABILITIES unexpired capabilities exist, and expired ones make room again", async () => {
    const { streams, sessionId, advance } = await setup();
    for (let i = 0; i < MAX_CAPABILITIES; i++) streams.open(sessionId, { kind: "absent" });
    expect(codeOf(() => streams.open(sessionId, { kind: "absent" }))).toBe("stream_capability_limit");
    advance(CAPABILITY_TTL_MS);
    expect(codeOf(() => streams.open(sessionId, { kind: "absent" }))).toBe("no error");
  });

  test("after shutdown nothing is issued and live subscribers end with serverShutdown", async () => {
    const { streams, sessionId } = await setup();
    const cap = streams.consume(streams.open(sessionId, { kind: "absent" }).token, null) as NonNullable<
      ReturnType<EventStreams["consume"]>
    >;
    const { feed } = streams.subscribe(cap, { sessionId }, 5);
    const ends: unknown[] = [];
    feed.start({ event: () => {}, end: (t) => ends.push(t) });
    streams.shutdown();
    expect(codeOf(() => streams.open(sessionId, { kind: "absent" }))).toBe("stream_server_shutdown");
    expect(ends).toEqual([
      {
        reason: "serverShutdown",
        error: {
          code: "stream_server_shutdown",
          message: "event stream server is shutting down",
          retryable: true,
          details: null,
        },
      },
    ]);
  });
});

describe("EventStreams subscriptions", () => {
  test("a subscriber registered while appends are in flight sees every event once and in order", async () => {
    const { h, streams, sessionId } = await setup();
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++)
      appends.push(
        h.core.log.append(sessionId, {
          payload: { type: "verdictRecorded", verdict: { status: "pass", summary: `v${i}`, evidence: [] } },
        }),
      );
    await appends[10];
    const cap = streams.consume(streams.open(sessionId, { kind: "absent" }).token, null) as NonNullable<
      ReturnType<EventStreams["consume"]>
    >;
    const { feed } = streams.subscribe(cap, { sessionId }, 5);
    const seen: number[] = [];
    feed.start({ event: (e: TestEvent) => void seen.push(e.sequence), end: () => {} });
    for (let i = 0; i < 50; i++)
      appends.push(
        h.core.log.append(sessionId, {
          payload: { type: "verdictRecorded", verdict: { status: "pass", summary: `w${i}`, evidence: [] } },
        }),
      );
    await Promise.all(appends);
    expect(seen).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
  });

  test("at most MAX_SUBSCRIBERS_PER_SESSION subscribe to one Session; a stopped one frees its place", async () => {
    const { streams, sessionId } = await setup();
    const cap = { sessionId, originPolicy: { kind: "absent" as const }, expiresAtMs: 0 };
    const feeds = Array.from(
      { length: MAX_SUBSCRIBERS_PER_SESSION },
      () => streams.subscribe(cap, { sessionId }, 5).feed,
    );
    expect(codeOf(() => streams.subscribe(cap, { sessionId }, 5))).toBe("stream_subscription_limit");
    feeds[0]?.stop();
    expect(codeOf(() => streams.subscribe(cap, { sessionId }, 5))).toBe("no error");
  });

  test("an unknown Session is session_not_found and a deleted one stream_session_deleted", async () => {
    const { h, streams, sessionId } = await setup();
    const unknown = "3f0c6b1e-8a2d-4c5b-9e7f-1a2b3c4d5e6f";
    expect(
      codeOf(() =>
        streams.subscribe(
          { sessionId: unknown, originPolicy: { kind: "absent" }, expiresAtMs: 0 },
          { sessionId: unknown },
          5,
        ),
      ),
    ).toBe("session_not_found");
    await h.core.log.endSession(sessionId, { outcome: "completed", reason: null });
    await h.core.log.deleteSession(sessionId);
    expect(
      codeOf(() =>
        streams.subscribe({ sessionId, originPolicy: { kind: "absent" }, expiresAtMs: 0 }, { sessionId }, 5),
      ),
    ).toBe("stream_session_deleted");
  });
});
