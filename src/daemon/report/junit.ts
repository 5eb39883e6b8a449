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
 */
import type { TestEvent } from "../../protocol/types/event.ts";
import type { ReportModel } from "./model.ts";

export interface JunitSuite {
  model: Pick<ReportModel, "session" | "summary" | "device" | "host" | "daemonVersion" | "events">;
  /** Screenshot files to attach, by the case they belong to (a verdict's sequence, or 0 for the Session). */
  attachments: Map<number, string[]>;
}

interface Case {
  name: string;
  seconds: number;
  /** What went wrong, as JUnit says it. */
  result: { kind: "failure" | "error" | "skipped"; type: string; message: string } | null;
  sequence: number;
}

// XML 1.0 cannot carry most control characters, even escaped.
const xmlText = (s: string) =>
  s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string);
const attr = (name: string, value: string | number) => ` ${name}="${xmlText(String(value))}"`;
const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);
/** Ant's pattern: local date and time to the second, no zone (UTC here, said so in a property). */
const timestamp = (ms: number) => new Date(ms).toISOString().slice(0, 19);

const verdictsOf = (events: readonly TestEvent[]) =>
  events.flatMap((e) => (e.payload.type === "verdictRecorded" ? [{ sequence: e.sequence, atMs: e.atMs, verdict: e.payload.verdict }] : []));

function casesOf(model: JunitSuite["model"]): Case[] {
  const { session, summary, events } = model;
  const start = session.startedAtMs;
  const verdicts = verdictsOf(events);
  if (verdicts.length) {
    let from = start;
    return verdicts.map((v, i) => {
      const c: Case = {
        name: v.verdict.summary.split("\n")[0]?.slice(0, 200) || `verdict ${i + 1}`,
        seconds: (v.atMs - from) / 1000,
        sequence: v.sequence,
        result:
          v.verdict.status === "fail"
            ? { kind: "failure", type: "verdict.fail", message: v.verdict.summary }
            : v.verdict.status === "unknown"
              ? { kind: "skipped", type: "verdict.unknown", message: v.verdict.summary }
              : null,
      };
      from = v.atMs;
      return c;
    });
  }
  const ended = session.endedAtMs ?? Date.now();
  const outcome = summary?.outcome ?? (session.state === "active" ? null : "completed");
  const reason = summary?.reason ?? "";
  const errors = summary?.errors ?? 0;
  let result: Case["result"] = null;
  if (outcome === null) result = { kind: "skipped", type: "session.active", message: "the Session had not ended when this report was written" };
  else if (outcome === "failed") result = { kind: "failure", type: "session.failed", message: reason || "the Session ended as failed" };
  else if (outcome !== "completed") result = { kind: "error", type: `session.${outcome}`, message: reason || `the Session ended as ${outcome}` };
  else if (errors > 0) result = { kind: "failure", type: "session.errors", message: `${errors} action${errors === 1 ? "" : "s"} failed` };
  return [{ name: `session ${session.id}`, seconds: (ended - start) / 1000, sequence: 0, result }];
}

/** One line per failed action, for system-out: what a reviewer reads first. */
function failedActions(events: readonly TestEvent[]): string[] {
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const e of events) {
    const p = e.payload;
    if (p.type === "actionStarted") names.set(p.call.id, p.call.name);
    if (p.type === "actionCompleted" && p.outcome.outcome !== "succeeded")
      lines.push(`#${e.sequence} ${names.get(p.callId) ?? "action"} ${p.outcome.outcome}: ${p.outcome.error.code}: ${p.outcome.error.message}`);
  }
  return lines;
}

