/**
 * The report as one HTML file: the model as JSON in a script element of its own type, the page's
 * script and style inline, nothing fetched (a Content-Security-Policy allows no network at all
 * for a file, and only the daemon itself and its event plane for the live viewer). Every text
 * from the device is set as text by the script, never as markup: an app can show anything.
 *
 * The script is the bundle of browser/ (generated/report.js.txt, written by `bun run gen`); the
 * style is a hand-written asset.
 */
import script from "./generated/report.js.txt" with { type: "text" };
import style from "./assets/report.css.txt" with { type: "text" };
import type { ReportModel } from "./model.ts";

const sha256Base64 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("base64");
const SCRIPT_HASH = sha256Base64(script);

/** JSON that cannot end its script element or open a comment inside it. */
const scriptSafe = (json: string) =>
  json
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
const embedded = (model: ReportModel) => scriptSafe(JSON.stringify(model));

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A file fetches nothing; the daemon's page loads its screenshots from the daemon and, while live,
 * follows the event plane (`liveOrigin`).
 */
export function pagePolicy(liveOrigin: string | null, linkedImages: boolean): string {
  const connect = liveOrigin ? `'self' ${liveOrigin}` : "'none'";
  const img = liveOrigin || linkedImages ? "data: 'self'" : "data:";
  return `default-src 'none'; img-src ${img}; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; connect-src ${connect}; base-uri 'none'; form-action 'none'`;
}

export function contentSecurityPolicy(model: Pick<ReportModel, "live" | "images">): string {
  const linked = Object.values(model.images).some((i) => i.src.startsWith("/"));
  return pagePolicy(model.live ? new URL(model.live.endpoint).origin : null, linked);
}

/** The page up to the opening of the model's script element. */
function pageHead(policy: string, daemonVersion: string, sessionId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(policy)}">
<meta name="generator" content="devicerail ${escapeHtml(daemonVersion)}">
<title>${escapeHtml(`DeviceRail Session ${sessionId}`)}</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<div id="app"></div>
<script type="application/json" id="report-data">`;
}

const PAGE_TAIL = `</script>
<script>${script}</script>
</body>
</html>
`;

export function renderPage(model: ReportModel): string {
  return `${pageHead(contentSecurityPolicy(model), model.daemonVersion, model.session.id)}${embedded(model)}${PAGE_TAIL}`;
}

/** The page written as the model's JSON comes (modelChunks): what renderPage gives, never held whole. */
export async function* pageChunks(
  modelJson: AsyncIterable<string>,
  page: { policy: string; daemonVersion: string; sessionId: string },
): AsyncGenerator<string> {
  yield pageHead(page.policy, page.daemonVersion, page.sessionId);
  // Each replaced character stands alone, so the JSON may be cut anywhere.
  for await (const part of modelJson) yield scriptSafe(part);
  yield PAGE_TAIL;
}
