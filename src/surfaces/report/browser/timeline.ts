/** The timeline: one list item per step, the filters, and the selection moved by click, keys and #seq-N links. */
import { offsetText } from "./data.ts";
import { el, setAttrs } from "./dom.ts";
import { errorText, isNum } from "./format.ts";
import { renderDetail } from "./detail.ts";
import { type FilterKey, detail, filterButtons, noMatch, timeline, viewer } from "./layout.ts";
import { imageFor } from "./markers.ts";
import { type Shot, type Step, isErrorStep, lastSequence, stepAtOrBefore, steps } from "./steps.ts";

let filter: FilterKey = "all";

const isVisible = (step: Step) =>
  filter === "all" || (filter === "actions" ? step.kind === "action" : isErrorStep(step));

/** Creates or refreshes a step's list item (an action's changes when its completion arrives). */
export function fillStepItem(step: Step): HTMLLIElement {
  const li = step.li;
  li.setAttribute("data-kind", step.kind);
  li.setAttribute("data-status", step.status);
  li.toggleAttribute("data-pending", step.pending);
  if (step.verdict) li.setAttribute("data-verdict", String(step.verdict.status));
  li.hidden = !isVisible(step);

  const head = el(
    "div",
    { class: "step-head" },
    el("span", { class: "step-title" }, step.title),
    step.kind === "action" && isNum(step.durationMs)
      ? el("span", { class: "step-duration" }, `${step.durationMs} ms`)
      : null,
    step.pending ? el("span", { class: "step-pending" }, "no result") : null,
    el("span", { class: "step-time" }, offsetText(step.atMs)),
  );
  const parts: HTMLElement[] = [el("span", { class: "step-seq" }, `#${step.seq}`), head];
  if (step.sub) parts.push(el("div", { class: "step-sub" }, step.sub));
  if (step.call && step.call.argumentsRedacted)
    parts.push(el("div", { class: "redacted" }, "arguments redacted (protected action)"));
  if (step.error) parts.push(el("div", { class: "step-error" }, errorText(step.error)));
  const thumbs = step.shots.map(thumbFor).filter((img): img is HTMLImageElement => img !== null);
  if (thumbs.length) parts.push(el("div", { class: "thumbs" }, ...thumbs));
  li.replaceChildren(...parts);
  // Size classes only feed the CSS's guess of an off-screen step's height.
  li.classList.toggle("has-sub", parts.length > 2);
  li.classList.toggle("has-thumbs", thumbs.length > 0);
  return li;
}

function thumbFor(shot: Shot): HTMLImageElement | null {
  const image = imageFor(shot);
  if (!image) return null;
  const img = el("img", {
    class: "thumb",
    "data-role": shot.role,
    src: image.src,
    alt: shot.role,
    title: shot.role,
    loading: "lazy",
    decoding: "async",
  });
  if (image.width > 0 && image.height > 0) setAttrs(img, { width: image.width, height: image.height });
  return img;
}

export function renderTimeline(): void {
  const fragment = document.createDocumentFragment();
  for (const step of steps) fragment.append(fillStepItem(step));
  timeline.replaceChildren(fragment);
  sizeSeqColumn();
}

/** One width for the "#seq" column, wide enough for the largest number, so titles line up. */
export function sizeSeqColumn(): void {
  const digits = String(lastSequence).length + 1;
  timeline.style.setProperty("--seq-chars", String(Math.max(3, digits)));
}

export function setFilter(key: FilterKey): void {
  filter = key;
  for (const [k, button] of Object.entries(filterButtons))
    button.setAttribute("aria-pressed", k === key ? "true" : "false");
  // Chromium re-lays out every content-visibility:auto item hidden in place (seconds for
  // thousands); with the list out of layout while they change, it takes milliseconds.
  timeline.style.display = "none";
  for (const step of steps) step.li.hidden = !isVisible(step);
  timeline.style.display = "";
  updateNoMatch();
  if (selected && !selected.li.hidden) selected.li.scrollIntoView({ block: "center" });
  else timeline.scrollTop = 0;
}

export function updateNoMatch(): void {
  noMatch.hidden = steps.length === 0 || steps.some((step) => !step.li.hidden);
}

// ---------------------------------------------------------------------------------------------
// Selection and navigation

export let selected: Step | null = null;

export interface SelectOptions {
  /** How to scroll the step's item into view; false leaves the timeline where it is. */
  scroll?: ScrollLogicalPosition | false;
  updateHash?: boolean;
  focus?: boolean;
}

export function select(step: Step | null | undefined, opts: SelectOptions = {}): void {
  if (!step) return;
  const { scroll = "nearest", updateHash = true, focus = true } = opts;
  if (selected !== step) {
    if (selected) {
      selected.li.classList.remove("selected");
      selected.li.removeAttribute("aria-current");
    }
    selected = step;
    step.li.classList.add("selected");
    step.li.setAttribute("aria-current", "true");
    renderDetail(step);
    detail.scrollTop = 0;
  }
  if (updateHash) setHash(step.seq);
  if (scroll && !step.li.hidden) step.li.scrollIntoView({ block: scroll });
  if (focus && !step.li.hidden) step.li.focus({ preventScroll: true });
}

function setHash(seq: number): void {
  try {
    history.replaceState(null, "", `#seq-${seq}`);
  } catch {
    // Some file: contexts refuse history changes; the selection still stands.
  }
}

/** The next (dir 1) or previous (dir -1) visible step from the selected one. */
function move(dir: 1 | -1): void {
  const from = selected ? selected.index : dir > 0 ? -1 : steps.length;
  for (let i = from + dir; i >= 0 && i < steps.length; i += dir) {
    const step = steps[i] as Step;
    if (!step.li.hidden) return select(step);
  }
}

function edge(last: boolean): void {
  const visible = steps.filter((s) => !s.li.hidden);
  select(last ? visible[visible.length - 1] : visible[0]);
}

export function selectFromHash(updateHash: boolean): boolean {
  const m = /^#seq-(\d+)$/.exec(location.hash);
  if (!m) return false;
  select(stepAtOrBefore(Number(m[1])), { scroll: "center", updateHash });
  return true;
}

const isTyping = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

export function onKeyDown(e: KeyboardEvent): void {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === "Escape" && viewer.open) {
    viewer.close();
    e.preventDefault();
    return;
  }
  if (viewer.open || isTyping(e.target)) return;
  if (e.key === "j" || e.key === "ArrowDown") move(1);
  else if (e.key === "k" || e.key === "ArrowUp") move(-1);
  else if (e.key === "Home") edge(false);
  else if (e.key === "End") edge(true);
  else return;
  e.preventDefault();
}
