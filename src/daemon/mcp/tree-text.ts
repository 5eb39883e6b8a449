/**
 * The UI tree as a model reads it: one line per visible, meaningful element with a short ref
 * (`@e12 Button "Sign in" id=login [disabled] at=540,1200 size=300x120`), containers that say
 * nothing dropped, cut at a character budget (about 8,000 tokens) with a note saying so, and the
 * changes since the device's previous observation.
 *
 * Refs belong to the device, not to one MCP client: while the screen keeps its UI context, an
 * element keeps its ref across observations (new elements get new numbers), so a host that
 * respawns its MCP process still holds valid refs. A new context starts the numbering again.
 */
import { visibleRect } from "../../core/devices/semantic/selector.ts";
import type { Viewport } from "../../protocol/types/device.ts";
import type { UiContextRef, UiNode, UiNodeRef, UiSnapshot } from "../../protocol/types/ui.ts";

/** About 8,000 tokens at four characters a token. */
export const TREE_CHAR_BUDGET = 32_000;
const LABEL_CHARS = 80;

/** Layout containers: shown only when they carry a label or can be tapped. */
const CONTAINER = /(Layout|ViewGroup|View|Window|Group|Other|ScrollView|RecyclerView|ViewPager|Pager|Cell|Application)$/;

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
}

/** One line of at most LABEL_CHARS: whitespace and control characters (a device can put anything in a label) become single spaces. */
const clip = (s: string) => {
  const oneLine = s.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  const points = [...oneLine];
  return points.length > LABEL_CHARS ? `${points.slice(0, LABEL_CHARS - 1).join("")}…` : oneLine;
};

// A role is the device's text too (an Android class name): one line, like every label.
const shortRole = (role: string) => clip(role.slice(role.lastIndexOf(".") + 1));
const shortId = (id: string) => (id.includes(":id/") ? id.slice(id.indexOf(":id/") + 4) : id);

/** Whether a model gains anything from seeing the node. */
export function meaningful(n: UiNode): boolean {
  if (n.text || n.name || n.value) return true;
  if (n.hittable === true) return true;
  return n.identifier !== null && n.identifier !== "" && !CONTAINER.test(shortRole(n.role));
}

/** `Button "Sign in" id=login value="x" [disabled] [focused] at=540,1200 size=300x120`. */
export function elementBody(n: UiNode, visible: { x: number; y: number; width: number; height: number }, states: readonly string[]): string {
  const label = n.text || n.name;
  const parts = [shortRole(n.role)];
  if (label) parts.push(JSON.stringify(clip(label)));
  if (n.identifier) parts.push(`id=${clip(shortId(n.identifier))}`);
  if (n.value && n.value !== label) parts.push(`value=${JSON.stringify(clip(n.value))}`);
  if (n.enabled === false) parts.push("[disabled]");
  for (const s of states) parts.push(`[${s}]`);
  const cx = Math.round(visible.x + visible.width / 2);
  const cy = Math.round(visible.y + visible.height / 2);
  parts.push(`at=${cx},${cy}`, `size=${Math.round(visible.width)}x${Math.round(visible.height)}`);
  return parts.join(" ");
}

const sameContext = (a: UiContextRef, b: UiContextRef) => a.contextKind === b.contextKind && a.contextId === b.contextId && a.documentEpoch === b.documentEpoch;

/** One device's refs: stableNodeId → number, kept while the UI context stays the same. */
class DeviceRefs {
  context: UiContextRef | null = null;
  readonly numbers = new Map<string, number>();
  next = 1;
  listing: TreeListing | null = null;
}

/** Every device's refs and latest listing, for the whole daemon. */
export class RefBook {
  private readonly devices = new Map<string, DeviceRefs>();

  /**
   * Lists an observation's tree, giving refs (old ones kept while the context is unchanged), and
   * returns the listing with the device's previous one (null when there was none).
   */
  list(deviceId: string, snapshot: UiSnapshot, viewport: Viewport, states: Record<string, readonly string[]>): { listing: TreeListing; previous: TreeListing | null } {
    let refs = this.devices.get(deviceId);
    if (!refs) this.devices.set(deviceId, (refs = new DeviceRefs()));
    const previous = refs.listing;
    if (!refs.context || !sameContext(refs.context, snapshot.context)) {
      refs.numbers.clear();
      refs.next = 1;
      refs.context = snapshot.context;
    }
    const elements: ListedElement[] = [];
    for (const node of snapshot.nodes) {
      const visible = visibleRect(node, viewport);
      if (!visible || !meaningful(node)) continue;
      let n = refs.numbers.get(node.stableNodeId);
      if (n === undefined) refs.numbers.set(node.stableNodeId, (n = refs.next++));
      const body = elementBody(node, visible, states[node.stableNodeId] ?? []);
      const label = node.text || node.name;
      const short = label ? `${shortRole(node.role)} ${JSON.stringify(clip(label))}` : shortRole(node.role);
      elements.push({ ref: `@e${n}`, node, body, short, centre: { x: Math.round(visible.x + visible.width / 2), y: Math.round(visible.y + visible.height / 2) } });
    }
    const listing: TreeListing = { deviceId, observationId: snapshot.observationId, context: snapshot.context, elements };
    refs.listing = listing;
    return { listing, previous };
  }

  /** The device's latest listing. */
  latest(deviceId: string): TreeListing | null {
    return this.devices.get(deviceId)?.listing ?? null;
  }

  /** The element a ref names in the device's latest listing, or why it names none. */
  resolve(deviceId: string, ref: string): { element: ListedElement; node: UiNodeRef } | { problem: string } {
    const listing = this.latest(deviceId);
    if (!listing) return { problem: `no observation of ${deviceId} has listed refs yet: call device_observe or ui_tree first` };
    const wanted = normaliseRef(ref);
    const element = wanted ? listing.elements.find((e) => e.ref === wanted) : undefined;
    if (!element) {
      const range = listing.elements.length ? ` (it lists ${listing.elements[0]?.ref} to ${listing.elements.at(-1)?.ref})` : "";
      return { problem: `${ref} is not in the latest observation of ${deviceId}${range}: observe again and use a ref from that` };
    }
    return { element, node: { observationId: listing.observationId, context: listing.context, stableNodeId: element.node.stableNodeId } };
  }
}

/** `@e12`, `e12` or `12` → `@e12`; null for anything else. */
export function normaliseRef(ref: string): string | null {
  const m = /^@?e?([1-9]\d{0,5})$/.exec(ref.trim());
  return m ? `@e${m[1]}` : null;
}

/** The listing's lines within `budget` characters; what does not fit is counted in a last line. */
export function treeLines(listing: TreeListing, budget = TREE_CHAR_BUDGET): { lines: string[]; truncated: boolean } {
  const lines: string[] = [];
  let used = 0;
  for (const [i, e] of listing.elements.entries()) {
    const line = `${e.ref} ${e.body}`;
    if (used + line.length + 1 > budget) {
      const rest = listing.elements.length - i;
      lines.push(`… ${rest} more element${rest === 1 ? "" : "s"} not shown: the tree is cut at about 8,000 tokens. Find them with a selector (tap, wait_for) or scroll and observe again.`);
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
    return [`changes since observation ${previous.observationId}: a new screen (its UI context changed): the ${previous.elements.length} elements listed then are gone, and every element above is new`];
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
  if (out.length > maxLines) return [head, ...out.slice(0, maxLines), `… ${out.length - maxLines} more changes not shown`];
  return [head, ...out];
}
