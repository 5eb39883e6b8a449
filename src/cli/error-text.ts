/**
 * A daemon error in words for a person at a terminal: the code and message, then what `details`
 * says to fix (docs/protocol/errors.md lists the shapes). Pure: the CLI's output decides where the
 * lines go and how they are coloured.
 */

export interface DescribedError {
  code: number;
  message: string;
  data: { code: string; message: string; retryable: boolean; details: unknown };
}

type Details = Record<string, unknown>;
/** Renders the keys it knows into lines; returns the keys it used up. */
type Part = (d: Details, code: string, out: string[]) => readonly string[];

const INDENT = "  ";
/** Names listed before "…" (actions, devices, features). */
const LISTED = 20;

const isObject = (x: unknown): x is Details => typeof x === "object" && x !== null && !Array.isArray(x);
const str = (x: unknown): x is string => typeof x === "string";
const num = (x: unknown): x is number => typeof x === "number";
const strings = (x: unknown): string[] | null => (Array.isArray(x) && x.every(str) ? x : null);
const list = (names: readonly string[]) =>
  names.length > LISTED ? `${names.slice(0, LISTED).join(", ")}, … (${names.length} in all)` : names.join(", ");
const short = (x: unknown): string => {
  const s = str(x) ? x : (JSON.stringify(x) ?? String(x));
  return [...s].length > 80 ? `${[...s].slice(0, 80).join("")}…` : s;
};

/** "at /x: expected …, got …"; the empty pointer names what was validated as a whole. */
function issueLine(issue: Details, code: string): string | null {
  const { pointer, expected, received } = issue;
  if (!str(pointer) || !str(expected) || !str(received)) return null;
  const where =
    pointer !== ""
      ? pointer
      : code === "invalid_arguments"
        ? "the arguments"
        : code === "invalid_params"
          ? "the params"
          : "the top level";
  return `at ${where}: expected ${expected}, got ${received}`;
}

const issues: Part = (d, code, out) => {
  const first = issueLine(d, code);
  const lines = [...(first ? [first] : [])];
  for (const issue of Array.isArray(d.issues) ? d.issues.filter(isObject) : []) {
    const line = issueLine(issue, code);
    if (line && !lines.includes(line)) lines.push(line);
  }
  out.push(...lines);
  return lines.length ? ["pointer", "expected", "received", "issues"] : [];
};

/** Edits from `a` to `b`, a swap of neighbours counting as one (the optimal string alignment distance). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  return at(a.length, b.length);
}

/** The closest name, when it is close enough to be a typo of `name`. */
function closest(name: string, names: readonly string[]): string | null {
  let best: { name: string; d: number } | null = null;
  for (const n of names) {
    const d = distance(name.toLowerCase(), n.toLowerCase());
    if (!best || d < best.d) best = { name: n, d };
  }
  return best && best.d <= Math.max(1, Math.floor(name.length / 3)) ? best.name : null;
}

const actions: Part = (d, _code, out) => {
  const names = strings(d.availableActions);
  if (!names) return [];
  out.push(names.length ? `available actions: ${list(names)}` : "this device has no actions");
  const guess = str(d.action) ? closest(d.action, names) : null;
  if (guess) out.push(`did you mean ${guess}?`);
  return ["availableActions", "action"];
};

const devices: Part = (d, _code, out) => {
  const ids = strings(d.availableDeviceIds);
  if (!ids) return [];
  out.push(ids.length ? `available devices: ${list(ids)} (choose one with -d)` : "no devices are available");
  // The routing feature and device.select are how a protocol client chooses; -d is how a person does.
  return ["availableDeviceIds", "deviceCount", "requiredFeature", "requiredMethod"];
};

const viewport: Part = (d, _code, out) => {
  const v = d.viewport;
  if (!isObject(v) || !num(v.width) || !num(v.height)) return [];
  out.push(`viewport: ${v.width}×${v.height}`);
  return ["viewport"];
};

const features: Part = (d, code, out) => {
  const used: string[] = [];
  if (str(d.requiredFeature)) {
    const subject = str(d.feature)
      ? `the feature ${d.feature}`
      : str(d.field)
        ? d.field
        : str(d.action)
          ? `the action ${d.action}`
          : "this request";
    // A person cannot negotiate a feature: this CLI and the daemon disagree, which a version mismatch explains.
    out.push(
      `${subject} needs the protocol feature ${d.requiredFeature}, which this command and the daemon did not agree on; use the daemon's own version of devicerail (devicerail daemon status)`,
    );
    used.push("requiredFeature", "feature", "field");
  }
  const unsupported = strings(d.unsupportedRequired);
  if (unsupported) {
    out.push(`unsupported required features: ${list(unsupported)}`);
    used.push("unsupportedRequired");
  }
  const available = strings(d.available);
  if (available) {
    out.push(`features this server offers: ${list(available)}`);
    used.push("available");
  }
  const supported = strings(d.supportedMethods);
  if (supported) {
    out.push(`${str(d.field) ? d.field : "this"} is accepted by: ${list(supported)}`);
    used.push("supportedMethods", "field");
  }
  return used;
};

