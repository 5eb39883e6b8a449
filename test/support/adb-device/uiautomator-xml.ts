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
