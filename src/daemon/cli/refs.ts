/**
 * How a person points at elements, and finds the one they meant: short names for the nodes
 * `devicerail ui` listed (`@e1`, `@e2`, … in preorder), kept in `<data dir>/cli-refs.json` so that
 * a later command in another process can turn `--ref @e3` back into the node reference the daemon
 * honours while that screen is still shown; and, when a selector names no element or several,
 * the elements closest to it.
 *
 * Only `ui` saves a listing: a ref must always mean what the last listing a person read showed,
 * never what some later command happened to observe on another screen.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type NodePredicate, compileSelector } from "../../core/devices/semantic/selector.ts";
import type { ElementSelector, UiContextRef, UiNode, UiNodeRef } from "../../protocol/types/ui.ts";
import { CliError } from "./output.ts";
import { replacePrivateFile } from "./private-file.ts";

/** One device's last `ui` listing: `@eN` is `nodes[N - 1]`. */
export interface RefListing {
  deviceId: string;
  observationId: string;
  context: UiContextRef;
  /** stableNodeIds in the tree's preorder. */
  nodes: string[];
  savedAtMs: number;
}

interface RefFile {
  version: 1;
  /** The device of the newest listing: what `--ref` means without -d. */
  last: string | null;
  devices: Record<string, RefListing>;
}

export const REFS_FILE = "cli-refs.json";
export const refsPath = (dataDir: string) => join(dataDir, REFS_FILE);

/** The ref of the node at a preorder position. */
export const refAt = (index: number) => `@e${index + 1}`;

/** `@e3` or `e3` → the preorder position 2; anything else is a usage error. */
export function parseRef(text: string): number {
  const m = /^@?e([1-9]\d{0,4})$/.exec(text.trim());
  if (!m) throw new CliError(`--ref expects a ref from devicerail ui such as @e3, not ${JSON.stringify(text)}`, 2);
  return Number(m[1]) - 1;
}

const isListing = (x: unknown): x is RefListing => {
  const l = x as RefListing;
  return typeof l === "object" && l !== null && typeof l.deviceId === "string" && typeof l.observationId === "string" && Array.isArray(l.nodes) && typeof l.context === "object" && l.context !== null;
};

/** The saved listings; a missing, unreadable or foreign file counts as none (refs are a convenience). */
function readRefs(dataDir: string): RefFile {
  try {
    const f = JSON.parse(readFileSync(refsPath(dataDir), "utf8")) as RefFile;
    if (f.version !== 1 || typeof f.devices !== "object" || f.devices === null) throw new Error("unknown format");
    const devices = Object.fromEntries(Object.entries(f.devices).filter(([, l]) => isListing(l)));
    return { version: 1, last: typeof f.last === "string" ? f.last : null, devices };
  } catch {
    return { version: 1, last: null, devices: {} };
  }
}

/**
 * Replaces the device's listing. Written 0600 (node ids can name what an app shows) to a
 * temporary file that is renamed over the old one, so a command reading it meanwhile sees the old
 * listing or the new one, never half of one. Two `ui` commands on different devices at the same
 * moment may lose one listing (no lock): refs are a convenience, and `ui` again restores them.
 */
export function saveListing(dataDir: string, listing: RefListing): void {
  const refs = readRefs(dataDir);
  refs.devices[listing.deviceId] = listing;
  refs.last = listing.deviceId;
  replacePrivateFile(refsPath(dataDir), `${JSON.stringify(refs)}\n`);
}

/** The listing of a device, or of the device `ui` last listed when none is named. */
export function loadListing(dataDir: string, deviceId: string | null): RefListing | null {
  const refs = readRefs(dataDir);
  const id = deviceId ?? refs.last;
  return id === null ? null : (refs.devices[id] ?? null);
}

/** The node reference a ref stands for in a listing. */
export function nodeRefOf(listing: RefListing, ref: string): UiNodeRef {
  const index = parseRef(ref);
  const stableNodeId = listing.nodes[index];
  if (stableNodeId === undefined)
    throw new CliError(`${ref} is not in the last devicerail ui listing of ${listing.deviceId} (it has @e1 to ${refAt(listing.nodes.length - 1)}); run devicerail ui again`);
  return { observationId: listing.observationId, context: listing.context, stableNodeId };
}

