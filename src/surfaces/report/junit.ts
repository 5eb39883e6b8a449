/**
 * Sessions as JUnit XML, the format CI servers read: one testsuite per Session (device, OS, host
 * and Session id as properties), one testcase per verdict (pass, fail → failure, unknown →
 * skipped), or one per Session without verdicts, judged by how it ended. Screenshots are named in
 * system-out as `[[ATTACHMENT|path]]` lines, which Jenkins and Azure DevOps attach to the case.
 *
 * The output is valid against Jenkins' published junit-4.xsd, and also carries what Apache Ant's
 * stricter JUnit.xsd asks of each suite (properties, system-out and system-err, a timestamp
 * without a zone, hostname, id and package); only the totals on <testsuites>, which GitLab and
 * Azure DevOps read, are beyond Ant's schema.
 * Over 300 lines because the JUnit model, its XML writer and the attachments share one set of escaping rules.
 */
import type { TestEvent } from "../../protocol/types/event.ts";
import type { ReportModel } from "./model.ts";

type SuiteHead = Pick<ReportModel, "session" | "summary" | "device" | "host" | "daemonVersion">;

export interface JunitSuite {
  model: SuiteHead & Pick<ReportModel, "events">;
  /** Screenshot files to attach, by the case they belong to (a verdict's sequence, or 0 for the Session). */
  attachments: Map<number, string[]>;
}

/** A Session to write as JUnit from paged reads: its events are read once per pass. */
export interface JunitSource {
  head: SuiteHead;
  pages(): AsyncIterable<readonly TestEvent[]>;
  /** Screenshot files to attach to the suite. */
  attachments: string[];
}

interface Case {
  name: string;
  seconds: number;
  /** What went wrong, as JUnit says it. */
  result: { kind: "failure" | "error" | "skipped"; type: string; message: string } | null;
}

/** Failed actions listed in system-out at most; a longer list ends with a count. */
const MAX_FAILED_LINES = 500;
/** Characters of one failed action's line at most. */
const MAX_LINE_CHARS = 2_000;

const LINE_ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "[": "[\\" };

/**
 * Device or client text as one line that directs nothing: a backslash, CR and LF as `\\`, `\r`,
 * `\n`, the other line terminators (NEL, U+2028, U+2029) as `\uXXXX`, and `[[` as `[\[`.
 */
