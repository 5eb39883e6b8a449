/** `sessions` and `export`: the recorded Sessions, and one of them as a self-contained folder. */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestEvent } from "../protocol/types/event.ts";
import type { SessionInfo } from "../protocol/types/session.ts";
import { type CoreClient, withClient } from "./client.ts";
import type { SessionSummary } from "../protocol/types/extensions.ts";
import { outputDir } from "./device-commands.ts";
import { EXPORT_PAGE_LIMIT, type ExportPage, exportPages } from "../client/event-pages.ts";
import { RemoteError } from "../client/remote-error.ts";
import { CliError, EXIT, isoSeconds, printJson, printRows } from "./output.ts";
import { assetRefsIn } from "../protocol/types/evidence.ts";
import { stdout } from "./std-streams.ts";

export type SessionRow = SessionSummary;

const seconds = (ms: number) =>
  ms < 1_000
    ? `${ms} ms`
    : ms < 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms < 3_600_000
        ? `${Math.round(ms / 1000)} s`
        : `${(ms / 3_600_000).toFixed(1)} h`;

/** How a Session went, in a word: its verdict when one was recorded, else its outcome (or that it still runs). */
const result = (s: SessionRow) => (s.verdict ? `${s.verdict.status}: ${s.verdict.summary}` : (s.outcome ?? "active"));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** git's shortest abbreviation of a commit id: fewer characters would match too much by chance. */
const MIN_PREFIX = 4;

/**
 * A Session id as given on the command line: a whole id, or an unambiguous prefix of one (as git
 * takes a commit's), resolved against every Session the daemon keeps. A prefix that names none
 * is a runtime error (exit 1), as for an unknown whole id; one that names several is a usage
 * error (exit 2) listing them.
 */
export async function resolveSession(c: CoreClient, given: string): Promise<string> {
  const text = given.trim().toLowerCase();
  if (UUID.test(text)) return text;
  if (!/^[0-9a-f-]+$/.test(text) || text.length < MIN_PREFIX)
    throw new CliError(
      `${JSON.stringify(given)} is not a Session id: give the id devicerail sessions lists, or its first ${MIN_PREFIX} or more characters`,
      EXIT.usage,
    );
  // sessions.list answers every Session the daemon keeps, active and ended (an array of SessionInfo).
  const sessions = await c.call("sessions.list");
  const hits = sessions.map((s) => s.id).filter((id) => id.startsWith(text));
  if (hits.length === 1) return hits[0] as string;
  if (hits.length === 0) throw new CliError(`no Session starts with ${text}; devicerail sessions lists them`);
  const shown = hits.slice(0, 5).join(", ");
  throw new CliError(
    `${text} names ${hits.length} Sessions (${shown}${hits.length > 5 ? ", …" : ""}): give more of the id`,
    EXIT.usage,
  );
}

export async function sessionsCommand(opts: { json?: boolean; limit?: number }): Promise<number> {
  const params = opts.limit === undefined ? {} : { limit: opts.limit };
  const { sessions } = await withClient((c) => c.call("devicerail.sessions.list", params));
  if (opts.json) printJson({ sessions });
  else if (sessions.length === 0) stdout.write("no sessions\n");
  else
    printRows(
      ["ID", "DEVICE", "STARTED", "DURATION", "ACTIONS", "ERRORS", "RESULT"],
      // Newest first, as the daemon lists them (and as --json has them).
      sessions.map((s) => [
        s.id,
        s.deviceId ?? "-",
        isoSeconds(s.startedAtMs),
        seconds(s.durationMs),
        String(s.actions),
        String(s.errors),
        result(s),
      ]),
    );
  return 0;
}

/**
 * Deletes ended Sessions (events.clear): those that ended more than `olderThanMs` ago, or all but
 * the newest `keep`. Active Sessions are never touched.
 */
