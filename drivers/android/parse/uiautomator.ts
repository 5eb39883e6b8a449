/**
 * `uiautomator dump` output → UiNodes (docs/protocol/devices-and-actions.md#ui-snapshots). The dump is AccessibilityNodeInfoDumper's
 * XML: a `<hierarchy rotation>` holding nested `<node>`s whose attributes are all strings.
 */
import { createHash } from "node:crypto";
import { type UiNode, type UiState, UI_NODE_LIMITS, UI_STATES } from "../../../src/protocol/types/ui.ts";
import { clipText } from "../../../src/driver/clip-text.ts";
import { scanXml, XmlSyntaxError } from "./xml-scanner.ts";

export interface AndroidUiTree {
  /**
   * Preorder; every node of the dump, none skipped, up to one more than MAX_UI_NODES: a longer
   * tree is only known to be over the limit (the daemon then records the Observation without it).
   * Empty only for an empty hierarchy.
   */
  nodes: UiNode[];
  /** stableNodeId → what the dump says beyond the UiNode fields (passed on as `metadata.uiStates`), in UI_STATES order, only for nodes that have one (insertion in preorder). */
  states: Record<string, UiState[]>;
  /** The first node's `package`: the app (or system UI) owning the active window. */
  packageName: string | null;
  /** Surface.ROTATION_* quarter turns (0..3). */
  rotation: number | null;
  /** 16 hex digits over the shape (depth, class, resource-id of each node), not its content. */
  fingerprint: string;
  /**
   * Nodes kept although the dump had something wrong in them: inverted bounds (made zero-size and
   * not hittable) or characters XML forbids (replaced by U+FFFD). Real dumps have both (research
   * note §4 #5: Syed-NK/NoorLifeApp#85, kkevsekk1/AutoX#736). Absent when there were none.
   */
  repaired?: number;
}

/** transient: retrying the dump may succeed (idle timeout, killed); malformed: it will not. */
export class UiDumpError extends Error {
  override name = "UiDumpError";
  constructor(
    readonly kind: "transient" | "malformed",
    message: string,
  ) {
    super(message);
  }
}

export const MAX_UI_NODES = UI_NODE_LIMITS.nodes;
const { id: MAX_ID, role: MAX_ROLE, identifier: MAX_IDENTIFIER, text: MAX_TEXT } = UI_NODE_LIMITS;
const DEFAULT_ROLE = "android.view.View";
const BULLET = "\u2022";

/** Failures uiautomator prints instead of (or before) writing a dump. All are worth a retry. */
const KNOWN_FAILURES: readonly RegExp[] = [
  /ERROR: could not get idle state\./,
  /null root node returned by UiTestAutomationBridge\.?/,
  /(?:^|\s)Killed(?:\s|$)/m,
  /Segmentation fault/,
  /\bjava\.lang\.[\w$.]*Exception\b/,
];

/** Where the XML starts: its declaration, else the bare root. −1 when there is none. */
function xmlStart(output: string): number {
  const decl = output.indexOf("<?xml");
  return decl >= 0 ? decl : output.indexOf("<hierarchy");
}

function hasEnd(output: string, start: number): boolean {
  return output.includes("</hierarchy>", start) || /<hierarchy\b[^<>]*\/>/.test(output.slice(start));
}

const lineAt = (s: string, at: number) => {
  const from = s.lastIndexOf("\n", at) + 1;
  const to = s.indexOf("\n", at);
  return s
    .slice(from, to < 0 ? s.length : to)
    .trim()
    .slice(0, 200);
};

/**
 * Classifies a failed dump; null when the output holds a complete hierarchy. A known error
 * printed *before* a complete hierarchy still counts: with `dump <file>; cat <file>` the XML is
 * then a previous dump's file, not this screen.
 */
