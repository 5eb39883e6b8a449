/** The detail pane, only ever for the selected step: its header, error, screenshots, facts and tree. */
import { live, model, offsetText, startMs } from "./data.ts";
import { el, setAttrs } from "./dom.ts";
import { durationText, errorText, foregroundApp, isNum, isObj, isoLocal, plural, pretty } from "./format.ts";
import { detail } from "./layout.ts";
import { type Marker, imageFor, markersFor, markersSvg, viewportOf } from "./markers.ts";
import { type Observation, type Shot, type Step, isErrorStep, steps } from "./steps.ts";
import { openTreeSlot, treeSlot } from "./tree-view.ts";
import { treeFetches, treeNodes, treeShaOf } from "./trees.ts";
import { openViewer } from "./viewer.ts";

export function renderDetail(step: Step): void {
  const parts = [detailHeader(step)];
  if (step.error) parts.push(detailError(step));
  parts.push(...detailShots(step));
  if (step.kind === "action") parts.push(...detailAction(step));
  if (step.kind === "verdict") {
    const status = step.verdict?.status ?? "unknown";
    parts.push(
      detailSection(
        "Verdict",
        el("p", { class: "verdict-summary", "data-status": status }, `${status}: ${step.verdict?.summary ?? ""}`),
      ),
    );
  }
  if (step.kind === "session") parts.push(sessionFacts(step));
  else if (step.kind === "media" || step.kind === "error")
    parts.push(detailSection("Event", el("pre", { class: "event" }, pretty(step.event.payload))));
  if (step.observation) parts.push(observationFacts(step.observation));
  parts.push(openTreeSlot(step));
  detail.replaceChildren(...parts);
}

function detailHeader(step: Step): HTMLElement {
  const badges = el(
    "div",
    { class: "detail-meta" },
    el("span", { class: "badge", "data-kind": step.kind }, step.kind),
    step.kind === "action"
      ? el(
          "span",
          { class: "badge status", "data-status": step.pending ? "pending" : step.status },
          step.pending ? "no result" : step.status,
        )
      : null,
    el("span", { class: "meta" }, `#${step.seq}`),
    el("span", { class: "meta" }, offsetText(step.atMs)),
    isNum(step.durationMs) ? el("span", { class: "meta" }, `${step.durationMs} ms`) : null,
  );
  return el(
    "div",
    { class: "detail-head" },
    el("h2", null, step.title),
    badges,
    step.sub ? el("p", { class: "detail-sub" }, step.sub) : null,
  );
}

function detailError(step: Step): HTMLElement {
  const e = step.error;
  const box = el("div", { class: "detail-error", "data-status": step.status }, el("strong", null, errorText(e)));
  const extra: string[] = [];
  if (isObj(e) && typeof e.retryable === "boolean") extra.push(e.retryable ? "retryable" : "not retryable");
  if (isNum(step.timeoutMs)) extra.push(`timed out after ${step.timeoutMs} ms`);
  if (extra.length) box.append(el("div", { class: "error-extra" }, extra.join(" · ")));
  if (isObj(e) && e.details !== null && e.details !== undefined)
    box.append(el("pre", { class: "error-details" }, pretty(e.details)));
  return box;
}

function detailShots(step: Step): HTMLElement[] {
  const markers = markersFor(step);
  // An element action's marker needs its before tree; live, that may still be on its way.
  const beforeSha = step.result ? treeShaOf(step.result.before) : null;
  treeSlot.markersWaitFor =
    beforeSha && !treeNodes(beforeSha) && treeFetches.get(beforeSha) === "pending" ? beforeSha : null;
  const figures: HTMLElement[] = [];
  const notes: HTMLElement[] = [];
  for (const shot of step.shots) {
    if (!shot.sha) {
      notes.push(
        el(
          "p",
          { class: "omission" },
          `${shot.role} screenshot withheld (${shot.omission === "protectedAction" ? "protected action" : shot.omission})`,
        ),
      );
      continue;
    }
    const fig = shotFigure(step, shot, shot.role === "before" ? markers : []);
    if (fig) figures.push(fig);
    else notes.push(el("p", { class: "omission" }, `${shot.role} screenshot not included in this report`));
  }
  const out: HTMLElement[] = [];
  if (figures.length) out.push(el("div", { class: "shots", "data-count": figures.length }, ...figures));
  return out.concat(notes);
}

