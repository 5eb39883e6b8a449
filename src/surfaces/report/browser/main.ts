/**
 * The DeviceRail session report, browser side: the entry of the page's script, bundled by
 * scripts/gen-report-script.ts into one file that page.ts inlines. page.ts embeds the report model
 * as JSON in #report-data; the steps derived from its events (steps.ts) are drawn as a header, a
 * timeline and a detail pane for the selected step, and the live viewer appends events as they come.
 *
 * The browser code imports only types from outside this folder (scripts/check-imports.ts), and is
 * type-checked on its own (tsconfig.json here: DOM types, no Bun or Node types).
 */
import { live, model } from "./data.ts";
import { el } from "./dom.ts";
import { type FilterKey, detail, filterBar, timeline, viewer } from "./layout.ts";
import { startLive } from "./live.ts";
import { ingest, stepBySeq, steps } from "./steps.ts";
import { renderCounts, renderSummary } from "./summary.ts";
import { onKeyDown, renderTimeline, select, selectFromHash, setFilter } from "./timeline.ts";

for (const event of model.events) ingest(event);
renderSummary();
renderCounts();
renderTimeline();

timeline.addEventListener("click", (e) => {
  const li = e.target instanceof Element ? e.target.closest("li.step") : null;
  if (li) select(stepBySeq.get(Number(li.getAttribute("data-seq"))), { scroll: false });
});
filterBar.addEventListener("click", (e) => {
  const button = e.target instanceof Element ? e.target.closest("button[data-filter]") : null;
  if (button) setFilter(button.getAttribute("data-filter") as FilterKey);
});
document.addEventListener("keydown", onKeyDown);
// A click anywhere in the viewer closes it (the picture has nothing else to click).
viewer.addEventListener("click", () => viewer.close());
window.addEventListener("hashchange", () => selectFromHash(true));

if (steps.length === 0)
  detail.replaceChildren(
    el("p", { class: "empty" }, live ? "No events yet: waiting for the Session…" : "This Session recorded no events."),
  );
else if (!selectFromHash(true)) select(steps[0], { updateHash: false, scroll: false });

if (live) startLive(live);
