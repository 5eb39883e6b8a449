/**
 * The simulated accessibility tree: one neutral node type in points, serialized two ways (AXe's
 * `describe-ui` JSON in axe-json.ts, WebDriverAgent's `/source` JSON in wda-json.ts) and painted
 * by screenshot.ts, so every view of the screen agrees.
 */

export interface Frame {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What a node is; each serializer maps it to its own type/role vocabulary. */
export type NodeKind =
  | "application"
  | "text"
  | "textField"
  | "secureTextField"
  | "switch"
  | "button"
  | "backButton"
  | "group"
  | "tabBar"
  | "tab"
  | "icon";

export interface SimNode {
  kind: NodeKind;
  label: string | null;
  value: string | null;
  identifier: string | null;
  /** Text inputs only: what an empty field shows. */
  placeholder?: string | null;
  frame: Frame;
  enabled: boolean;
  focused: boolean;
  /** Tabs and switches. */
  selected?: boolean;
  /** The app action a tap runs (see apps.ts). */
  action?: string;
  /** The app action a vertical swipe inside this node runs, with the row height in points. */
  scroll?: { action: string; rowHeight: number };
  children: SimNode[];
}

export const frame = (x: number, y: number, width: number, height: number): Frame => ({ x, y, width, height });

export function node(kind: NodeKind, f: Frame, props: Partial<Omit<SimNode, "kind" | "frame">> = {}): SimNode {
  return {
    kind,
    label: null,
    value: null,
    identifier: null,
    frame: f,
    enabled: true,
    focused: false,
    children: [],
    ...props,
  };
}

export function contains(f: Frame, x: number, y: number): boolean {
  return x >= f.x && y >= f.y && x < f.x + f.width && y < f.y + f.height;
}

export function* walk(n: SimNode, parent: SimNode | null = null): Generator<{ node: SimNode; parent: SimNode | null }> {
  yield { node: n, parent };
  for (const c of n.children) yield* walk(c, n);
}

/** The deepest node under the point, later siblings winning (they are painted on top). */
export function hitTest(root: SimNode, x: number, y: number): SimNode[] {
  const path: SimNode[] = [];
  let current: SimNode | undefined = contains(root.frame, x, y) ? root : undefined;
  while (current) {
    path.push(current);
    current = [...current.children].reverse().find((c) => contains(c.frame, x, y));
  }
  return path;
}

/** What a tap at the point activates: the innermost node on the hit path with an action. */
export function tapTarget(root: SimNode, x: number, y: number): SimNode | null {
  return [...hitTest(root, x, y)].reverse().find((n) => n.action !== undefined) ?? null;
}

export function scrollTarget(root: SimNode, x: number, y: number): SimNode | null {
  return [...hitTest(root, x, y)].reverse().find((n) => n.scroll !== undefined) ?? null;
}

/** Identifier, else label: how input logs name what was hit. */
export const nodeName = (n: SimNode | null): string | null => (n ? (n.identifier ?? n.label) : null);

export const center = (f: Frame) => ({ x: f.x + f.width / 2, y: f.y + f.height / 2 });

/** `{{x, y}, {w, h}}` as NSStringFromCGRect writes it. */
export const rectString = (f: Frame) => `{{${f.x}, ${f.y}}, {${f.width}, ${f.height}}}`;
