/**
 * `devicerail sessions --follow [ID]`: a Session's events as they are appended, like `tail -f`,
 * over the daemon's event plane (events.stream.v1): the stored events first, then live ones,
 * until the Session ends.
 */
import { helloParams } from "../../client/hello.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import { VERSION } from "../version.ts";
import { type CoreClient, withClient } from "./client.ts";
import { CliError, EXIT, out } from "./output.ts";
import { resolveSession } from "./sessions.ts";
import { stdout, stderr } from "./std-streams.ts";

const SUBPROTOCOL = "devicerail.events.v1";
/** Characters of an event's detail a line shows. */
const MAX_DETAIL = 100;
/** How often to look again for a Session to follow when none is active yet. */
const POLL_MS = 250;

/** One line a person can scan: time, sequence, what happened. */
export function eventLine(e: TestEvent, st = out()): string {
  const p = e.payload;
  const time = new Date(e.atMs).toISOString().slice(11, 23);
  const detail = (() => {
    switch (p.type) {
      case "sessionEnded":
        return `${p.outcome}${p.reason ? ` (${p.reason})` : ""}`;
      case "actionStarted":
        return `${p.call.name} ${p.call.argumentsRedacted ? "(arguments redacted)" : JSON.stringify(p.call.arguments)}`;
      case "actionCompleted":
        return p.outcome.outcome === "succeeded" ? "succeeded" : `${p.outcome.outcome}: ${p.outcome.error.code}: ${p.outcome.error.message}`;
      case "observationCaptured":
        return p.observation.screenshot?.sha256 ? `screenshot ${p.observation.screenshot.sha256.slice(0, 12)}…` : "no screenshot";
      case "verdictRecorded":
        return `${p.verdict.status}: ${p.verdict.summary}`;
      case "error":
        return `${p.error.code}: ${p.error.message}`;
      default:
        return "";
    }
  })();
  const failed = p.type === "error" || (p.type === "actionCompleted" && p.outcome.outcome !== "succeeded");
  // One event, one line: long arguments are cut (--json has them whole).
  const shown = [...detail].length > MAX_DETAIL ? `${[...detail].slice(0, MAX_DETAIL).join("")}…` : detail;
  return `${st.dim(time)}  #${e.sequence}  ${failed ? st.red(p.type) : st.bold(p.type)}${shown ? `  ${shown}` : ""}`;
}

/**
 * The Session to follow: the one named, else the newest active one, else the next one to start
 * (one that starts and ends between two looks is still followed: it is replayed whole).
 */
async function pick(c: CoreClient, id: string | undefined, interrupted: AbortSignal): Promise<string> {
  if (id) return resolveSession(c, id);
  const since = Date.now();
  let told = false;
  for (;;) {
    if (interrupted.aborted) throw new CliError("stopped", EXIT.interrupted);
    const { sessions } = await c.call("devicerail.sessions.list", { limit: 20 });
    const next = sessions.find((s) => s.state === "active") ?? [...sessions].reverse().find((s) => s.startedAtMs >= since);
    if (next) return next.id;
    if (!told) stderr.write("no active Session; waiting for one to start (Ctrl-C to stop)\n");
    told = true;
    await Bun.sleep(POLL_MS);
  }
}

/** Streams one Session's events to `onEvent` until its terminal; resolves with the terminal's reason. */
async function stream(c: CoreClient, sessionId: string, onEvent: (e: TestEvent) => void, signal: AbortSignal): Promise<string> {
  if (!c.attached.hello.features.enabled.includes("events.stream.v1")) throw new CliError("the daemon offers no event stream (events.stream.v1) to follow Sessions with");
  const { endpoint } = await c.call("events.stream.open", { sessionId, originPolicy: { kind: "absent" } });
  const ws = new WebSocket(endpoint, [SUBPROTOCOL]);
  const done = Promise.withResolvers<string>();
  ws.addEventListener("open", () => {
    // The event plane's own connection (docs/protocol/event-stream.md): the stream is required.
    const hello = helloParams({ name: "devicerail-cli", version: VERSION }, [], ["events.stream.v1"]);
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: "hello", method: "system.hello", params: hello }));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: "subscribe", method: "events.subscribe", params: { sessionId } }));
  });
  ws.addEventListener("message", (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: string; error?: { message: string }; method?: string; params?: { event?: TestEvent; termination?: { reason: string } } };
    if (msg.error) done.reject(new CliError(`cannot follow Session ${sessionId}: ${msg.error.message}`));
    else if (msg.method === "events.stream.event" && msg.params?.event) onEvent(msg.params.event);
    else if (msg.method === "events.stream.terminal") done.resolve(msg.params?.termination?.reason ?? "ended");
  });
  ws.addEventListener("close", () => done.resolve("closed"));
  signal.addEventListener("abort", () => done.resolve("interrupted"), { once: true });
  try {
    return await done.promise;
  } finally {
    ws.close();
  }
}

export async function followCommand(id: string | undefined, opts: { json?: boolean }): Promise<number> {
  await withClient(async (c, interrupted) => {
    const sessionId = await pick(c, id, interrupted);
    if (!opts.json) stderr.write(`following Session ${sessionId} (Ctrl-C to stop)\n`);
    const reason = await stream(c, sessionId, (e) => stdout.write(opts.json ? `${JSON.stringify(e)}\n` : `${eventLine(e)}\n`), interrupted);
    if (!opts.json && reason !== "sessionEnded" && reason !== "interrupted") stderr.write(`the stream ended: ${reason}\n`);
  });
  return 0;
}
