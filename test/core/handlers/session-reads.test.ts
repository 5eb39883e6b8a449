import { describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "../../../src/protocol/limits.ts";
import type { TestEvent } from "../../../src/protocol/types/event.ts";
import { coreHarness } from "../../support/core-harness.ts";

const FEATURES = ["events.snapshot.v1", "verdict.record.v1", "session.export.page.v1"];
const VERDICTS = 1_200;
const SUMMARY = 16_000;

/**
 * A Session of about 19 MB (1,200 verdicts of 16,000 characters), ended, with the event log's reads
 * counted: `read` is the bytes of event JSON the handlers loaded since the last reset.
 */
async function largeSession() {
  const h = await coreHarness();
  const c = await h.connect(FEATURES);
  const sessionId = (await c.ask("session.start")).result.id as string;
  const answers = Array.from({ length: VERDICTS }, (_, i) =>
    c.ask("verdict.record", { verdict: { status: "pass", summary: `${i} ${"v".repeat(SUMMARY)}`, evidence: [] } }),
  );
  for (const a of await Promise.all(answers)) expect(a.error).toBeUndefined();
  expect((await c.ask("session.end")).result.state).toBe("ended");
  const log = h.core.log;
  const read = log.read.bind(log);
  const counter = { bytes: 0 };
  log.read = (...args: Parameters<typeof read>): TestEvent[] => {
    const events = read(...args);
    for (const e of events) counter.bytes += JSON.stringify(e).length;
    return events;
  };
  return { ...h, c, sessionId, counter };
}

describe("events.list and session.export", () => {
  test("a read too large for one line is refused from the stored sizes, naming the limit that fits, when the Session is large", async () => {
    const s = await largeSession();
    try {
      const all = await s.c.ask("events.list", { sessionId: s.sessionId });
      expect(all.error.data.code).toBe("response_frame_too_large");
      const details = all.error.data.details;
      expect(details.limitBytes).toBe(MAX_FRAME_BYTES);
      expect(details.actualBytesAtLeast).toBeGreaterThan(MAX_FRAME_BYTES);
      // 16,000-character verdicts: about 64 fit in a MiB.
      expect(details.fittingLimit).toBeGreaterThan(50);
      expect(details.fittingLimit).toBeLessThan(70);
      const whole = await s.c.ask("session.export", { sessionId: s.sessionId });
      expect(whole.error.data.code).toBe("response_frame_too_large");
      expect(s.counter.bytes).toBe(0);

      const page = await s.c.ask("events.list", { sessionId: s.sessionId, limit: details.fittingLimit });
      expect(page.result.map((e: TestEvent) => e.sequence)).toEqual(
        Array.from({ length: details.fittingLimit }, (_, i) => i + 1),
      );
      expect(s.counter.bytes).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    } finally {
      s.cleanup();
    }
  }, 60_000);

  test("an export page reads no more than one line's worth of events when its limit allows many more", async () => {
    const s = await largeSession();
    try {
      let after = 0;
      let pages = 0;
      const seen: number[] = [];
      for (;;) {
        s.counter.bytes = 0;
        const r = await s.c.ask("session.export", {
          sessionId: s.sessionId,
          limit: 1000,
          ...(after ? { afterSequence: after } : {}),
        });
        expect(r.error).toBeUndefined();
        expect(s.counter.bytes).toBeLessThanOrEqual(MAX_FRAME_BYTES);
        seen.push(...r.result.events.map((e: TestEvent) => e.sequence));
        pages++;
        if (r.result.nextAfterSequence === undefined) break;
        after = r.result.nextAfterSequence;
      }
      // sessionStarted, the verdicts and sessionEnded, each once and in order.
      expect(seen).toEqual(Array.from({ length: VERDICTS + 2 }, (_, i) => i + 1));
      expect(pages).toBeGreaterThan(15);
    } finally {
      s.cleanup();
    }
  }, 60_000);
});
