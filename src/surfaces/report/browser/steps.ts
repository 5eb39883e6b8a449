/**
 * The steps the page shows (one per action, observation, verdict, …), derived one event at a time
 * (ingest) so that the live viewer can append events as they arrive and redraw only the step they
 * touch. An action's start and completion make one step.
 */
import type { Viewport } from "../../../protocol/types/device.ts";
import type { TestEvent } from "../../../protocol/types/event.ts";
import { model } from "./data.ts";
import { el } from "./dom.ts";
import { clip, foregroundApp, isNum, isObj, oneLine, plural } from "./format.ts";

export type Payload = TestEvent["payload"];
type PayloadOf<T extends Payload["type"]> = Extract<Payload, { type: T }>;
export type ActionCall = PayloadOf<"actionStarted">["call"];
type Outcome = PayloadOf<"actionCompleted">["outcome"];
export type ActionResult = Extract<Outcome, { outcome: "succeeded" }>["result"];
export type Observation = PayloadOf<"observationCaptured">["observation"];
export type ErrorInfo = PayloadOf<"error">["error"];
export type Verdict = PayloadOf<"verdictRecorded">["verdict"];

export type StepKind = "action" | "observation" | "verdict" | "session" | "error" | "media";
export type StepStatus = "ok" | "failed" | "cancelled" | "timedOut";
/** Which observation a screenshot or tree is of. */
export type ShotRole = "screen" | "before" | "after";

/** A screenshot to show, with the viewport its markers are drawn in; `sha` null when it was withheld. */
export interface Shot {
  role: ShotRole;
  sha: string | null;
  viewport: Viewport | null;
  omission: string | null;
}

export interface Step {
  seq: number;
  index: number;
  kind: StepKind;
  title: string;
  status: StepStatus;
  atMs: number;
  event: TestEvent;
  // Filled in per kind:
  call: ActionCall | null;
  completed: TestEvent | null;
  result: ActionResult | null;
  error: ErrorInfo | null;
  durationMs: number | null;
  timeoutMs: number | null;
  pending: boolean;
  verdict: Verdict | null;
  sub: string;
  shots: Shot[];
  /** The observations whose tree the step may show, first choice first. */
  treeCandidates: { obs: Observation | null | undefined; role: ShotRole }[];
  observation: Observation | null;
  /** The step's timeline item, filled in by the timeline. */
  li: HTMLLIElement;
}

/** In sequence order. */
export const steps: Step[] = [];
export const stepBySeq = new Map<number, Step>();
const actionByCallId = new Map<string, Step>();
export let lastSequence = 0;

function newStep(event: TestEvent, kind: StepKind, title: string): Step {
  const step: Step = {
    seq: event.sequence,
    index: steps.length,
    kind,
    title,
    status: "ok",
    atMs: event.atMs,
    event,
    call: null,
    completed: null,
    result: null,
    error: null,
    durationMs: null,
    timeoutMs: null,
    pending: false,
    verdict: null,
    sub: "",
    shots: [],
    treeCandidates: [],
    observation: null,
    li: el("li", { class: "step", id: `seq-${event.sequence}`, "data-seq": event.sequence, tabindex: "-1" }),
  };
  steps.push(step);
  stepBySeq.set(step.seq, step);
  return step;
}

/** A screenshot to show: the observation's, with the viewport its markers are drawn in. */
function shotOf(role: ShotRole, obs: Observation | null | undefined): Shot | null {
  if (!isObj(obs)) return null;
  const sha = obs.screenshot && obs.screenshot.sha256;
  if (!sha)
    return obs.screenshotOmission
      ? { role, sha: null, omission: obs.screenshotOmission, viewport: obs.viewport }
      : null;
  return { role, sha, viewport: obs.viewport, omission: null };
}

const present = <T>(x: T | null): x is T => Boolean(x);

/**
 * Adds one event to the steps. Returns the step it created or changed and whether it is new,
 * or null when the event was already seen (a live replay can overlap the embedded events).
 */
