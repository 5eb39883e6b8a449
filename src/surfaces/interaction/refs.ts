/**
 * The one ref scheme of every surface: `@eN` names a visible, meaningful element (containers that
 * say nothing and nodes off the screen get none), numbered in tree order the first time a listing
 * shows it and kept while the screen keeps its UI context (new elements get new numbers); a new
 * context starts at `@e1` again. So for one screen `devicerail ui` and an MCP agent's listing give
 * the same element the same ref.
 *
 * The numbering is pure: a surface keeps its RefState where it lives (MCP in the daemon's memory,
 * the CLI in a file between processes) and passes it back for the next listing.
 */
import type { Viewport } from "../../protocol/types/device.ts";
import type { UiContextRef, UiNode, UiNodeRef, UiSnapshot } from "../../protocol/types/ui.ts";
import { type Rect, visibleRect } from "../../protocol/ui-geometry.ts";
import { shortRole } from "./element-line.ts";

/** Layout containers: given a ref only when they carry a label or can be tapped. */
const CONTAINER =
  /(Layout|ViewGroup|View|Window|Group|Other|ScrollView|RecyclerView|ViewPager|Pager|Cell|Application)$/;

/** Whether a reader gains anything from seeing the node (and so whether it gets a ref). */
export function meaningful(n: UiNode): boolean {
  if (n.text || n.name || n.value) return true;
  if (n.hittable === true) return true;
  return n.identifier !== null && n.identifier !== "" && !CONTAINER.test(shortRole(n.role));
}

export const sameContext = (a: UiContextRef, b: UiContextRef) =>
  a.contextKind === b.contextKind && a.contextId === b.contextId && a.documentEpoch === b.documentEpoch;

/** The numbers given in one UI context so far: kept by a surface between listings. */
export interface RefState {
  context: UiContextRef;
  /** stableNodeId → N of `@eN`. */
  numbers: Record<string, number>;
  next: number;
}

/** One element of a listing: its ref, its node and the on-screen part of it. */
export interface RefElement {
  ref: string;
  node: UiNode;
  visible: Rect;
}

export interface RefListing {
  deviceId: string;
  observationId: string;
  context: UiContextRef;
  elements: RefElement[];
}

/**
 * Numbers a snapshot's elements, keeping the numbers of `state` when it is of the same context;
 * returns the listing and the state to keep for the next one (`state` itself is not changed).
 */
export function numberElements(
  state: RefState | null,
  deviceId: string,
  snapshot: UiSnapshot,
  viewport: Viewport,
): { listing: RefListing; state: RefState } {
  const kept = state && sameContext(state.context, snapshot.context);
  const next: RefState = {
    context: snapshot.context,
    numbers: kept ? { ...state.numbers } : {},
    next: kept ? state.next : 1,
  };
  const elements: RefElement[] = [];
  for (const node of snapshot.nodes) {
    const visible = visibleRect(node, viewport);
    if (!visible || !meaningful(node)) continue;
    let n = next.numbers[node.stableNodeId];
    if (n === undefined) next.numbers[node.stableNodeId] = n = next.next++;
    elements.push({ ref: `@e${n}`, node, visible });
  }
  return {
    listing: { deviceId, observationId: snapshot.observationId, context: snapshot.context, elements },
    state: next,
  };
}

/** `@e12` or `e12` (and, with `bare`, `12`) → `@e12`; null for anything else. */
export function normaliseRef(ref: string, bare = false): string | null {
  const m = (bare ? /^@?e?([1-9]\d{0,5})$/ : /^@?e([1-9]\d{0,5})$/).exec(ref.trim());
  return m ? `@e${m[1]}` : null;
}

/** What resolving a ref needs of a listing: a surface may keep less of each element than RefElement. */
export interface RefEntries<E extends { ref: string; node: { stableNodeId: string } }> {
  observationId: string;
  context: UiContextRef;
  elements: readonly E[];
}

/** The element a ref names in a listing, with the node reference the daemon honours for it. */
export function resolveRef<E extends { ref: string; node: { stableNodeId: string } }>(
  listing: RefEntries<E>,
  ref: string,
): { element: E; node: UiNodeRef } | null {
  const wanted = normaliseRef(ref, true);
  const element = wanted ? listing.elements.find((e) => e.ref === wanted) : undefined;
  return element
    ? {
        element,
        node: {
          observationId: listing.observationId,
          context: listing.context,
          stableNodeId: element.node.stableNodeId,
        },
      }
    : null;
}

/** `(it lists @e1 to @e5)`, or nothing for an empty listing: for messages about a ref not in it. */
export const refRange = (listing: { elements: readonly { ref: string }[] }) =>
  listing.elements.length ? ` (it lists ${listing.elements[0]?.ref} to ${listing.elements.at(-1)?.ref})` : "";

/**
 * The ref a node still has: the listing is of the same document (so the daemon would honour a
 * node reference into it) and lists the node. Null otherwise, so a surface never shows a ref that
 * would fail or, worse, name another element.
 */
export function currentRef(
  listing: RefEntries<{ ref: string; node: { stableNodeId: string } }> | null,
  context: UiContextRef,
  stableNodeId: string,
): string | null {
  if (!listing || !sameContext(listing.context, context)) return null;
  return listing.elements.find((e) => e.node.stableNodeId === stableNodeId)?.ref ?? null;
}
