/**
 * The report as one HTML file: the model as JSON in a script element of its own type, the page's
 * script and style inline, nothing fetched (a Content-Security-Policy allows no network at all
 * for a file, and only the daemon itself and its event plane for the live viewer). Every text
 * from the device is set as text by the script, never as markup: an app can show anything.
 */
import script from "./assets/report.js.txt" with { type: "text" };
import style from "./assets/report.css.txt" with { type: "text" };
import type { ReportModel } from "./model.ts";

const sha256Base64 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("base64");
const SCRIPT_HASH = sha256Base64(script);

/** JSON that cannot end its script element or open a comment inside it. */
const embedded = (model: ReportModel) => JSON.stringify(model).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A file fetches nothing; the daemon's page loads its screenshots from the daemon and, while live, follows the event plane. */
export function contentSecurityPolicy(model: Pick<ReportModel, "live" | "images">): string {
  const { live } = model;
  const connect = live ? `'self' ${new URL(live.endpoint).origin}` : "'none'";
  const linked = live !== null || Object.values(model.images).some((i) => i.src.startsWith("/"));
  const img = linked ? "data: 'self'" : "data:";
  return `default-src 'none'; img-src ${img}; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; connect-src ${connect}; base-uri 'none'; form-action 'none'`;
}

export function renderPage(model: ReportModel): string {
  const title = `DeviceRail Session ${model.session.id}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(model))}">
<meta name="generator" content="devicerail ${escapeHtml(model.daemonVersion)}">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<div id="app"></div>
<script type="application/json" id="report-data">${embedded(model)}</script>
<script>${script}</script>
</body>
</html>
`;
}
