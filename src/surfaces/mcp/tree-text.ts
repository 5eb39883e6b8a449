/**
 * The UI tree as a model reads it: one line per element of the shared ref scheme
 * (src/surfaces/interaction/refs.ts) in the model style (`@e12 Button "Sign in" id=login [disabled]
 * at=540,1200 size=300x120`), cut at a character budget (about 8,000 tokens) with a note saying
 * so, and the changes since the device's previous observation.
 *
 * Refs belong to the device, not to one MCP client: RefBook keeps each device's numbering in the
 * daemon's memory, so a host that respawns its MCP process still holds valid refs, and the CLI's
 * `devicerail ui` gives the same element the same ref on the same screen.
 */
import {
  type RefListing,
  type RefState,
  type UiStates,
  centreOf,
  elementLine,
  meaningful,
  numberElements,
  normaliseRef as normalise,
  refRange,
  resolveRef,
  sameContext,
  shortLine,
} from "../interaction/index.ts";
import type { Viewport } from "../../protocol/types/device.ts";
import type { UiContextRef, UiNode, UiNodeRef, UiSnapshot } from "../../protocol/types/ui.ts";

export { meaningful };

/** About 8,000 tokens at four characters a token. */
export const TREE_CHAR_BUDGET = 32_000;

/** One listed element: its ref, its node, and what it reads as (without the ref). */
export interface ListedElement {
  ref: string;
  node: UiNode;
  body: string;
  /** Role and label only (`Button "Sign in"`): what names it when its states may have changed since. */
  short: string;
  /** Where a tap lands: the centre of the visible part, in device pixels. */
  centre: { x: number; y: number };
}

export interface TreeListing {
  deviceId: string;
  observationId: string;
  context: UiContextRef;
  elements: ListedElement[];
  /** The same listing as the shared scheme has it. */
  refs: RefListing;
}

/** Every device's ref numbering and latest listing, for the whole daemon. */
export class RefBook {
  private readonly devices = new Map<string, { state: RefState; listing: TreeListing }>();

  /**
   * Lists an observation's tree, giving refs (old ones kept while the context is unchanged), and
   * returns the listing with the device's previous one (null when there was none).
   */
  list(
    deviceId: string,
    snapshot: UiSnapshot,
    viewport: Viewport,
    states: UiStates,
  ): { listing: TreeListing; previous: TreeListing | null } {
    const before = this.devices.get(deviceId);
    const { listing: refs, state } = numberElements(before?.state ?? null, deviceId, snapshot, viewport);
    const elements = refs.elements.map(({ ref, node, visible }) => ({
      ref,
      node,
      body: elementLine(node, states[node.stableNodeId] ?? [], { style: "model", visible }),
      short: shortLine(node),
      centre: centreOf(visible),
    }));
    const listing: TreeListing = {
      deviceId,
      observationId: snapshot.observationId,
      context: snapshot.context,
      elements,
      refs,
    };
    this.devices.set(deviceId, { state, listing });
    return { listing, previous: before?.listing ?? null };
  }

  /** The device's latest listing. */
  latest(deviceId: string): TreeListing | null {
    return this.devices.get(deviceId)?.listing ?? null;
  }

  /** The element a ref names in the device's latest listing, or why it names none. */
  resolve(deviceId: string, ref: string): { element: ListedElement; node: UiNodeRef } | { problem: string } {
    const listing = this.latest(deviceId);
    if (!listing)
      return { problem: `no observation of ${deviceId} has listed refs yet: call device_observe or ui_tree first` };
    const found = resolveRef(listing.refs, ref);
    const element = found && listing.elements.find((e) => e.ref === found.element.ref);
    if (!found || !element)
      return {
        problem: `${ref} is not in the latest observation of ${deviceId}${refRange(listing.refs)}: observe again and use a ref from that`,
      };
    return { element, node: found.node };
  }
}

/** `@e12`, `e12` or `12` → `@e12`; null for anything else. */
export const normaliseRef = (ref: string) => normalise(ref, true);

/** The listing's lines within `budget` characters; what does not fit is counted in a last line. */
export function treeLines(listing: TreeListing, budget = TREE_CHAR_BUDGET): { lines: string[]; truncated: boolean } {
  const lines: string[] = [];
  let used = 0;
  for (const [i, e] of listing.elements.entries()) {
    const line = `${e.ref} ${e.body}`;
    if (used + line.length + 1 > budget) {
      const rest = listing.elements.length - i;
      lines.push(
        `… ${rest} more element${rest === 1 ? "" : "s"} not shown: the tree is cut at about 8,000 tokens. Find them with a selector (tap, wait_for) or scroll and observe again.`,
      );
      return { lines, truncated: true };
    }
    lines.push(line);
    used += line.length + 1;
  }
  return { lines, truncated: false };
}

/** Added (+), removed (-) and changed (~) elements since `previous`, by node identity. */
export function diffLines(previous: TreeListing | null, current: TreeListing, maxLines = 60): string[] {
  if (!previous) return ["changes: none to compare with (this is the first listed observation of the device)"];
  // Listing every element twice says less than this, in more tokens.
  if (!sameContext(previous.context, current.context))
    return [
      `changes since observation ${previous.observationId}: a new screen (its UI context changed): the ${previous.elements.length} elements listed then are gone, and every element above is new`,
    ];
  const before = new Map(previous.elements.map((e) => [e.node.stableNodeId, e]));
  const after = new Map(current.elements.map((e) => [e.node.stableNodeId, e]));
  const out: string[] = [];
  for (const e of current.elements) {
    const old = before.get(e.node.stableNodeId);
    if (!old) out.push(`+ ${e.ref} ${e.body}`);
    else if (old.body !== e.body) out.push(`~ ${e.ref} ${e.body} (was: ${old.body})`);
  }
  for (const e of previous.elements) if (!after.has(e.node.stableNodeId)) out.push(`- ${e.body}`);
  const head = `changes since observation ${previous.observationId}: ${out.length === 0 ? "none" : `${out.length}`}`;
  if (out.length > maxLines)
    return [head, ...out.slice(0, maxLines), `… ${out.length - maxLines} more changes not shown`];
  return [head, ...out];
}