const version = (x: unknown): string | null =>
  isObject(x) && num(x.major) && num(x.minor) ? `${x.major}.${x.minor}` : null;
const ranges = (x: unknown): string | null => {
  const rs = isObject(x) && Array.isArray(x.ranges) ? x.ranges.filter(isObject) : null;
  return rs ? rs.map((r) => `${r.major}.${r.minMinor}–${r.major}.${r.maxMinor}`).join(", ") || "nothing" : null;
};

const protocol: Part = (d, _code, out) => {
  const used: string[] = [];
  const client = ranges(d.clientProtocol);
  const server = ranges(d.serverProtocol);
  if (client && server) out.push(`client offers ${client}; server offers ${server}`);
  else if (client) out.push(`client offers ${client}`);
  if (client || server) used.push("clientProtocol", "serverProtocol");
  const required = version(d.requiredProtocol);
  const selected = version(d.selectedProtocol);
  if (required && selected) {
    out.push(`needs protocol ${required}; this connection uses ${selected}`);
    used.push("requiredProtocol", "selectedProtocol");
  }
  return used;
};

/** What a person does about a step the daemon wanted first, by the protocol method behind it. */
const STEP_FIRST: Record<string, string> = {
  "session.start": "start a Session first: device commands start one themselves, so retry the command",
  "device.select": "choose a device first with -d ID (devicerail devices lists them)",
  "system.hello": "the connection closed before it was ready: retry the command",
};

const numbers: Part = (d, _code, out) => {
  const used: string[] = [];
  if (num(d.line) && num(d.column)) {
    out.push(`at line ${d.line}, column ${d.column}`);
    used.push("line", "column");
  }
  if (str(d.requiredMethod)) {
    out.push(STEP_FIRST[d.requiredMethod] ?? "a step this command needs was skipped (DEVICERAIL_DEBUG=1 names it)");
    used.push("requiredMethod");
  }
  if (num(d.retryAfterMs)) {
    out.push(`retry after ${d.retryAfterMs} ms`);
    used.push("retryAfterMs");
  }
  if (num(d.expectedFrameIndex) && num(d.frameIndex)) {
    out.push(`expected frame ${d.expectedFrameIndex}, got ${d.frameIndex}`);
    used.push("expectedFrameIndex", "frameIndex");
  }
  if (num(d.afterSequence) && num(d.lastSequence)) {
    out.push(`afterSequence ${d.afterSequence} is past the last event, ${d.lastSequence}`);
    used.push("afterSequence", "lastSequence");
  }
  if (num(d.requestedEvents) && num(d.maximumEvents)) {
    out.push(`${d.requestedEvents} events to replay; at most ${d.maximumEvents} can be`);
    used.push("requestedEvents", "maximumEvents");
  }
  if (num(d.maximumSummaryLength) && num(d.maximumEvidenceReferences)) {
    out.push(
      `a summary of at most ${d.maximumSummaryLength} code points and at most ${d.maximumEvidenceReferences} evidence references`,
    );
    used.push("maximumSummaryLength", "maximumEvidenceReferences");
  }
  if (str(d.platformCode)) {
    out.push(`platform code: ${d.platformCode}`);
    used.push("platformCode");
  }
  return used;
};

const PARTS: readonly Part[] = [issues, actions, devices, viewport, features, protocol, numbers];
/** Keys that only repeat what the first line says or that a person cannot act on. */
const QUIET = new Set([
  "method",
  "action",
  "scope",
  "timeoutMs",
  "inFlightActions",
  "inFlightObservations",
  "deviceCount",
]);

/**
 * The error for a person: "<data.code>: <message>", then one indented line per thing `details`
 * says to fix. Details of a shape it does not know are listed as "key: value", skipping values the
 * message already names; it never throws, whatever `details` holds.
 */
export function describeError(error: DescribedError): string[] {
  const { code, details } = error.data;
  const lines: string[] = [];
  const used = new Set<string>();
  if (isObject(details)) {
    // Each part sees only the keys no earlier part used, so no key is said twice.
    const unused = () => Object.fromEntries(Object.entries(details).filter(([k]) => !used.has(k)));
    for (const part of PARTS) for (const k of part(unused(), code, lines)) used.add(k);
    for (const [k, value] of Object.entries(details)) {
      if (used.has(k) || QUIET.has(k) || value === null || value === undefined) continue;
      if ((str(value) || num(value)) && error.message.includes(String(value))) continue;
      lines.push(`${k}: ${short(value)}`);
    }
  }
  return [`${code}: ${error.message}`, ...lines.map((l) => `${INDENT}${l}`)];
}
