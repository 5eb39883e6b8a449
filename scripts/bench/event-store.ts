/**
 * Durable append throughput of the event store: 32 Sessions × 5,000 events appended concurrently,
 * each append acknowledged only once its group-committed transaction is on disk (WAL,
 * synchronous=FULL). Each Session appends its next event when the previous one is acknowledged,
 * as a client waiting for responses does. Then pages through everything and reports peak RSS.
 * Last line: `event-store: X events/s, p99 Y ms, guard ratio R` with R = X / 500 (the reference's
 * CI smoke guard is ≥ 500 ops/s at p99 ≤ 100 ms).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/core/sessions/db.ts";
import { EventLog } from "../../src/core/sessions/event-log.ts";
import type { TestEventPayload } from "../../src/protocol/types/event.ts";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 32);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const dir = mkdtempSync(join(tmpdir(), "devicerail-bench-"));
let peakRss = 0;
const sample = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

const observation = (n: number): TestEventPayload => ({
  type: "observationCaptured",
  observation: {
    id: crypto.randomUUID(),
    deviceId: "mock-1",
    capturedAtMs: Date.now(),
    viewport: { width: 1280, height: 720, scaleFactor: 1 },
    screenshot: {
      id: `sha256:${"9".repeat(64)}`,
      mediaType: "image/png",
      uri: `devicerail://assets/sha256/${"9".repeat(64)}`,
      sha256: "9".repeat(64),
    },
    metadata: { frameSequence: n },
  },
});

try {
  const opened = openDatabase(join(dir, "bench.sqlite"));
  const { raw } = opened;
  const log = new EventLog(opened);
  const ids = await Promise.all(
    Array.from({ length: SESSIONS }, async () => (await log.startSession({ deviceId: "mock-1" })).session.id),
  );
  const latencies = new Float64Array(SESSIONS * EVENTS);
  let k = 0;
  const t0 = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < EVENTS; i++) {
        const s = performance.now();
        await log.append(id, { requestId: i, deviceId: "mock-1", payload: observation(i) });
        latencies[k++] = performance.now() - s;
      }
    }),
  );
  const appendMs = performance.now() - t0;
  const throughput = (SESSIONS * EVENTS) / (appendMs / 1000);
  latencies.sort();
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number;

  const t1 = performance.now();
  let paged = 0;
  for (const id of ids)
    for (let after = 0; ; ) {
      const page = log.read(id, after, 1000);
      paged += page.length;
      if (page.length < 1000) break;
      after = (page[page.length - 1] as { sequence: number }).sequence;
    }
  const pageMs = performance.now() - t1;
  if (paged !== SESSIONS * (EVENTS + 1)) throw new Error(`paged ${paged} events, expected ${SESSIONS * (EVENTS + 1)}`);
  log.dispose();
  raw.close();
  clearInterval(sample);
  console.log(
    `appended ${SESSIONS}×${EVENTS} events in ${appendMs.toFixed(0)} ms; append p50 ${p(0.5).toFixed(2)} ms, p99 ${p(0.99).toFixed(2)} ms`,
  );
  console.log(
    `paged through ${paged} events in ${pageMs.toFixed(0)} ms; peak RSS ${(peakRss / 1048576).toFixed(0)} MiB`,
  );
  console.log(
    `event-store: ${throughput.toFixed(0)} events/s, p99 ${p(0.99).toFixed(2)} ms, guard ratio ${(throughput / 500).toFixed(1)}`,
  );
} finally {
  clearInterval(sample);
  rmSync(dir, { recursive: true, force: true });
}