function suiteXml(suite: JunitSuite, index: number): string {
  const { model } = suite;
  const { session, summary, device } = model;
  const cases = casesOf(model);
  const count = (kind: string) => cases.filter((c) => c.result?.kind === kind).length;
  const total = ((session.endedAtMs ?? Date.now()) - session.startedAtMs) / 1000;
  const platform = device ? (device.platform.kind === "other" ? String((device.platform as { value?: unknown }).value) : device.platform.kind) : "";
  const props: [string, string][] = [
    ["devicerail.session", session.id],
    ["devicerail.device.id", device?.id ?? summary?.deviceId ?? ""],
    ["devicerail.device.name", device?.name ?? ""],
    ["devicerail.device.platform", platform],
    ["devicerail.device.os", device?.osVersion ?? ""],
    ["devicerail.host", model.host],
    ["devicerail.version", model.daemonVersion],
    ["devicerail.outcome", summary?.outcome ?? (session.state === "active" ? "active" : "")],
    ["devicerail.timestamp.zone", "UTC"],
  ];
  const out: string[] = [];
  const name = device ? `${device.name} (${device.id}) session ${session.id}` : `session ${session.id}`;
  out.push(
    `  <testsuite${attr("name", name)}${attr("tests", cases.length)}${attr("failures", count("failure"))}${attr("errors", count("error"))}${attr("skipped", count("skipped"))}${attr("time", seconds(total * 1000))}${attr("timestamp", timestamp(session.startedAtMs))}${attr("hostname", model.host || "localhost")}${attr("id", index)}${attr("package", "devicerail")}>`,
  );
  out.push("    <properties>", ...props.map(([n, v]) => `      <property${attr("name", n)}${attr("value", v)}/>`), "    </properties>");
  const classname = `devicerail.${device?.id ?? summary?.deviceId ?? "session"}`;
  for (const c of cases) {
    const head = `    <testcase${attr("name", c.name)}${attr("classname", classname)}${attr("time", seconds(c.seconds * 1000))}`;
    if (!c.result) out.push(`${head}/>`);
    // Jenkins' schema gives <skipped> text content only, no attributes.
    else if (c.result.kind === "skipped") out.push(`${head}>`, `      <skipped>${xmlText(c.result.message)}</skipped>`, "    </testcase>");
    else out.push(`${head}>`, `      <${c.result.kind}${attr("message", c.result.message)}${attr("type", c.result.type)}>${xmlText(c.result.message)}</${c.result.kind}>`, "    </testcase>");
  }
  const attachments = [...suite.attachments.values()].flat();
  const system = [
    `DeviceRail Session ${session.id}: ${session.eventCount} events, ${summary?.actions ?? 0} actions, ${summary?.errors ?? 0} failed`,
    ...failedActions(model.events),
    ...attachments.map((path) => `[[ATTACHMENT|${path}]]`),
  ];
  out.push(`    <system-out>${xmlText(system.join("\n"))}</system-out>`, "    <system-err></system-err>", "  </testsuite>");
  return out.join("\n");
}

export function junitXml(suites: readonly JunitSuite[]): string {
  const all = suites.map((s) => casesOf(s.model));
  const n = (kind: string) => all.flat().filter((c) => c.result?.kind === kind).length;
  const time = suites.reduce((t, s) => t + ((s.model.session.endedAtMs ?? Date.now()) - s.model.session.startedAtMs), 0);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attr("name", "devicerail")}${attr("tests", all.flat().length)}${attr("failures", n("failure"))}${attr("errors", n("error"))}${attr("time", seconds(time))}>`,
    ...suites.map((s, i) => suiteXml(s, i)),
    "</testsuites>",
    "",
  ].join("\n");
}

/** The screenshots a reviewer wants attached: the last one of the Session, and the one before each failed action. */
export function attachmentShots(events: readonly TestEvent[]): string[] {
  const shots: string[] = [];
  let last: string | null = null;
  const started = new Map<string, string | null>();
  for (const e of events) {
    const p = e.payload;
    if (p.type === "observationCaptured" && p.observation.screenshot?.sha256) last = p.observation.screenshot.sha256;
    if (p.type === "actionStarted") started.set(p.call.id, last);
    if (p.type === "actionCompleted") {
      if (p.outcome.outcome === "succeeded") {
        const r = p.outcome.result;
        last = r.after?.screenshot?.sha256 ?? r.before?.screenshot?.sha256 ?? last;
      } else {
        const before = started.get(p.callId);
        if (before && !shots.includes(before)) shots.push(before);
      }
    }
  }
  if (last && !shots.includes(last)) shots.push(last);
  return shots;
}
