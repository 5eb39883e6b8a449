/**
 * The report model the page draws, read once from the JSON that page.ts embeds in #report-data,
 * and the clock every step's time is counted on.
 */
import type { ReportModel } from "../model-types.ts";
import { pad } from "./format.ts";

const source = document.getElementById("report-data");
if (!source) throw new Error("the report page has no #report-data");

export const model = JSON.parse(source.textContent ?? "") as ReportModel;
/** Where the live viewer follows the Session; null for a file. */
export const live = model.live || null;
export const SHA256 = /^[0-9a-f]{64}$/i;

model.events = Array.isArray(model.events) ? model.events.slice().sort((a, b) => a.sequence - b.sequence) : [];
model.images = model.images || {};
model.trees = model.trees || {};

// Times are counted from the sessionStarted event (event 1), else from the Session's start.
const startEvent = model.events.find((e) => e && e.payload && e.payload.type === "sessionStarted");
export const startMs = startEvent
  ? startEvent.atMs
  : (model.session.startedAtMs ?? (model.events[0] ? model.events[0].atMs : 0));

/** "+m:ss.mmm" since the session started. */
export function offsetText(atMs: number): string {
  const d = Math.max(0, Math.round(atMs - startMs));
  return `+${Math.floor(d / 60000)}:${pad(Math.floor(d / 1000) % 60)}.${pad(d % 1000, 3)}`;
}