export function dumpFailure(output: string): { transient: boolean; message: string } | null {
  const start = xmlStart(output);
  const complete = start >= 0 && hasEnd(output, start);
  const searched = complete ? output.slice(0, start) : output;
  for (const pattern of KNOWN_FAILURES) {
    const m = pattern.exec(searched);
    if (m) return { transient: true, message: lineAt(searched, m.index + m[0].search(/\S/)) };
  }
  if (start < 0 || !output.includes("<hierarchy", start)) {
    const shown = output.trim().slice(0, 200);
    return {
      transient: false,
      message: shown ? `uiautomator printed no hierarchy: ${shown}` : "uiautomator printed nothing",
    };
  }
  return complete ? null : { transient: true, message: "the UI hierarchy is truncated" };
}

/**
 * `tags: "class"` reads the UiAutomator2 server's page source, the same dumper's format with each
 * element named by its class (`<android.widget.Button class="android.widget.Button" …>`) instead
 * of `<node>` (docs/android-helpers.md › Page source).
 */
export function parseUiautomatorDump(output: string, opts: { tags?: "node" | "class" } = {}): AndroidUiTree {
  const failure = dumpFailure(output);
  if (failure) throw new UiDumpError(failure.transient ? "transient" : "malformed", failure.message);
  const builder = new TreeBuilder(opts.tags ?? "node");
  try {
    scanXml(output, xmlStart(output), builder);
  } catch (e) {
    if (e instanceof XmlSyntaxError) throw new UiDumpError("malformed", `uiautomator XML: ${e.message}`);
    throw e;
  }
  return builder.result();
}

interface Frame {
  id: string | null;
  depth: number;
  /** Position of the next child among its parent's, the fallback segment. */
  next: number;
  /** Segments given to children so far, so a repeated or missing `index` cannot collide. */
  used: Set<string>;
}

class TreeBuilder {
  readonly nodes: UiNode[] = [];
  private readonly states: Record<string, UiState[]> = {};
  private readonly stack: Frame[] = [];
  private readonly hash = createHash("sha256");
  private rotation: number | null = null;
  private packageName: string | null = null;
  private sawHierarchy = false;
  private repaired = 0;

  constructor(private readonly tags: "node" | "class") {}

  open(name: string, attrs: ReadonlyMap<string, string>, _offset: number, repairedText: boolean): void {
    const parent = this.stack.at(-1);
    if (!parent) {
      if (name !== "hierarchy") throw malformed(`root element is <${name}>, not <hierarchy>`);
      this.sawHierarchy = true;
      this.rotation = rotationOf(attrs.get("rotation"));
      this.stack.push({ id: null, depth: -1, next: 0, used: new Set() });
      return;
    }
    if (this.tags === "node" ? name !== "node" : name === "hierarchy")
      throw malformed(`unexpected <${name}> inside <hierarchy>`);
    if (this.nodes.length > MAX_UI_NODES) {
      // Still scanned for well-formedness, but not kept: the tree is over the limit already.
      this.stack.push({ id: parent.id, depth: parent.depth + 1, next: 0, used: new Set() });
      return;
    }
    const segment = claimSegment(parent, attrs.get("index"));
    const id = parent.id === null ? segment : `${parent.id}.${segment}`;
    if (id.length > MAX_ID) throw malformed("the hierarchy is nested too deeply for node ids");
    const { node, invertedBounds } = toUiNode(attrs, id, parent.id);
    if (invertedBounds || repairedText) this.repaired++;
    if (this.nodes.length === 0) this.packageName = attrs.get("package") || null;
    this.nodes.push(node);
    // Not flag(): an odd focused/selected value only loses a hint, it does not make the dump unusable.
    const states = UI_STATES.filter((state) => attrs.get(state) === "true");
    if (states.length) this.states[id] = states;
    const depth = parent.depth + 1;
    this.hash.update(`${JSON.stringify([depth, node.role, node.identifier])}\n`);
    this.stack.push({ id, depth, next: 0, used: new Set() });
  }

  close(): void {
    this.stack.pop();
  }

  result(): AndroidUiTree {
    if (!this.sawHierarchy) throw malformed("no <hierarchy>");
    return {
      nodes: this.nodes,
      states: this.states,
      packageName: this.packageName,
      rotation: this.rotation,
      fingerprint: this.hash.digest("hex").slice(0, 16),
      ...(this.repaired ? { repaired: this.repaired } : {}),
    };
  }
}

