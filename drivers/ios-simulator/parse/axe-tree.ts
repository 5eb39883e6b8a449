import { clipText } from "../../../src/driver/clip-text.ts";
import { parseToolJson } from "./json.ts";
import { UI_NODE_LIMITS, type UiNode } from "../../../src/protocol/types/ui.ts";

/** A size in points (the unit of accessibility frames and of every input coordinate). */
export interface PointSize {
  width: number;
  height: number;
}

export interface AxeTree {
  /**
   * Nodes with bounds in screenshot pixels (points × scale), in preorder; up to one more than
   * 10,000, so a longer tree is known to be over the limit without being held.
   */
  nodes: UiNode[];
  /** The root's frame size in points. */
  screen: PointSize;
  /** True just after boot: a bare application root without children or size. */
  empty: boolean;
  /** The frontmost app's name (AXLabel of the application root), when given. */
  appName: string | null;
}

export class AxeTreeError extends Error {}

const FRAME = /^\{\{(-?[\d.]+), (-?[\d.]+)\}, \{([\d.]+), ([\d.]+)\}\}$/;
const MAX_NODES = UI_NODE_LIMITS.nodes;
/** The protocol's lengths; longer app text is cut with a visible marker. */
const { text: MAX_TEXT, id: MAX_ID, role: MAX_ROLE } = UI_NODE_LIMITS;

type Raw = Record<string, unknown>;
const str = (x: unknown): string | null =>
  typeof x === "string" && x.trim() !== "" ? x : typeof x === "number" ? String(x) : null;
const clipped = (s: string | null, max: number) => (s === null ? null : clipText(s, max));

/** AXe's type/role fields to the roles clients select by (research §6b); unknown types keep their own name. */
function roleOf(n: Raw): string {
  const type = String(n.type ?? "");
  const subrole = String(n.subrole ?? "");
  const described = String(n.role_description ?? "").toLowerCase();
  if (type === "Application") return "application";
  if (type === "Button" || type === "TabBarButton") return "button";
  if (
    type === "Switch" ||
    type === "Toggle" ||
    (type === "CheckBox" && (subrole === "AXSwitch" || /switch|toggle/.test(described)))
  )
    return "switch";
  if (type === "CheckBox") return "checkbox";
  if (type === "RadioButton" || type === "Tab") return "tab";
  // Real AXe prints `type` as the role without "AX", so a password field is type TextField with the
  // secure entry as its subrole (idb FBAXNodeSerializer.swift:118-124, FBAXRoleVocabulary.swift:84-109).
  if (type === "SecureTextField" || /^(AX)?SecureTextField$/.test(subrole) || described === "secure text field")
    return "secureTextField";
  if (type === "TextField") return "textField";
  if (type === "StaticText") return "text";
  if (type === "Image") return "image";
  if (type === "Slider" || n.role === "AXSlider") return "slider";
  if (type === "Cell") return "cell";
  if (type === "Link") return "link";
  if (type === "Group") return "group";
  return type || "other";
}

function framePt(n: Raw): { x: number; y: number; width: number; height: number } | null {
  const f = n.frame as Raw | undefined;
  if (f && [f.x, f.y, f.width, f.height].every((v) => typeof v === "number" && Number.isFinite(v)))
    return { x: f.x as number, y: f.y as number, width: f.width as number, height: f.height as number };
  const m = typeof n.AXFrame === "string" ? FRAME.exec(n.AXFrame) : null;
  return m ? { x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]) } : null;
}

/**
 * Parses `axe describe-ui` JSON (an array of root elements) into UiNodes in preorder, scaled to
 * screenshot pixels. Several roots get a synthetic application root sized to the screen.
 * Secure text fields never carry their value, whatever AXe printed.
 */
export function parseAxeTree(json: string, scaleOf: (screen: PointSize) => number): AxeTree {
  const parsed = parseToolJson(json, () => new AxeTreeError("describe-ui output is not JSON"));
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((r) => r && typeof r === "object"))
    throw new AxeTreeError("describe-ui output is not an array of elements");
  const roots = parsed as Raw[];
  const first = framePt(roots[0] as Raw);
  const root: Raw =
    roots.length === 1
      ? (roots[0] as Raw)
      : {
          type: "Application",
          AXLabel: null,
          frame: { x: 0, y: 0, width: first?.width ?? 0, height: first?.height ?? 0 },
          children: roots,
          enabled: true,
        };
  const rootFrame = framePt(root);
  if (!rootFrame) throw new AxeTreeError("describe-ui root has no frame");
  const screen = { width: rootFrame.width, height: rootFrame.height };
  const children = Array.isArray(root.children) ? root.children : [];
  const empty = children.length === 0 || rootFrame.width === 0;
  const scale = empty ? 1 : scaleOf(screen);
  const nodes: UiNode[] = [];
  const walk = (n: Raw, id: string, parent: string | null, depth: number) => {
    if (nodes.length > MAX_NODES) return;
    if (depth > 512) throw new AxeTreeError("describe-ui tree is nested too deeply");
    const type = roleOf(n);
    const role = clipText(type, MAX_ROLE);
    const f = framePt(n);
    const label = clipped(str(n.AXLabel) ?? str(n.title), MAX_TEXT);
    let value = str(n.AXValue);
    if (type === "secureTextField" && value !== null) value = clipText("•".repeat([...value].length), MAX_TEXT);
    else value = clipped(value, MAX_TEXT);
    nodes.push({
      stableNodeId: id,
      parentStableNodeId: parent,
      role,
      name: label,
      value,
      identifier: clipped(str(n.AXUniqueId) ?? str(n.AXIdentifier), MAX_ID),
      text: role === "secureTextField" ? value : (label ?? value),
      bounds: f
        ? {
            x: Math.round(f.x * scale),
            y: Math.round(f.y * scale),
            width: Math.round(f.width * scale),
            height: Math.round(f.height * scale),
          }
        : null,
      enabled: typeof n.enabled === "boolean" ? n.enabled : null,
      hittable: null,
    });
    const kids = Array.isArray(n.children) ? (n.children as unknown[]) : [];
    kids.forEach((c, i) => {
      if (c && typeof c === "object") walk(c as Raw, `${id}.${i}`, id, depth + 1);
    });
  };
  walk(root, "0", null, 0);
  return { nodes, screen, empty, appName: clipped(str(root.AXLabel), MAX_ID) };
}