export const lineText = (s: string) =>
  s.replace(
    /[\\\n\r\u0085\u2028\u2029]|\[(?=\[)/g,
    (c) => LINE_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

// XML 1.0 cannot carry most control characters, even escaped.
const xmlText = (s: string) =>
  s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
    .replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string);
/** An attribute: never more than one line, whatever its value. */
const attr = (name: string, value: string | number) => ` ${name}="${xmlText(lineText(String(value)))}"`;
const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);
/** Ant's pattern: local date and time to the second, no zone (UTC here, said so in a property). */
const timestamp = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

type Verdict = Extract<TestEvent["payload"], { type: "verdictRecorded" }>["verdict"];

/** The cases of a Session's verdicts, one event at a time; `from` is the previous verdict's time. */
class VerdictCases {
  count = 0;
  private from: number;
  constructor(startedAtMs: number) {
    this.from = startedAtMs;
  }
  feed(e: TestEvent): Case | null {
    if (e.payload.type !== "verdictRecorded") return null;
    const v: Verdict = e.payload.verdict;
    this.count++;
    const c: Case = {
      name: v.summary.split("\n")[0]?.slice(0, 200) || `verdict ${this.count}`,
      seconds: (e.atMs - this.from) / 1000,
      result:
        v.status === "fail"
          ? { kind: "failure", type: "verdict.fail", message: v.summary }
          : v.status === "unknown"
            ? { kind: "skipped", type: "verdict.unknown", message: v.summary }
            : null,
    };
    this.from = e.atMs;
    return c;
  }
}

/** The one case of a Session without verdicts, judged by how it ended. */
function sessionCase(head: SuiteHead): Case {
  const { session, summary } = head;
  const ended = session.endedAtMs ?? Date.now();
  const outcome = summary?.outcome ?? (session.state === "active" ? null : "completed");
  const reason = summary?.reason ?? "";
  const errors = summary?.errors ?? 0;
  let result: Case["result"] = null;
  if (outcome === null)
    result = {
      kind: "skipped",
      type: "session.active",
      message: "the Session had not ended when this report was written",
    };
  else if (outcome === "failed")
    result = { kind: "failure", type: "session.failed", message: reason || "the Session ended as failed" };
  else if (outcome !== "completed")
    result = { kind: "error", type: `session.${outcome}`, message: reason || `the Session ended as ${outcome}` };
  else if (errors > 0)
    result = { kind: "failure", type: "session.errors", message: `${errors} action${errors === 1 ? "" : "s"} failed` };
  return { name: `session ${session.id}`, seconds: (ended - session.startedAtMs) / 1000, result };
}

interface Counts {
  tests: number;
  failure: number;
  error: number;
  skipped: number;
}

function tally(counts: Counts, c: Case): void {
  counts.tests++;
  if (c.result) counts[c.result.kind]++;
}

/** The first pass: how many cases of each kind the suite has. */
class SuiteCounts {
  readonly counts: Counts = { tests: 0, failure: 0, error: 0, skipped: 0 };
  private readonly verdicts: VerdictCases;
  constructor(private readonly head: SuiteHead) {
    this.verdicts = new VerdictCases(head.session.startedAtMs);
  }
  feed(e: TestEvent): void {
    const c = this.verdicts.feed(e);
    if (c) tally(this.counts, c);
  }
  done(): Counts {
    if (this.verdicts.count === 0) tally(this.counts, sessionCase(this.head));
    return this.counts;
  }
}

/**
 * One line per failed action, for system-out: what a reviewer reads first. Only running actions'
 * names are kept.
 */
class FailedActions {
  readonly lines: string[] = [];
  more = 0;
  private readonly names = new Map<string, string>();
  feed(e: TestEvent): void {
    const p = e.payload;
    if (p.type === "actionStarted") this.names.set(p.call.id, p.call.name);
    if (p.type !== "actionCompleted") return;
    const name = this.names.get(p.callId) ?? "action";
    this.names.delete(p.callId);
    if (p.outcome.outcome === "succeeded") return;
    if (this.lines.length >= MAX_FAILED_LINES) {
      this.more++;
      return;
    }
    const { code, message } = p.outcome.error;
    this.lines.push(
      clip(
        `#${e.sequence} ${lineText(name)} ${p.outcome.outcome}: ${lineText(code)}: ${lineText(message)}`,
        MAX_LINE_CHARS,
      ),
    );
  }
}

function caseXml(c: Case, classname: string): string {
  const head = `    <testcase${attr("name", c.name)}${attr("classname", classname)}${attr("time", seconds(c.seconds * 1000))}`;
  if (!c.result) return `${head}/>`;
  const text = xmlText(lineText(c.result.message));
  // Jenkins' schema gives <skipped> text content only, no attributes.
  if (c.result.kind === "skipped") return `${head}>\n      <skipped>${text}</skipped>\n    </testcase>`;
  return `${head}>\n      <${c.result.kind}${attr("message", c.result.message)}${attr("type", c.result.type)}>${text}</${c.result.kind}>\n    </testcase>`;
}

function suiteStart(head: SuiteHead, counts: Counts, index: number): string {
  const { session, summary, device } = head;
  const total = (session.endedAtMs ?? Date.now()) - session.startedAtMs;
  const platform = device
    ? device.platform.kind === "other"
      ? String((device.platform as { value?: unknown }).value)
      : device.platform.kind
    : "";
  const props: [string, string][] = [
    ["devicerail.session", session.id],
    ["devicerail.device.id", device?.id ?? summary?.deviceId ?? ""],
    ["devicerail.device.name", device?.name ?? ""],
    ["devicerail.device.platform", platform],
    ["devicerail.device.os", device?.osVersion ?? ""],
    ["devicerail.host", head.host],
    ["devicerail.version", head.daemonVersion],
    ["devicerail.outcome", summary?.outcome ?? (session.state === "active" ? "active" : "")],
    ["devicerail.timestamp.zone", "UTC"],
  ];
  const name = device ? `${device.name} (${device.id}) session ${session.id}` : `session ${session.id}`;
  return [
    `  <testsuite${attr("name", name)}${attr("tests", counts.tests)}${attr("failures", counts.failure)}${attr("errors", counts.error)}${attr("skipped", counts.skipped)}${attr("time", seconds(total))}${attr("timestamp", timestamp(session.startedAtMs))}${attr("hostname", head.host || "localhost")}${attr("id", index)}${attr("package", "devicerail")}>`,
    "    <properties>",
    ...props.map(([n, v]) => `      <property${attr("name", n)}${attr("value", v)}/>`),
    "    </properties>",
  ].join("\n");
}

function suiteEnd(head: SuiteHead, failed: FailedActions, attachments: readonly string[]): string {
  const { session, summary } = head;
  const system = [
    `DeviceRail Session ${session.id}: ${session.eventCount} events, ${summary?.actions ?? 0} actions, ${summary?.errors ?? 0} failed`,
    ...failed.lines,
    ...(failed.more ? [`… ${failed.more} more failed action${failed.more === 1 ? "" : "s"}`] : []),
    // The attachments are files this command wrote: the only directives in the output.
    ...attachments.map((path) => `[[ATTACHMENT|${path}]]`),
  ];
  return [
    `    <system-out>${xmlText(system.join("\n"))}</system-out>`,
    "    <system-err></system-err>",
    "  </testsuite>",
  ].join("\n");
}

const classnameOf = (head: SuiteHead) => `devicerail.${head.device?.id ?? head.summary?.deviceId ?? "session"}`;

function documentStart(all: Counts[], heads: readonly SuiteHead[]): string {
  const sum = (k: keyof Counts) => all.reduce((n, c) => n + c[k], 0);
  const time = heads.reduce((t, h) => t + ((h.session.endedAtMs ?? Date.now()) - h.session.startedAtMs), 0);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attr("name", "devicerail")}${attr("tests", sum("tests"))}${attr("failures", sum("failure"))}${attr("errors", sum("error"))}${attr("time", seconds(time))}>`,
  ].join("\n");
}

/** The document for Sessions whose events are in memory. */
export function junitXml(suites: readonly JunitSuite[]): string {
  const counts = suites.map((s) => {
    const c = new SuiteCounts(s.model);
    for (const e of s.model.events) c.feed(e);
    return c.done();
  });
  const out = [
    documentStart(
      counts,
      suites.map((s) => s.model),
    ),
  ];
  suites.forEach((s, i) => {
    out.push(suiteStart(s.model, counts[i] as Counts, i));
    const cases = new VerdictCases(s.model.session.startedAtMs);
    const failed = new FailedActions();
    const classname = classnameOf(s.model);
    for (const e of s.model.events) {
      failed.feed(e);
      const c = cases.feed(e);
      if (c) out.push(caseXml(c, classname));
    }
    if (cases.count === 0) out.push(caseXml(sessionCase(s.model), classname));
    out.push(suiteEnd(s.model, failed, [...s.attachments.values()].flat()));
  });
  out.push("</testsuites>", "");
  return out.join("\n");
}

/**
 * The same document written as the events are read: each Session's pages are read twice (the
 * counts, then the cases), and only the counts and at most MAX_FAILED_LINES lines are held.
 */
export async function* junitChunks(suites: readonly JunitSource[]): AsyncGenerator<string> {
  const counts: Counts[] = [];
  for (const s of suites) {
    const c = new SuiteCounts(s.head);
    for await (const page of s.pages()) for (const e of page) c.feed(e);
    counts.push(c.done());
  }
  yield `${documentStart(
    counts,
    suites.map((s) => s.head),
  )}\n`;
  for (const [i, s] of suites.entries()) {
    yield `${suiteStart(s.head, counts[i] as Counts, i)}\n`;
    const cases = new VerdictCases(s.head.session.startedAtMs);
    const failed = new FailedActions();
    const classname = classnameOf(s.head);
    for await (const page of s.pages()) {
      const xml: string[] = [];
      for (const e of page) {
        failed.feed(e);
        const c = cases.feed(e);
        if (c) xml.push(`${caseXml(c, classname)}\n`);
      }
      yield xml.join("");
    }
    if (cases.count === 0) yield `${caseXml(sessionCase(s.head), classname)}\n`;
    yield `${suiteEnd(s.head, failed, s.attachments)}\n`;
  }
  yield "</testsuites>\n";
}

/**
 * The screenshots a reviewer wants attached, one event at a time: the last one of the Session, and
 * the one before each failed action.
 */
export class AttachmentShots {
  private readonly shots: string[] = [];
  private last: string | null = null;
  /** The latest screenshot when each running action started. */
  private readonly started = new Map<string, string | null>();
  feed(e: TestEvent): void {
    const p = e.payload;
    if (p.type === "observationCaptured" && p.observation.screenshot?.sha256)
      this.last = p.observation.screenshot.sha256;
    if (p.type === "actionStarted") this.started.set(p.call.id, this.last);
    if (p.type !== "actionCompleted") return;
    const before = this.started.get(p.callId);
    this.started.delete(p.callId);
    if (p.outcome.outcome === "succeeded") {
      const r = p.outcome.result;
      this.last = r.after?.screenshot?.sha256 ?? r.before?.screenshot?.sha256 ?? this.last;
    } else if (before && !this.shots.includes(before)) this.shots.push(before);
  }
  result(): string[] {
    return this.last && !this.shots.includes(this.last) ? [...this.shots, this.last] : [...this.shots];
  }
}

export function attachmentShots(events: readonly TestEvent[]): string[] {
  const shots = new AttachmentShots();
  for (const e of events) shots.feed(e);
  return shots.result();
}