export function ingest(event: TestEvent): { step: Step; isNew: boolean } | null {
  if (!isObj(event) || !isNum(event.sequence) || event.sequence <= lastSequence) return null;
  lastSequence = event.sequence;
  // The events are the daemon's, yet read as untrusted: a part that is not an object reads as empty.
  const p = (isObj(event.payload) ? event.payload : {}) as Payload;
  switch (p.type) {
    case "actionStarted": {
      const call = (isObj(p.call) ? p.call : {}) as ActionCall;
      const step = newStep(event, "action", String(call.name ?? "action"));
      step.call = call;
      step.pending = true;
      if (call.id) actionByCallId.set(call.id, step);
      deriveAction(step);
      return { step, isNew: true };
    }
    case "actionCompleted": {
      let step = actionByCallId.get(p.callId);
      const isNew = !step;
      // A completion whose start is not in the record still shows, as a step of its own.
      if (!step) step = newStep(event, "action", "action");
      step.completed = event;
      step.pending = false;
      deriveAction(step);
      return { step, isNew };
    }
    case "observationCaptured": {
      const step = newStep(event, "observation", "observation");
      const obs = p.observation;
      step.observation = obs;
      step.shots = [shotOf("screen", obs)].filter(present);
      step.treeCandidates = [{ obs, role: "screen" }];
      const app = isObj(obs) ? foregroundApp(obs.metadata) : null;
      const screen =
        isObj(obs) && isObj(obs.metadata) && typeof obs.metadata.screen === "string" ? obs.metadata.screen : null;
      step.sub = [app, screen && `screen ${screen}`].filter(Boolean).join(" · ");
      return { step, isNew: true };
    }
    case "verdictRecorded": {
      const verdict = (isObj(p.verdict) ? p.verdict : {}) as Verdict;
      const step = newStep(event, "verdict", `verdict ${verdict.status ?? "unknown"}`);
      step.verdict = verdict;
      step.sub = oneLine(verdict.summary ?? "");
      step.shots = (Array.isArray(verdict.evidence) ? verdict.evidence : [])
        .filter((ref) => isObj(ref) && ref.sha256 && model.images[ref.sha256])
        .map((ref): Shot => ({ role: "screen", sha: ref.sha256 ?? null, viewport: null, omission: null }));
      return { step, isNew: true };
    }
    case "sessionStarted":
      return { step: newStep(event, "session", "session started"), isNew: true };
    case "sessionEnded": {
      const step = newStep(event, "session", "session ended");
      step.sub = [p.outcome, p.reason].filter(Boolean).join(" — ");
      model.session.state = "ended";
      if (!model.session.endedAtMs) model.session.endedAtMs = event.atMs;
      return { step, isNew: true };
    }
    case "error": {
      const step = newStep(event, "error", "error");
      step.error = p.error;
      return { step, isNew: true };
    }
    case "mediaStreamStarted": {
      const step = newStep(event, "media", "media stream started");
      step.sub = isObj(p.stream) ? String(p.stream.kind ?? "") : "";
      return { step, isNew: true };
    }
    case "mediaFrameCaptured": {
      const frame = isObj(p.frame) ? p.frame : null;
      const step = newStep(event, "media", "media frame");
      step.sub = isNum(frame?.frameIndex) ? `frame ${frame.frameIndex}` : "";
      const sha = frame && isObj(frame.evidence) ? frame.evidence.sha256 : null;
      if (sha && model.images[sha]) step.shots = [{ role: "screen", sha, viewport: null, omission: null }];
      return { step, isNew: true };
    }
    case "mediaStreamEnded": {
      const step = newStep(event, "media", "media stream ended");
      step.sub = isNum(p.frameCount) ? plural(p.frameCount, "frame") : "";
      return { step, isNew: true };
    }
    default:
      // A payload this page does not know yet: still a (minor) step, so the sequence has no holes.
      return { step: newStep(event, "media", String((p as { type?: unknown }).type ?? "event")), isNew: true };
  }
}

