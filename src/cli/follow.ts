/**
 * `devicerail sessions --follow [ID]`: a Session's events as they are appended, like `tail -f`,
 * over the daemon's event plane (events.stream.v1): the stored events first, then live ones,
 * until the Session ends.
 */
import { helloParams } from "../client/hello.ts";
import { ConnectionLost, RemoteError } from "../client/remote-error.ts";
import { type Notification, openEventClient } from "../client/websocket.ts";
import type { TestEvent } from "../protocol/types/event.ts";
import { VERSION } from "../server/version.ts";
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
        return p.outcome.outcome === "succeeded"
          ? "succeeded"
          : `${p.outcome.outcome}: ${p.outcome.error.code}: ${p.outcome.error.message}`;
      case "observationCaptured":
        return p.observation.screenshot?.sha256
          ? `screenshot ${p.observation.screenshot.sha256.slice(0, 12)}…`
          : "no screenshot";
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
    const next =
      sessions.find((s) => s.state === "active") ?? [...sessions].reverse().find((s) => s.startedAtMs >= since);
    if (next) return next.id;
    if (!told) stderr.write("no active Session; waiting for one to start (Ctrl-C to stop)\n");
    told = true;
    await Bun.sleep(POLL_MS);
  }
}

/** Streams one Session's events to `onEvent` until its terminal; resolves with the terminal's reason. */
async function stream(
  c: CoreClient,
  sessionId: string,
  onEvent: (e: TestEvent) => void,
  signal: AbortSignal,
): Promise<string> {
  if (!c.attached.hello.features.enabled.includes("events.stream.v1"))
    throw new CliError("the daemon offers no event stream (events.stream.v1) to follow Sessions with");
  const { endpoint } = await c.call("events.stream.open", { sessionId, originPolicy: { kind: "absent" } });
  const done = Promise.withResolvers<string>();
  const onNotification = (n: Notification) => {
    const params = n.params as { event?: TestEvent; termination?: { reason: string } } | undefined;
    if (n.method === "events.stream.event" && params?.event) onEvent(params.event);
    else if (n.method === "events.stream.terminal") done.resolve(params?.termination?.reason ?? "ended");
  };
  const opened = await openEventClient(endpoint, [SUBPROTOCOL], onNotification).catch((e: unknown) => {
    if (e instanceof ConnectionLost) return null;
    throw e;
  });
  if (!opened) return "closed";
  const { client, channel } = opened;
  void channel.closed.then(() => done.resolve("closed"));
  signal.addEventListener("abort", () => done.resolve("interrupted"), { once: true });
  // The event plane's own connection (docs/protocol/event-stream.md): the stream is required.
  // The hello and the subscription are sent at once; the first error answer ends the follow.
  const refused = (e: unknown) => {
    if (e instanceof RemoteError) done.reject(new CliError(`cannot follow Session ${sessionId}: ${e.rpcMessage}`));
    else if (!(e instanceof ConnectionLost)) done.reject(e);
  };
  client
    .call("system.hello", helloParams({ name: "devicerail-cli", version: VERSION }, [], ["events.stream.v1"]))
    .catch(refused);
  client.call("events.subscribe", { sessionId }).catch(refused);
  try {
    return await done.promise;
  } finally {
    await client.close();
  }
}

export async function followCommand(id: string | undefined, opts: { json?: boolean }): Promise<number> {
  await withClient(async (c, interrupted) => {
    const sessionId = await pick(c, id, interrupted);
    if (!opts.json) stderr.write(`following Session ${sessionId} (Ctrl-C to stop)\n`);
    const reason = await stream(
      c,
      sessionId,
      (e) => stdout.write(opts.json ? `${JSON.stringify(e)}\n` : `${eventLine(e)}\n`),
      interrupted,
    );
    if (!opts.json && reason !== "sessionEnded" && reason !== "interrupted")
      stderr.write(`the stream ended: ${reason}\n`);
  });
  return 0;
}
