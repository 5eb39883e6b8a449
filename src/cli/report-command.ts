/**
 * `report`: a Session as one self-contained HTML file (and, with --junit, as JUnit XML for CI),
 * built from what the daemon recorded: the session summary, the events a page at a time, and the
 * evidence. Both files are written as the events are read, so a Session of any size takes the
 * same memory here and in the daemon.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { AttachmentShots, type JunitSource, junitChunks } from "../surfaces/report/junit.ts";
import { type ReportHead, type ReportSource, deviceNamedById, modelChunks } from "../surfaces/report/model.ts";
import { clientSource } from "../surfaces/report/source.ts";
import { pageChunks, pagePolicy } from "../surfaces/report/page.ts";
import { type CoreClient, withClient } from "./client.ts";
import { credentialFor } from "./daemon-control.ts";
import { outputFile } from "./device-commands.ts";
import { RemoteError } from "../client/remote-error.ts";
import { CliError, EXIT, printJson } from "./output.ts";
import { resolveSession } from "./sessions.ts";
import { stdout, stderr } from "./std-streams.ts";

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
  const { sessions } = await c.call("devicerail.sessions.list", { limit: 1000 });
  const cutoff = Date.now() - sinceMs;
  const recent = sessions
    .filter((s) => s.startedAtMs >= cutoff)
    .reverse()
    .map((s) => s.id);
  return [...ids, ...recent.filter((id) => !ids.includes(id))];
}

async function headOf(source: ReportSource, sessionId: string): Promise<ReportHead> {
  try {
    return await source.head(sessionId);
  } catch (e) {
    if (e instanceof RemoteError && e.data.code === "session_not_found")
      throw new CliError(`no Session ${sessionId}; devicerail sessions lists them`);
    throw e;
  }
}

/** Writes `chunks` to `file` as they come, through a file beside it renamed at the end: a failed report leaves no half file. */
async function writeChunks(file: string, chunks: AsyncIterable<string>): Promise<void> {
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  const fd = openSync(partial, "w");
  try {
    for await (const chunk of chunks) writeSync(fd, chunk);
    closeSync(fd);
    renameSync(partial, file);
  } catch (e) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw e;
  }
}

async function writeHtml(source: ReportSource, head: ReportHead, file: string, opts: ReportOpts, version: string) {
  const counts = { events: 0, screenshots: 0 };
  const model = modelChunks(source, head, { daemonVersion: version, fullImages: opts.fullImages, counts });
  await writeChunks(
    file,
    pageChunks(model, { policy: pagePolicy(null, false), daemonVersion: version, sessionId: head.session.id }),
  );
  return { file, bytes: statSync(file).size, ...counts };
}

