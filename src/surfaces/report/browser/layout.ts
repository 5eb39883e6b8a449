/**
 * The page's skeleton, static markup only, built once into #app: the header with its fields, the
 * timeline with its filters, the detail pane and the screenshot viewer. The other modules fill it.
 */
import { model } from "./data.ts";
import { el } from "./dom.ts";

export type FieldKey =
  | "device"
  | "platform"
  | "os"
  | "app"
  | "host"
  | "version"
  | "started"
  | "duration"
  | "outcome"
  | "verdicts";
export type FilterKey = "all" | "actions" | "errors";

const FIELDS: [FieldKey, string][] = [
  ["device", "Device"],
  ["platform", "Platform"],
  ["os", "OS"],
  ["app", "App"],
  ["host", "Host"],
  ["version", "DeviceRail"],
  ["started", "Started"],
  ["duration", "Duration"],
  ["outcome", "Outcome"],
  ["verdicts", "Verdicts"],
];
const FILTERS: [FilterKey, string][] = [
  ["all", "All"],
  ["actions", "Actions"],
  ["errors", "Errors"],
];

const app = document.getElementById("app");
if (!app) throw new Error("the report page has no #app");

export const fields = {} as Record<FieldKey, HTMLElement>;
const fieldList = el("dl", { class: "fields" });
for (const [key, label] of FIELDS) {
  fields[key] = el("dd", { "data-field": key });
  fieldList.append(el("div", { class: `field field-${key}` }, el("dt", null, label), fields[key]));
}
export const stateBadge = el("span", { class: "badge session-state" });
export const liveStatus = el("span", { id: "live-status", role: "status" });
const header = el(
  "header",
  { id: "summary", class: "card" },
  el(
    "div",
    { class: "title-row" },
    el("h1", null, "DeviceRail session"),
    el("code", { class: "session-id" }, String(model.session.id)),
    stateBadge,
    liveStatus,
  ),
  fieldList,
);

export const filterButtons = {} as Record<FilterKey, HTMLButtonElement>;
export const filterBar = el("div", { class: "filters", role: "group", "aria-label": "Show steps" });
for (const [key, label] of FILTERS) {
  filterButtons[key] = el(
    "button",
    { type: "button", "data-filter": key, "aria-pressed": key === "all" ? "true" : "false" },
    label,
    " ",
    el("span", { class: "count" }),
  );
  filterBar.append(filterButtons[key]);
}
export const timeline = el("ol", { id: "timeline", "aria-label": "Steps" });
export const noMatch = el("p", { class: "timeline-empty", hidden: true }, "No steps match this filter.");
export const detail = el("section", { id: "detail", "aria-label": "Step detail" });
export const viewerImg = el("img", { id: "viewer-img", alt: "" });
export const viewerFrame = el("div", { class: "viewer-frame" }, viewerImg);
export const viewerCaption = el("p", { class: "viewer-caption" });
export const viewer = el("dialog", { id: "viewer", "aria-label": "Screenshot" }, viewerFrame, viewerCaption);

app.append(
  header,
  el(
    "main",
    { class: "panes" },
    el(
      "aside",
      { class: "timeline-pane", "aria-label": "Timeline" },
      el("div", { class: "toolbar" }, filterBar, el("span", { class: "hint" }, "j / k to move")),
      timeline,
      noMatch,
    ),
    detail,
  ),
  viewer,
);
