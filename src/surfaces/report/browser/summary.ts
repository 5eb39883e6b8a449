/** The header's fields and the filters' counts, redrawn whole whenever an event arrives. */
import { model, startMs } from "./data.ts";
import { el } from "./dom.ts";
import { durationText, foregroundApp, isNum, isObj, isoLocal } from "./format.ts";
import { fields, filterButtons, stateBadge } from "./layout.ts";
import { type Payload, type Step, isErrorStep, steps } from "./steps.ts";

export function renderSummary(): void {
  const { session, summary, device } = model;
  const deviceId = device ? device.id : summary && summary.deviceId;
  fields.device.textContent = device ? `${device.name} (${device.id})` : deviceId || "—";
  const platform = device && isObj(device.platform) ? device.platform : null;
  fields.platform.textContent = platform
    ? platform.kind === "other" && platform.value
      ? platform.value
      : String(platform.kind)
    : "—";
  fields.os.textContent = (device && device.osVersion) || "—";
  fields.app.textContent = firstForegroundApp() || "—";
  fields.host.textContent = model.host || "—";
  fields.version.textContent = model.daemonVersion || "—";
  fields.started.textContent = isNum(session.startedAtMs) ? isoLocal(session.startedAtMs) : "—";

  let ended: Step | null = null;
  for (const s of steps) if (s.kind === "session" && s.title === "session ended") ended = s;
  const endMs = session.endedAtMs ?? (ended ? ended.atMs : null);
  const lastEvent = model.events[model.events.length - 1];
  if (isNum(endMs)) fields.duration.textContent = durationText(endMs - startMs);
  else if (session.state === "active")
    fields.duration.textContent = `${durationText(lastEvent ? lastEvent.atMs - startMs : 0)} so far`;
  else fields.duration.textContent = durationText(summary ? summary.durationMs : null);

  const endPayload = ended ? (ended.event.payload as Extract<Payload, { type: "sessionEnded" }>) : null;
  const outcome =
    (endPayload && endPayload.outcome) ||
    (summary && summary.outcome) ||
    (session.state === "active" ? "running" : "—");
  const reason = (endPayload && endPayload.reason) || (summary && summary.reason);
  fields.outcome.textContent = reason ? `${outcome} — ${reason}` : outcome;
  fields.outcome.setAttribute("data-outcome", outcome);

  const verdicts: { status: string; summary?: string }[] = steps
    .filter((s) => s.kind === "verdict")
    .map((s) => s.verdict ?? { status: "unknown" });
  if (verdicts.length === 0 && summary && summary.verdict) verdicts.push(summary.verdict);
  fields.verdicts.replaceChildren(
    ...(verdicts.length
      ? verdicts.map((v) =>
          el("span", { class: "verdict", "data-status": v.status }, `${v.status}: ${v.summary ?? ""}`),
        )
      : ["none"]),
  );

  // Long values are cut with an ellipsis: the whole text stays on hover.
  for (const dd of Object.values(fields)) dd.title = dd.textContent ?? "";
  if (isNum(session.startedAtMs)) fields.started.title = new Date(session.startedAtMs).toISOString();

  stateBadge.textContent = session.state;
  stateBadge.setAttribute("data-state", session.state);
}

function firstForegroundApp(): string | null {
  for (const s of steps) {
    const observations = s.observation ? [s.observation] : s.result ? [s.result.before, s.result.after] : [];
    for (const obs of observations) {
      const name = isObj(obs) ? foregroundApp(obs.metadata) : null;
      if (name) return name;
    }
  }
  return null;
}

export function renderCounts(): void {
  let actions = 0;
  let errors = 0;
  for (const s of steps) {
    if (s.kind === "action") actions++;
    if (isErrorStep(s)) errors++;
  }
  const count = (key: keyof typeof filterButtons) => filterButtons[key].querySelector(".count") as HTMLElement;
  count("all").textContent = String(steps.length);
  count("actions").textContent = String(actions);
  count("errors").textContent = String(errors);
  filterButtons.errors.classList.toggle("has-errors", errors > 0);
}