/** Status, duration, screenshots and error of an action from its start and completion. */
function deriveAction(step: Step): void {
  const started = step.call ? step.event : null;
  const completion = step.completed ? (step.completed.payload as PayloadOf<"actionCompleted">) : null;
  const outcome = completion && isObj(completion.outcome) ? completion.outcome : null;
  step.sub = step.call ? describeArgs(step.call) : "";
  if (!outcome) return;
  if (outcome.outcome === "succeeded") {
    const result = (isObj(outcome.result) ? outcome.result : {}) as ActionResult;
    step.status = "ok";
    step.result = result;
    if (isNum(result.finishedAtMs) && isNum(result.startedAtMs))
      step.durationMs = result.finishedAtMs - result.startedAtMs;
    step.shots = [shotOf("before", result.before), shotOf("after", result.after)].filter(present);
    step.treeCandidates = [
      { obs: result.after, role: "after" as const },
      { obs: result.before, role: "before" as const },
    ].filter((c) => isObj(c.obs));
    const element = elementOf(result);
    const args = step.call ? step.call.arguments : null;
    const target = isObj(args) ? args.target : null;
    if (element && !(isObj(target) && target.kind === "node"))
      step.sub = [step.sub, `→ ${element}`].filter(Boolean).join(" ");
  } else {
    step.status = ["failed", "cancelled", "timedOut"].includes(outcome.outcome) ? outcome.outcome : "failed";
    step.error = outcome.error ?? null;
    step.timeoutMs = "timeoutMs" in outcome && isNum(outcome.timeoutMs) ? outcome.timeoutMs : null;
    if (started && step.completed) step.durationMs = step.completed.atMs - started.atMs;
  }
}

/** The element an element action found (`output.element.stableNodeId`), if any. */
export function elementOf(result: ActionResult): string | null {
  const output = result.output;
  if (!isObj(output) || !isObj(output.element)) return null;
  return (output.element.stableNodeId as string | undefined) ?? null;
}

/** A short, one-line reading of an action's arguments for the timeline. */
function describeArgs(call: ActionCall): string {
  if (call.argumentsRedacted) return "";
  const a = call.arguments;
  if (!isObj(a)) return "";
  if (isNum(a.x) && isNum(a.y)) return `at ${a.x},${a.y}${isNum(a.durationMs) ? ` for ${a.durationMs} ms` : ""}`;
  if (isNum(a.startX) && isNum(a.startY) && isNum(a.endX) && isNum(a.endY))
    return `${a.startX},${a.startY} → ${a.endX},${a.endY}`;
  if (isNum(a.deltaX) && isNum(a.deltaY)) return `by ${a.deltaX},${a.deltaY}`;
  if (isObj(a.target)) return describeTarget(a.target);
  if (isObj(a.selector))
    return describeSelector(a.selector) + (typeof a.condition === "string" ? ` ${a.condition}` : "");
  if (typeof a.text === "string") return clip(JSON.stringify(a.text), 60);
  const compact = JSON.stringify(a);
  return compact === "{}" ? "" : clip(compact, 80);
}

function describeTarget(t: Record<string, unknown>): string {
  if (t.kind === "node" && isObj(t.node)) return `node ${t.node.stableNodeId ?? "?"}`;
  if (t.kind === "selector" && isObj(t.selector)) return describeSelector(t.selector);
  return clip(JSON.stringify(t), 80);
}

function describeSelector(s: Record<string, unknown>): string {
  const parts: string[] = [];
  const textOf = (v: unknown) => (isObj(v) ? v.value : v);
  if (s.identifier) parts.push(`#${s.identifier}`);
  if (s.role) parts.push(`role=${s.role}`);
  if (s.text) parts.push(`text ${JSON.stringify(String(textOf(s.text)))}`);
  if (s.name) parts.push(`name ${JSON.stringify(String(textOf(s.name)))}`);
  if (s.value) parts.push(`value ${JSON.stringify(String(textOf(s.value)))}`);
  if (s.css) parts.push(`css ${s.css}`);
  return clip(parts.join(" ") || "selector", 80);
}

/** The steps the "errors" filter shows: actions that did not succeed, error events, failed verdicts. */
export function isErrorStep(step: Step): boolean {
  if (step.kind === "action") return !step.pending && step.status !== "ok";
  if (step.kind === "error") return true;
  return step.kind === "verdict" && step.verdict !== null && step.verdict.status === "fail";
}

/** The step at `seq`, or the nearest one before it, or the first one. */
export function stepAtOrBefore(seq: number): Step | null {
  let lo = 0;
  let hi = steps.length - 1;
  let found = steps[0] || null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const step = steps[mid] as Step;
    if (step.seq <= seq) {
      found = step;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