const sameContext = (a: UiContextRef, b: UiContextRef) => a.contextKind === b.contextKind && a.contextId === b.contextId && a.documentEpoch === b.documentEpoch;

/**
 * The ref a node still has: the listing is of the same document (so the daemon would honour it)
 * and names this node at that position. Null otherwise, so a command never shows a ref that would
 * fail or, worse, name another element.
 */
export function currentRef(listing: RefListing | null, context: UiContextRef, index: number, stableNodeId: string): string | null {
  if (!listing || !sameContext(listing.context, context) || listing.nodes[index] !== stableNodeId) return null;
  return refAt(index);
}

/** Levenshtein distance over code points, in two rows. */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[y.length] as number;
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();
const words = (s: string) => new Set(s.split(/[^\p{L}\p{N}]+/u).filter(Boolean));

/**
 * How alike two strings read, from 0 to 1 (equal but for case and spacing): the best of their
 * edit similarity (typos), shared words (reordered or partly given labels) and containment
 * ("Sign" in "Sign in now"), so each kind of near miss ranks high.
 */
export function similarity(a: string, b: string): number {
  const x = norm(a);
  const y = norm(b);
  if (!x || !y) return 0;
  if (x === y) return 1;
  const [lx, ly] = [[...x].length, [...y].length];
  const edit = 1 - editDistance(x, y) / Math.max(lx, ly);
  const [wx, wy] = [words(x), words(y)];
  const shared = [...wx].filter((w) => wy.has(w)).length;
  const dice = wx.size + wy.size ? (2 * shared) / (wx.size + wy.size) : 0;
  const inside = x.includes(y) || y.includes(x) ? 0.5 + (0.4 * Math.min(lx, ly)) / Math.max(lx, ly) : 0;
  return Math.max(edit, dice, inside);
}

const afterId = (s: string) => s.slice(s.indexOf(":id/") < 0 ? 0 : s.indexOf(":id/") + 4);
/** Just short of a match: a near miss never ranks level with an element that does match. */
const NEAR = 0.99;
const best = (want: string, fields: (string | null)[]) => Math.min(NEAR, Math.max(0, ...fields.filter((f): f is string => f !== null).map((f) => similarity(want, f))));

const NO_SELECTOR: ElementSelector = { context: null, role: null, name: null, value: null, identifier: null, text: null, css: null };
const SITE = { action: "devicerail", pointer: "", redact: false };

/**
 * The daemon's own predicate for a selector, so that "matches" here means exactly what it means to
 * the daemon (role suffixes, resource ids, RE2 patterns); null for one it would refuse.
 */
export function selectorMatcher(selector: ElementSelector): NodePredicate | null {
  try {
    return compileSelector({ ...NO_SELECTOR, ...selector }, SITE);
  } catch {
    return null;
  }
}

/**
 * How well a node fits the selector: 1 when it matches, else the average over the given members
 * of how close the node comes to each, so a node must be near on all of them to rank first.
 */
function fit(n: UiNode, s: ElementSelector, matches: NodePredicate | null, textMatches: NodePredicate | null): number {
  if (matches?.(n)) return 1;
  const scores: number[] = [];
  if (s.role) scores.push(best(s.role, [n.role, n.role.slice(n.role.lastIndexOf(".") + 1)]));
  if (s.name) scores.push(best(s.name, [n.name, n.text]));
  if (s.value !== null && s.value !== undefined) scores.push(best(s.value, [n.value]));
  if (s.identifier) scores.push(best(s.identifier, [n.identifier, n.identifier && afterId(n.identifier)]));
  if (s.text) scores.push(textMatches?.(n) ? 1 : best(s.text.value, [n.text, n.name]));
  return scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : 0;
}

/** Below this a node shares too little with the selector to be worth showing. */
const MIN_FIT = 0.3;

/** The preorder positions of the (up to) `count` nodes closest to the selector, best first, ties in tree order. */
export function closestNodes(nodes: readonly UiNode[], selector: ElementSelector, count = 3): number[] {
  const matches = selectorMatcher(selector);
  const textMatches = selector.text ? selectorMatcher({ ...NO_SELECTOR, text: selector.text }) : null;
  return nodes
    .map((n, i) => ({ i, score: fit(n, selector, matches, textMatches) }))
    .filter((c) => c.score >= MIN_FIT)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, count)
    .map((c) => c.i);
}
