/**
 * `uiautomator dump` output as Android writes it: AccessibilityNodeInfoDumper's attributes in its
 * order, through KXmlSerializer (single-quoted declaration, one line, `" />"` on leaves).
 */
import { isNaf, type SnapshotNode } from "./scenario.ts";

export const XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";

/** KXmlSerializer's attribute escaping; tabs and line breaks become character references. */
export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"\t\n\r]/g, (c) => {
    switch (c) {
      case "&":
        return "&amp;";
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case '"':
        return "&quot;";
      default:
        return `&#${c.charCodeAt(0)};`;
    }
  });
}

function node(n: SnapshotNode): string {
  const a = (name: string, value: string | boolean | number) => ` ${name}="${escapeAttribute(String(value))}"`;
  const [x1, y1, x2, y2] = n.bounds;
  const attrs =
    (isNaf(n) ? a("NAF", true) : "") +
    a("index", n.index) +
    a("text", n.text) +
    a("resource-id", n.resourceId) +
    a("class", n.className) +
    a("package", n.package) +
    a("content-desc", n.contentDesc) +
    a("checkable", n.checkable) +
    a("checked", n.checked) +
    a("clickable", n.clickable) +
    a("enabled", n.enabled) +
    a("focusable", n.focusable) +
    a("focused", n.focused) +
    a("scrollable", n.scrollable) +
    a("long-clickable", n.longClickable) +
    a("password", n.password) +
    a("selected", n.selected) +
    a("bounds", `[${x1},${y1}][${x2},${y2}]`);
  if (n.children.length === 0) return `<node${attrs} />`;
  return `<node${attrs}>${n.children.map(node).join("")}</node>`;
}

/** The whole dump, without a trailing newline (as the file on the device has none). */
export function toUiautomatorXml(root: SnapshotNode, rotation = 0): string {
  return `${XML_DECLARATION}<hierarchy rotation="${rotation}">${node(root)}</hierarchy>`;
}

/**
 * What `uiautomator dump --compressed` leaves of a tree: the dump runs without
 * FLAG_INCLUDE_NOT_IMPORTANT_VIEWS, so views not important for accessibility are left out and
 * their children move up to the nearest kept ancestor (indexes renumbered). Which views Android
 * counts as important is decided per view; this fake keeps a node with text, a description, a
 * resource id or any interaction flag, and always the root (an approximation, not AOSP's rule).
 */
export function compressTree(root: SnapshotNode): SnapshotNode {
  const important = (n: SnapshotNode) =>
    n.text !== "" ||
    n.contentDesc !== "" ||
    n.resourceId !== "" ||
    n.clickable ||
    n.longClickable ||
    n.checkable ||
    n.scrollable ||
    n.focusable;
  const kept = (n: SnapshotNode): SnapshotNode[] => {
    const children = n.children.flatMap(kept);
    return important(n) ? [{ ...n, children: children.map((c, index) => ({ ...c, index })) }] : children;
  };
  const children = root.children.flatMap(kept).map((c, index) => ({ ...c, index }));
  return { ...root, children };
}

/**
 * Nodes real dumps contain that no well-behaved tree has, as raw XML (their values cannot come
 * from escapeAttribute): two nodes with inverted bounds, the shapes quoted in Syed-NK/NoorLifeApp#85
 * (`[66,1777][1014,1664]`, a node below a scroll container's clip edge) and kkevsekk1/AutoX#736
 * (`Rect(906, 0 - 1074, -823)`, i.e. `[906,0][1074,-823]`); and one whose text holds `&#0;` and
 * whose description holds a lone high surrogate as `&#55357;`. kxml2's original writeEscaped
 * writes control characters (and, for a non-Unicode encoding, every non-ASCII UTF-16 unit) as
 * `&#N;` references; that a phone's dump shows exactly these two references is an inference from
 * that code, not a quoted capture.
 */
export function oddNodesXml(firstIndex: number, pkg: string): string {
  const odd = (index: number, cls: string, text: string, desc: string, bounds: string) =>
    `<node index="${index}" text="${text}" resource-id="" class="${cls}" package="${pkg}" content-desc="${desc}" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="${bounds}" />`;
  return [
    odd(firstIndex, "android.widget.TextView", "Below the fold", "", "[66,1777][1014,1664]"),
    odd(firstIndex + 1, "android.widget.ImageView", "", "", "[906,0][1074,-823]"),
    odd(firstIndex + 2, "android.widget.TextView", "a&#0;b", "smile &#55357;", "[60,400][1020,460]"),
  ].join("");
}

/** `xml` (a toUiautomatorXml dump) with oddNodesXml appended to the root node's children. */
export function withOddNodes(xml: string, root: SnapshotNode): string {
  const nodes = oddNodesXml(root.children.length, root.package);
  if (root.children.length > 0) return xml.replace(/<\/node><\/hierarchy>$/, `${nodes}</node></hierarchy>`);
  return xml.replace(/ \/><\/hierarchy>$/, `>${nodes}</node></hierarchy>`);
}