const malformed = (message: string) => new UiDumpError("malformed", `uiautomator XML: ${message}`);

/**
 * `index` is the position among *all* children, invisible ones included, so it keeps a node's id
 * when an earlier sibling hides. Missing, non-numeric or repeated (several windows' roots are
 * all 0) indexes fall back to the child's position, then to the next free number.
 */
function claimSegment(parent: Frame, index: string | undefined): string {
  const position = parent.next++;
  let segment = index !== undefined && /^(0|[1-9][0-9]{0,8})$/.test(index) ? index : String(position);
  if (parent.used.has(segment)) segment = String(position);
  for (let n = position + 1; parent.used.has(segment); n++) segment = String(n);
  parent.used.add(segment);
  return segment;
}

function rotationOf(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[0-3]$/.test(value)) throw malformed(`rotation "${value}"`);
  return Number(value);
}

function flag(attrs: ReadonlyMap<string, string>, key: string): boolean | null {
  const value = attrs.get(key);
  if (value === undefined) return null;
  if (value === "true") return true;
  if (value === "false") return false;
  throw malformed(`${key}="${value}" is not a boolean`);
}

const BOUNDS = /^\[(-?\d{1,9}),(-?\d{1,9})\]\[(-?\d{1,9}),(-?\d{1,9})\]$/;

/**
 * The node's rectangle. Inverted bounds (`[66,1777][1014,1664]`: a node below a scroll
 * container's clip edge, its top kept and its bottom clamped) become zero-size at the top-left
 * corner the dump gives; `inverted` tells the caller to count the repair and not to offer a hit.
 */
function boundsOf(value: string | undefined): { bounds: UiNode["bounds"]; inverted: boolean } {
  if (value === undefined) return { bounds: null, inverted: false };
  const m = BOUNDS.exec(value);
  if (!m) throw malformed(`bounds "${value}"`);
  const [x1, y1, x2, y2] = m.slice(1).map(Number) as [number, number, number, number];
  return {
    bounds: { x: x1, y: y1, width: Math.max(0, x2 - x1), height: Math.max(0, y2 - y1) },
    inverted: x2 < x1 || y2 < y1,
  };
}

function codePointCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Longer values would fail the snapshot schema; the start of a huge text, marked as cut, is still useful. */
const clip = clipText;

const orNull = (s: string | undefined, max: number) => (s ? clip(s, max) : null);

function toUiNode(
  attrs: ReadonlyMap<string, string>,
  id: string,
  parentId: string | null,
): { node: UiNode; invertedBounds: boolean } {
  const cls = attrs.get("class") ?? "";
  const password = flag(attrs, "password") === true;
  const checkable = flag(attrs, "checkable");
  const checked = flag(attrs, "checked");
  const clickable = flag(attrs, "clickable");
  const longClickable = flag(attrs, "long-clickable");
  const raw = attrs.get("text") ?? "";
  // Never pass a password's characters on, even where the platform exposes them.
  const text = password ? BULLET.repeat(Math.min(codePointCount(raw), MAX_TEXT)) : clip(raw, MAX_TEXT);
  const editable = password || cls.endsWith("EditText");
  const value = editable ? text : checkable === true && checked !== null ? (checked ? "checked" : "unchecked") : null;
  const hitFlags = [clickable, longClickable, checkable];
  const { bounds, inverted } = boundsOf(attrs.get("bounds"));
  const node: UiNode = {
    stableNodeId: id,
    parentStableNodeId: parentId,
    role: /\S/.test(cls) ? clip(cls, MAX_ROLE) : DEFAULT_ROLE,
    name: orNull(attrs.get("content-desc"), MAX_TEXT),
    value,
    identifier: orNull(attrs.get("resource-id"), MAX_IDENTIFIER),
    text: text === "" ? null : text,
    bounds,
    enabled: flag(attrs, "enabled"),
    // A node with no area on screen cannot be hit, whatever its flags say.
    hittable: inverted ? false : hitFlags.every((f) => f === null) ? null : hitFlags.includes(true),
  };
  return { node, invertedBounds: inverted };
}
