/**
 * When a selector names no element, or several: the elements closest to it, ranked the same way
 * on every surface. "Matches" is the daemon's own predicate, passed in by the surface
 * (SelectorMatcher), so a match here is a match to tapElement.
 */
import type { ElementSelector, UiNode } from "../../protocol/types/ui.ts";

export type NodePredicate = (node: UiNode) => boolean;
/** The daemon's predicate of a (partial) selector, or null for a selector it would refuse. */
export type SelectorMatcher = (selector: Partial<ElementSelector>) => NodePredicate | null;

/** Levenshtein distance over code points, in two rows. */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++)
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
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
const best = (want: string, fields: (string | null)[]) =>
  Math.min(NEAR, Math.max(0, ...fields.filter((f): f is string => f !== null).map((f) => similarity(want, f))));

/**
 * How well a node fits the selector: 1 when it matches, else the average over the given members
 * of how close the node comes to each, so a node must be near on all of them to rank first.
 */
function fit(
  n: UiNode,
  s: Partial<ElementSelector>,
  matches: NodePredicate | null,
  textMatches: NodePredicate | null,
): number {
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

/** The positions in `nodes` of the (up to) `count` nodes closest to the selector, best first, ties in tree order. */
export function closestNodes(
  nodes: readonly UiNode[],
  selector: Partial<ElementSelector>,
  matcher: SelectorMatcher,
  count = 3,
): number[] {
  const matches = matcher(selector);
  const textMatches = selector.text ? matcher({ text: selector.text }) : null;
  return nodes
    .map((n, i) => ({ i, score: fit(n, selector, matches, textMatches) }))
    .filter((c) => c.score >= MIN_FIT)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, count)
    .map((c) => c.i);
}