export async function pruneCommand(opts: {
  olderThan?: number;
  keep?: number;
  dryRun?: boolean;
  json?: boolean;
}): Promise<number> {
  if ((opts.olderThan === undefined) === (opts.keep === undefined))
    throw new CliError("say which Sessions to delete: --older-than AGE or --keep N (one of them)", EXIT.usage);
  const deleted = await withClient(async (c) => {
    const { sessions } = await c.call("devicerail.sessions.list", { state: "ended" });
    const cutoff = opts.olderThan === undefined ? null : Date.now() - opts.olderThan;
    const doomed =
      cutoff === null ? sessions.slice(opts.keep) : sessions.filter((s) => (s.endedAtMs ?? s.startedAtMs) < cutoff);
    if (!opts.dryRun) for (const s of doomed) await c.call("events.clear", { sessionId: s.id });
    return doomed;
  });
  if (opts.json) printJson({ deleted: deleted.map((s) => s.id), dryRun: opts.dryRun === true });
  else
    stdout.write(
      `${opts.dryRun ? "would delete" : "deleted"} ${deleted.length} Session${deleted.length === 1 ? "" : "s"}\n`,
    );
  return 0;
}

/** The whole log, in pages that each fit a frame; an active Session only in one piece (paging needs it ended). */
export async function allEvents(c: CoreClient, sessionId: string): Promise<ExportPage> {
  let first: ExportPage;
  try {
    first = await c.call("session.export", { sessionId, limit: EXPORT_PAGE_LIMIT });
  } catch (e) {
    if (e instanceof RemoteError && e.data.code === "session_active") return c.call("session.export", { sessionId });
    throw e;
  }
  const events: TestEvent[] = [];
  for await (const page of exportPages(c, sessionId, first)) events.push(...page);
  return { session: first.session, events };
}

export interface EvidenceEntry {
  sha256: string;
  mediaType: string;
  file: string;
  byteLength: number;
}

const extension = (mediaType: string) => (mediaType === "image/png" ? "png" : /json/.test(mediaType) ? "json" : "bin");

const readme = (s: SessionInfo, evidence: number) => `DeviceRail Session ${s.id}

state ${s.state}, started ${isoSeconds(s.startedAtMs)}${s.endedAtMs ? `, ended ${isoSeconds(s.endedAtMs)}` : ""}, ${s.eventCount} events.

events.ndjson   the Session's events (DeviceRail TestEvent, protocol 1.5), one JSON object a line, by sequence
evidence/       the ${evidence} Evidence file(s) the events reference, each named <sha256>.<png|json>;
                the name is the SHA-256 of the bytes (check with: sha256sum evidence/*)
manifest.json   the Session, and each Evidence file's media type and size

Written by devicerail export.
`;

export async function exportCommand(given: string, opts: { output?: string; json?: boolean }): Promise<number> {
  const refuseFull = (dir: string) => {
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw new CliError(`${dir} already exists and is not empty; choose another folder with -o DIR`, EXIT.usage);
  };
  // -o is checked before the daemon is asked anything, then named after the whole id.
  outputDir(opts.output, `devicerail-session-${given}`);
  let dir = "";
  const manifest = await withClient(async (c) => {
    const sessionId = await resolveSession(c, given);
    dir = outputDir(opts.output, `devicerail-session-${sessionId}`);
    refuseFull(dir);
    const { session, events } = await allEvents(c, sessionId);
    mkdirSync(join(dir, "evidence"), { recursive: true });
    writeFileSync(join(dir, "events.ndjson"), events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const evidence: EvidenceEntry[] = [];
    for (const [sha256, mediaType] of assetRefsIn(events)) {
      const file = `evidence/${sha256}.${extension(mediaType)}`;
      const bytes = await c.evidence(sha256);
      writeFileSync(join(dir, file), bytes);
      evidence.push({ sha256, mediaType, file, byteLength: bytes.length });
    }
    const m = { format: "devicerail-session-export", formatVersion: 1, session, events: "events.ndjson", evidence };
    writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(m, null, 2)}\n`);
    writeFileSync(join(dir, "README.txt"), readme(session, evidence.length));
    return m;
  });
  if (opts.json) printJson({ dir, ...manifest });
  else stdout.write(`${dir}: ${manifest.session.eventCount} events, ${manifest.evidence.length} evidence file(s)\n`);
  return 0;
}