/** JUnit XML for the Sessions, with the screenshots it names written beside it. */
async function writeJunit(
  c: CoreClient,
  source: ReportSource,
  file: string,
  heads: ReportHead[],
  version: string,
): Promise<{ file: string; attachments: number }> {
  const dir = join(dirname(file), `${basename(file).replace(/\.xml$/i, "")}-attachments`);
  let attachments = 0;
  const suites: JunitSource[] = [];
  for (const { session, summary } of heads) {
    const shots = new AttachmentShots();
    for await (const page of source.pages(session)) for (const e of page) shots.feed(e);
    const files: string[] = [];
    for (const sha of shots.result()) {
      const bytes = await c.evidence(sha).catch(() => null);
      if (!bytes) continue;
      const path = join(dir, session.id, `${sha}.png`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
      files.push(path);
      attachments++;
    }
    const deviceId = summary?.deviceId ?? null;
    // A device no longer attached is still named by its id.
    const device = deviceId ? ((await source.device(deviceId)) ?? deviceNamedById(deviceId)) : null;
    suites.push({
      head: { session, summary, device, host: hostname(), daemonVersion: version },
      pages: () => source.pages(session),
      attachments: files,
    });
  }
  await writeChunks(file, junitChunks(suites));
  return { file, attachments };
}

export async function reportCommand(ids: string[], opts: ReportOpts): Promise<number> {
  if (ids.length === 0 && opts.since === undefined)
    throw new CliError("name a Session (devicerail sessions lists them), or give --since AGE with --junit", EXIT.usage);
  if (!opts.junit && (ids.length !== 1 || opts.since !== undefined))
    throw new CliError("an HTML report is of one Session; for several, write JUnit with --junit FILE", EXIT.usage);
  const html = ids.length === 1 && opts.since === undefined && (opts.output !== undefined || !opts.junit);
  // Output paths are checked before the daemon is asked anything, then named after the whole id.
  const htmlPath = (id: string) => (html ? resolve(outputFile(opts.output, `devicerail-report-${id}.html`)) : null);
  htmlPath(ids[0] ?? "");
  const junitFile = opts.junit ? resolve(outputFile(opts.junit, "devicerail-junit.xml")) : null;
  const started = performance.now();
  const done = await withClient(async (c) => {
    const source = clientSource(c, (sha) => c.evidence(sha));
    const version = c.attached.hello.server.version;
    const whole: string[] = [];
    for (const id of ids) whole.push(await resolveSession(c, id));
    const htmlFile = htmlPath(whole[0] ?? "");
    const heads: ReportHead[] = [];
    // Every Session is known before anything is written.
    for (const id of await sessionsFor(c, whole, opts.since)) heads.push(await headOf(source, id));
    const page = htmlFile ? await writeHtml(source, heads[0] as ReportHead, htmlFile, opts, version) : null;
    const junit = junitFile ? await writeJunit(c, source, junitFile, heads, version) : null;
    return { page, junit, sessions: heads.length };
  });
  const out: Record<string, unknown> = { ms: Math.round(performance.now() - started) };
  const lines: string[] = [];
  if (done.page) {
    const { file, bytes, events, screenshots } = done.page;
    out.html = { file, bytes, events, screenshots };
    lines.push(`${file}: ${events} events, ${screenshots} screenshots, ${(bytes / 1024).toFixed(0)} KiB`);
    if (opts.open) openInBrowser(file);
  }
  if (done.junit) {
    out.junit = { ...done.junit, sessions: done.sessions };
    lines.push(
      `${done.junit.file}: ${done.sessions} Session${done.sessions === 1 ? "" : "s"}, ${done.junit.attachments} screenshot${done.junit.attachments === 1 ? "" : "s"} attached`,
    );
  }
  if (opts.json) printJson(out);
  else stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Opens a file or URL in the user's browser; says where it is when no opener works. */
export function openInBrowser(target: string): void {
  const command =
    process.platform === "darwin"
      ? ["open", target]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", target]
        : ["xdg-open", target];
  try {
    const child = Bun.spawn(command, { stdio: ["ignore", "ignore", "ignore"] });
    child.unref();
  } catch {
    stderr.write(`devicerail: could not start a browser; open ${target}\n`);
  }
}

/**
 * `sessions --open ID`: the daemon's live report page of a Session, opened in the browser (its
 * loopback TCP address: the page follows the Session over the event plane, which admits only that
 * origin). The URL is printed too, for a browser on another desktop.
 *
 * On a port that requires a token the URL carries a ticket instead (transports/viewer-passes.ts):
 * a browser sends no bearer token, and handing it the token would put the secret in the opener's
 * argv, which every local user can read. The ticket opens that one page once, within a minute.
 */
export async function openLiveReport(
  given: string,
  opts: { json?: boolean },
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const url = await withClient(async (c) => {
    const sessionId = await resolveSession(c, given);
    const { sessions } = await c.call("devicerail.sessions.list", { limit: 1000 });
    if (!sessions.some((s) => s.id === sessionId))
      throw new CliError(`no Session ${sessionId}; devicerail sessions lists them`);
    const { record } = c.attached;
    const port = record.port;
    if (port === undefined)
      throw new CliError(
        "the daemon has no TCP listener for a browser to reach; start it with devicerail daemon start",
      );
    const page = `http://127.0.0.1:${port}/sessions/${sessionId}/report`;
    if (credentialFor(record, { host: record.host ?? "127.0.0.1", port }, env) === null) return page;
    const res = await c.http(`/sessions/${sessionId}/report/ticket`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    if (!res.ok)
      throw new CliError(
        `the daemon gave no ticket for the report page (HTTP ${res.status}); devicerail report ${sessionId} --open writes it to a file instead`,
      );
    return `http://127.0.0.1:${port}${((await res.json()) as { path: string }).path}`;
  }, env);
  if (opts.json) printJson({ url });
  else stdout.write(`${url}\n`);
  openInBrowser(url);
  return 0;
}
