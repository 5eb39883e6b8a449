/**
 * `report`: a Session as one self-contained HTML file (and, with --junit, as JUnit XML for CI),
 * built from what the daemon recorded: session.export, the session summary, and the evidence.
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { DeviceInfo, DevicesListResult } from "../../protocol/types/device.ts";
import type { SessionSummary } from "../../protocol/types/extensions.ts";
import { type JunitSuite, attachmentShots, junitXml } from "../report/junit.ts";
import { type ReportModel, type ReportSource, buildModel } from "../report/model.ts";
import { renderPage } from "../report/page.ts";
import { type CoreClient, withClient } from "./client.ts";
import { outputFile } from "./device-commands.ts";
import { CliError, RpcCallError, printJson } from "./output.ts";
import { allEvents } from "./sessions.ts";

/** The daemon, as a report needs it, through a CLI client. */
export function clientSource(c: CoreClient): ReportSource {
  let devices: DeviceInfo[] | null = null;
  return {
    exportSession: (id) => allEvents(c, id),
    async summary(id) {
      const { sessions } = await c.call<{ sessions: SessionSummary[] }>("devicerail.sessions.list", { limit: 1000 });
      return sessions.find((s) => s.id === id) ?? null;
    },
    async device(id) {
      devices ??= (await c.call<DevicesListResult>("devices.list")).devices;
      return devices.find((d) => d.id === id) ?? null;
    },
    evidence: (sha) => c.evidence(sha).catch(() => null),
  };
}

export interface ReportOpts {
  output?: string;
  fullImages?: boolean;
  open?: boolean;
  junit?: string;
  since?: number;
  json?: boolean;
}

/** The Sessions a report covers: those named, and with --since those started in that window (oldest first). */
async function sessionsFor(c: CoreClient, ids: string[], sinceMs: number | undefined): Promise<string[]> {
  if (sinceMs === undefined) return ids;
  const { sessions } = await c.call<{ sessions: SessionSummary[] }>("devicerail.sessions.list", { limit: 1000 });
  const cutoff = Date.now() - sinceMs;
  const recent = sessions.filter((s) => s.startedAtMs >= cutoff).reverse().map((s) => s.id);
  return [...ids, ...recent.filter((id) => !ids.includes(id))];
}

async function modelOf(c: CoreClient, sessionId: string, opts: ReportOpts): Promise<ReportModel> {
  try {
    return await buildModel(clientSource(c), sessionId, { daemonVersion: c.attached.hello.server.version, fullImages: opts.fullImages });
  } catch (e) {
    if (e instanceof RpcCallError && e.data.code === "session_not_found") throw new CliError(`no Session ${sessionId}; devicerail sessions lists them`);
    throw e;
  }
}

/** JUnit XML for the Sessions, with the screenshots it names written beside it. */
async function writeJunit(c: CoreClient, file: string, models: ReportModel[]): Promise<{ file: string; attachments: number }> {
  const dir = join(dirname(file), `${basename(file).replace(/\.xml$/i, "")}-attachments`);
  let attachments = 0;
  const suites: JunitSuite[] = [];
  for (const model of models) {
    const files: string[] = [];
    for (const sha of attachmentShots(model.events)) {
      const bytes = await c.evidence(sha).catch(() => null);
      if (!bytes) continue;
      const path = join(dir, model.session.id, `${sha}.png`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
      files.push(path);
      attachments++;
    }
    suites.push({ model, attachments: new Map([[0, files]]) });
  }
  writeFileSync(file, junitXml(suites));
  return { file, attachments };
}

export async function reportCommand(ids: string[], opts: ReportOpts): Promise<number> {
  if (ids.length === 0 && opts.since === undefined) throw new CliError("name a Session (devicerail sessions lists them), or give --since AGE with --junit", 2);
  if (!opts.junit && (ids.length !== 1 || opts.since !== undefined)) throw new CliError("an HTML report is of one Session; for several, write JUnit with --junit FILE", 2);
  const html = ids.length === 1 && opts.since === undefined && (opts.output !== undefined || !opts.junit);
  const htmlFile = html ? resolve(outputFile(opts.output, `devicerail-report-${ids[0]}.html`)) : null;
  const junitFile = opts.junit ? resolve(outputFile(opts.junit, "devicerail-junit.xml")) : null;
  const started = performance.now();
  const done = await withClient(async (c) => {
    const models: ReportModel[] = [];
    for (const id of await sessionsFor(c, ids, opts.since)) models.push(await modelOf(c, id, opts));
    const junit = junitFile ? await writeJunit(c, junitFile, models) : null;
    return { models, junit };
  });
  const out: Record<string, unknown> = { ms: Math.round(performance.now() - started) };
  const lines: string[] = [];
  if (htmlFile) {
    const model = done.models[0] as ReportModel;
    writeFileSync(htmlFile, renderPage(model));
    const bytes = statSync(htmlFile).size;
    out.html = { file: htmlFile, bytes, events: model.events.length, screenshots: Object.keys(model.images).length };
    lines.push(`${htmlFile}: ${model.events.length} events, ${Object.keys(model.images).length} screenshots, ${(bytes / 1024).toFixed(0)} KiB`);
    if (opts.open) openInBrowser(htmlFile);
  }
  if (done.junit) {
    out.junit = { ...done.junit, sessions: done.models.length };
    lines.push(`${done.junit.file}: ${done.models.length} Session${done.models.length === 1 ? "" : "s"}, ${done.junit.attachments} screenshot${done.junit.attachments === 1 ? "" : "s"} attached`);
  }
  if (opts.json) printJson(out);
  else process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Opens a file or URL in the user's browser; says where it is when no opener works. */
export function openInBrowser(target: string): void {
  const command = process.platform === "darwin" ? ["open", target] : process.platform === "win32" ? ["cmd", "/c", "start", "", target] : ["xdg-open", target];
  try {
    const child = Bun.spawn(command, { stdio: ["ignore", "ignore", "ignore"] });
    child.unref();
  } catch {
    process.stderr.write(`devicerail: could not start a browser; open ${target}\n`);
  }
}

/**
 * `sessions --open ID`: the daemon's live report page of a Session, opened in the browser (its
 * loopback TCP address: the page follows the Session over the event plane, which admits only that
 * origin). The URL is printed too, for a browser on another desktop.
 */
export async function openLiveReport(sessionId: string, opts: { json?: boolean }): Promise<number> {
  const url = await withClient(async (c) => {
    const { sessions } = await c.call<{ sessions: SessionSummary[] }>("devicerail.sessions.list", { limit: 1000 });
    if (!sessions.some((s) => s.id === sessionId)) throw new CliError(`no Session ${sessionId}; devicerail sessions lists them`);
    const port = c.attached.record.port;
    if (port === undefined) throw new CliError("the daemon has no TCP listener for a browser to reach; start it with devicerail daemon start");
    return `http://127.0.0.1:${port}/sessions/${sessionId}/report`;
  });
  if (opts.json) printJson({ url });
  else process.stdout.write(`${url}\n`);
  openInBrowser(url);
  return 0;
}