function shotFigure(step: Step, shot: Shot, markers: Marker[]): HTMLElement | null {
  const image = imageFor(shot);
  if (!image) return null;
  const viewport = viewportOf(shot, image);
  const img = el("img", {
    class: "shot-img",
    src: image.src,
    alt: `${shot.role} screenshot`,
    title: "Click to enlarge",
  });
  if (image.width > 0 && image.height > 0) setAttrs(img, { width: image.width, height: image.height });
  img.addEventListener("click", () => openViewer(step, shot, image, viewport, markers));
  const frame = el("div", { class: "shot-frame" }, img, markersSvg(viewport, markers));
  return el("figure", { class: "shot", "data-role": shot.role }, frame, el("figcaption", null, shot.role));
}

/** Replaces only the before screenshot's markers (the picture itself keeps loading). */
export function redrawBeforeMarkers(step: Step): void {
  treeSlot.markersWaitFor = null;
  const frame = detail.querySelector('figure.shot[data-role="before"] .shot-frame');
  const shot = step.shots.find((x) => x.role === "before");
  const image = shot ? imageFor(shot) : null;
  if (!frame || !shot || !image) return;
  const old = frame.querySelector("svg.markers");
  if (old) old.replaceWith(markersSvg(viewportOf(shot, image), markersFor(step)));
}

/** Arguments and output side by side (both are usually short). */
function detailAction(step: Step): HTMLElement[] {
  const io = el("div", { class: "io" });
  if (step.call && step.call.argumentsRedacted) {
    io.append(detailSection("Arguments", el("p", { class: "redacted" }, "arguments redacted (protected action)")));
  } else if (step.call) {
    io.append(detailSection("Arguments", el("pre", { class: "args" }, pretty(step.call.arguments ?? null))));
  }
  if (step.result && step.result.output !== undefined)
    io.append(detailSection("Output", el("pre", { class: "output" }, pretty(step.result.output))));
  const out = [io];
  if (step.pending)
    out.push(
      el("p", { class: "omission" }, live ? "waiting for the result…" : "no result was recorded for this action"),
    );
  return out;
}

/** A definition list that leaves out facts without a value. */
function factList(): { facts: HTMLElement; add: (k: string, v: string | null | undefined) => void } {
  const facts = el("dl", { class: "facts" });
  const add = (k: string, v: string | null | undefined) => {
    if (v) facts.append(el("div", null, el("dt", null, k), el("dd", null, v)));
  };
  return { facts, add };
}

function sessionFacts(step: Step): HTMLElement {
  const { facts, add } = factList();
  add("session", String(model.session.id));
  add("at", isoLocal(step.atMs));
  if (step.event.deviceId) add("device", String(step.event.deviceId));
  const p = step.event.payload;
  if (p.type === "sessionEnded") {
    add("outcome", String(p.outcome ?? "—"));
    add("reason", p.reason ? String(p.reason) : null);
    add("duration", durationText(step.atMs - startMs));
    add(
      "steps",
      `${steps.length} (${plural(steps.filter((s) => s.kind === "action").length, "action")}, ${plural(steps.filter(isErrorStep).length, "error")})`,
    );
  }
  return detailSection("Session", facts);
}

function observationFacts(obs: Observation): HTMLElement {
  const { facts, add } = factList();
  const md = isObj(obs.metadata) ? obs.metadata : {};
  add("app", foregroundApp(md));
  if (typeof md.screen === "string") add("screen", md.screen);
  const vp = obs.viewport;
  if (isObj(vp)) add("viewport", `${vp.width}×${vp.height}${isNum(vp.scaleFactor) ? ` @${vp.scaleFactor}x` : ""}`);
  const nodes = treeNodes(treeShaOf(obs));
  if (nodes) add("UI tree", plural(nodes.length, "node"));
  else if (obs.uiSnapshotOmission) add("UI tree", `withheld (${obs.uiSnapshotOmission})`);
  if (isObj(md.uiStates) && Object.keys(md.uiStates).length)
    add(
      "states",
      Object.entries(md.uiStates)
        .map(([id, st]) => `${id}: ${Array.isArray(st) ? st.join(", ") : st}`)
        .join("; "),
    );
  return detailSection("Observation", facts);
}

function detailSection(title: string, ...content: HTMLElement[]): HTMLElement {
  return el("section", { class: "detail-section" }, el("h3", null, title), ...content);
}
