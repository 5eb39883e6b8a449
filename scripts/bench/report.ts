/**
 * The cost of a session report: Sessions of 100, 1,000 and 5,000 events on the Mock (observe,
 * type one character, tap, over and over, so the screen keeps changing), each reported to HTML
 * as `devicerail report` does it (session.export, the summary, every screenshot and tree read
 * back over the daemon's HTTP API, thumbnails encoded, the page rendered), against the baseline
 * of exporting the same Session with session.export, both through the same client in this run.
 *
 *   bun scripts/bench/report.ts
 *
 * Last line: `report: 1000 events in X ms, Y MiB, ratio R` (Y the HTML file, R = report / export).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CoreClient, openClient } from "../../src/cli/client.ts";
import { clientSource } from "../../src/surfaces/report/source.ts";
import { allEvents } from "../../src/cli/sessions.ts";
import { buildModel } from "../../src/surfaces/report/model.ts";
import { renderPage } from "../../src/surfaces/report/page.ts";
import { ROOT, daemonCommand } from "../../test/support/daemon.ts";
import { listeningPort } from "../../test/support/tcp-client.ts";

const SIZES = [100, 1_000, 5_000];
const RUNS = 3;
const dataDir = mkdtempSync(join(tmpdir(), "devicerail-bench-report-"));
const env = {
  ...process.env,
  DEVICERAIL_DATA_DIR: dataDir,
  DEVICERAIL_LOG_LEVEL: "error",
  DEVICERAIL_ANDROID: "off",
  DEVICERAIL_IOS: "off",
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const f = (n: number) => n.toFixed(1);

/** A Session of exactly `events` events: observe, inputText of one letter, tap, … (5 events a round), topped up with observations. */
async function recordSession(c: CoreClient, events: number): Promise<string> {
  await c.call("device.connect");
  const { id } = await c.call("session.start");
  const exec = (name: string, args: object) =>
    c.call("device.execute", { id: crypto.randomUUID(), name, arguments: args });
  await exec("tap", { x: 640, y: 148 });
  // sessionStarted and the tap so far; sessionEnded comes last.
  let n = 3;
  for (let i = 0; n + 5 <= events - 1; i++, n += 5) {
    await c.call("device.observe");
    await exec("inputText", { text: String.fromCharCode(97 + (i % 26)) });
    await exec("tap", { x: 640, y: 148 });
  }
  for (; n < events - 1; n++) await c.call("device.observe");
  await c.call("session.end", { outcome: "completed" });
  return id;
}

async function time<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await work();
  return { ms: performance.now() - t, value };
}

// The daemon a CLI would attach to: serving the data directory on loopback TCP.
const daemon = Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
  cwd: ROOT,
  env,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "inherit",
});
await listeningPort(daemon.stdout);
const c = await openClient(env, { timeoutMs: 60_000 });
try {
  let last = "";
  for (const size of SIZES) {
    const sessionId = await recordSession(c, size);
    const exports: number[] = [];
    const reports: number[] = [];
    let bytes = 0;
    let eventCount = 0;
    let shots = 0;
    for (let run = 0; run < RUNS; run++) {
      exports.push((await time(() => allEvents(c, sessionId))).ms);
      const r = await time(async () =>
        renderPage(
          await buildModel(
            clientSource(c, (sha) => c.evidence(sha)),
            sessionId,
            { daemonVersion: "bench" },
          ),
        ),
      );
      reports.push(r.ms);
      bytes = Buffer.byteLength(r.value);
      const model = await buildModel(
        clientSource(c, (sha) => c.evidence(sha)),
        sessionId,
        { daemonVersion: "bench" },
      );
      eventCount = model.events.length;
      shots = Object.keys(model.images).length;
    }
    const [rep, exp] = [median(reports), median(exports)];
    const mib = bytes / 1_048_576;
    process.stdout.write(
      `${eventCount} events (${shots} distinct screenshots): export ${f(exp)} ms, report ${f(rep)} ms, ${mib.toFixed(2)} MiB HTML (${Math.round(bytes / eventCount)} bytes/event)\n`,
    );
    if (size === 1_000)
      last = `report: ${eventCount} events in ${Math.round(rep)} ms, ${mib.toFixed(2)} MiB, ratio ${(rep / exp).toFixed(2)}`;
  }
  process.stdout.write(`${last}\n`);
} finally {
  c.close();
  daemon.kill("SIGTERM");
  await daemon.exited;
  rmSync(dataDir, { recursive: true, force: true });
}
