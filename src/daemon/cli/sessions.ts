/** `sessions` and `export`: the recorded Sessions, and one of them as a self-contained folder. */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { SessionInfo } from "../../protocol/types/session.ts";
import { type CoreClient, withClient } from "./client.ts";
import { evidenceBytes } from "./device-commands.ts";
import { CliError, RpcCallError, isoSeconds, printJson, table } from "./output.ts";

export async function sessionsCommand(opts: { json?: boolean }): Promise<number> {
  const sessions = await withClient((c) => c.call<SessionInfo[]>("sessions.list"));
  if (opts.json) printJson(sessions);
  else if (sessions.length === 0) process.stdout.write("no sessions\n");
  else
    process.stdout.write(
      table(
        ["ID", "STATE", "STARTED", "EVENTS"],
        // Oldest first: ids are random, start times tell the story.
        [...sessions].sort((a, b) => a.startedAtMs - b.startedAtMs).map((s) => [s.id, s.state, isoSeconds(s.startedAtMs), String(s.eventCount)]),
      ),
    );
  return 0;
}

type ExportPage = { session: SessionInfo; events: TestEvent[]; nextAfterSequence?: number };

/** The whole log, in pages that each fit a frame; an active Session only in one piece (paging needs it ended). */
async function allEvents(c: CoreClient, sessionId: string): Promise<ExportPage> {
  const events: TestEvent[] = [];
  let after: number | undefined;
  let session: SessionInfo | undefined;
  try {
    for (;;) {
      const page = await c.call<ExportPage>("session.export", { sessionId, limit: 1000, ...(after ? { afterSequence: after } : {}) });
      session = page.session;
      events.push(...page.events);
      if (page.nextAfterSequence === undefined) return { session, events };
      after = page.nextAfterSequence;
    }
  } catch (e) {
    if (e instanceof RpcCallError && e.data.code === "session_active") return c.call<ExportPage>("session.export", { sessionId });
    throw e;
  }
}

export interface EvidenceEntry {
  sha256: string;
  mediaType: string;
  file: string;
  byteLength: number;
}

const extension = (mediaType: string) => (mediaType === "image/png" ? "png" : /json/.test(mediaType) ? "json" : "bin");

/** Every canonical AssetRef anywhere in the events (observations, UI trees, results, frames, verdicts). */
export function referencedEvidence(events: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!x || typeof x !== "object") return;
    const o = x as Record<string, unknown>;
    if (typeof o.sha256 === "string" && /^[0-9a-f]{64}$/.test(o.sha256) && typeof o.mediaType === "string" && typeof o.uri === "string")
      found.set(o.sha256, o.mediaType);
    for (const v of Object.values(o)) walk(v);
  };
  walk(events);
  return found;
}

const readme = (s: SessionInfo, evidence: number) => `DeviceRail Session ${s.id}

state ${s.state}, started ${isoSeconds(s.startedAtMs)}${s.endedAtMs ? `, ended ${isoSeconds(s.endedAtMs)}` : ""}, ${s.eventCount} events.

events.ndjson   the Session's events (DeviceRail TestEvent, protocol 1.5), one JSON object a line, by sequence
evidence/       the ${evidence} Evidence file(s) the events reference, each named <sha256>.<png|json>;
                the name is the SHA-256 of the bytes (check with: sha256sum evidence/*)
manifest.json   the Session, and each Evidence file's media type and size

Written by devicerail export.
`;

export async function exportCommand(sessionId: string, opts: { output?: string; json?: boolean }): Promise<number> {
  const dir = resolve(opts.output ?? `devicerail-session-${sessionId}`);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new CliError(`${dir} already exists and is not empty; choose another folder with -o DIR`);
  const manifest = await withClient(async (c) => {
    const { session, events } = await allEvents(c, sessionId);
    mkdirSync(join(dir, "evidence"), { recursive: true });
    writeFileSync(join(dir, "events.ndjson"), events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const evidence: EvidenceEntry[] = [];
    for (const [sha256, mediaType] of referencedEvidence(events)) {
      const file = `evidence/${sha256}.${extension(mediaType)}`;
      const bytes = await evidenceBytes(c, sha256);
      writeFileSync(join(dir, file), bytes);
      evidence.push({ sha256, mediaType, file, byteLength: bytes.length });
    }
    const m = { format: "devicerail-session-export", formatVersion: 1, session, events: "events.ndjson", evidence };
    writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(m, null, 2)}\n`);
    writeFileSync(join(dir, "README.txt"), readme(session, evidence.length));
    return m;
  });
  if (opts.json) printJson({ dir, ...manifest });
  else process.stdout.write(`${dir}: ${manifest.session.eventCount} events, ${manifest.evidence.length} evidence file(s)\n`);
  return 0;
}
