/**
 * The page source the simulated UiAutomator2 server answers `GET /session/:id/source` with, from
 * the same SnapshotNode tree `uiautomator dump` serializes (uiautomator-xml.ts). Format from
 * appium/appium-uiautomator2-server (mirror at v10.6.2), app/src/main/java/io/appium/uiautomator2/:
 * core/AccessibilityNodeInfoDumper.java (indented KXmlSerializer output, a `hierarchy` root with
 * rotation/width/height, class names as tag names), model/UiElementSnapshot.java
 * (SUPPORTED_ATTRIBUTES: their order, and null values left out), utils/XMLHelpers.java (tag-name and
 * safe-string rules). The research note is /work/wt/issue27-uia2.md §8.
 */
import type { SnapshotNode } from "./scenario.ts";
import { escapeAttribute, XML_DECLARATION } from "./uiautomator-xml.ts";

/** The display facts AccessibilityNodeInfoDumper.addDisplayInfo puts on the root. */
export interface Uia2Display {
  rotation: number;
  width: number;
  height: number;
  /** ro.build.version.sdk: some attributes exist only from API 28 or 29 on. */
  sdk: number;
}

/** android.text.InputType: TYPE_CLASS_TEXT, and with TYPE_TEXT_VARIATION_PASSWORD. */
const INPUT_TYPE_TEXT = 1;
const INPUT_TYPE_PASSWORD = 0x81;

/**
 * AccessibilityNodeInfoDumper.toXmlNodeName: `$@#&` become dots, runs of dots collapse, a leading or
 * trailing dot goes; then XMLHelpers.toNodeName drops leading characters that cannot start an XML
 * name and turns other illegal ones into `_` (approximated here with ASCII classes plus everything
 * from U+00C0 up); blank → android.view.View.
 */
export function xmlNodeName(className: string): string {
  const fixed = className
    .replace(/[$@#&]/g, ".")
    .replace(/\.+/g, ".")
    .replace(/^\.|\.$/g, "")
    .replace(/^[^A-Za-z_:\u00c0-\uffff]+/, "")
    .replace(/[^A-Za-z0-9_:.\-\u00b7\u00c0-\uffff]/g, "_");
  return fixed.trim() === "" ? "android.view.View" : fixed;
}

/** XMLHelpers.toSafeString: characters XML 1.0 forbids become `?`. */
function safe(value: string): string {
  return value.replace(/[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, "?");
}

/**
 * Whether the view counts as important for accessibility: the same stand-in compressTree uses in
 * uiautomator-xml.ts (Android decides per view; this is not AOSP's rule).
 */
function important(n: SnapshotNode): boolean {
  return (
    n.text !== "" ||
    n.contentDesc !== "" ||
    n.resourceId !== "" ||
    n.clickable ||
    n.longClickable ||
    n.checkable ||
    n.scrollable ||
    n.focusable
  );
}

/** A stable window id per package; real ids are small integers the window manager hands out. */
function windowId(pkg: string): number {
  return (Bun.hash.crc32(pkg) >>> 0) % 1000;
}

function attributes(n: SnapshotNode, display: Uia2Display): [string, string | number | boolean][] {
  const field = n.source.field !== undefined;
  const showingHint = field && n.source.hint !== undefined && n.text === n.source.hint;
  const [x1, y1, x2, y2] = n.bounds;
  const p28 = display.sdk >= 28;
  const list: [string, string | number | boolean | null][] = [
    ["index", n.index],
    ["package", n.package],
    ["class", n.className],
    ["text", n.text],
    // AxNodeInfoHelper.getText(node, false): null (so left out) when the node has no text.
    ["original-text", n.text === "" ? null : n.text],
    ["content-desc", n.contentDesc === "" ? null : n.contentDesc],
    ["resource-id", n.resourceId === "" ? null : n.resourceId],
    ["checkable", n.checkable],
    ["checked", n.checked],
    ["clickable", n.clickable],
    ["enabled", n.enabled],
    ["focusable", n.focusable],
    ["focused", n.focused],
    ["long-clickable", n.longClickable],
    ["password", n.password],
    ["scrollable", n.scrollable],
    ["selected", n.selected],
    ["bounds", `[${x1},${y1}][${x2},${y2}]`],
    // Only visible nodes are in the tree (isVisibleToUser).
    ["displayed", true],
    ["hint", n.source.hint ?? null],
    ["a11y-important", important(n)],
    ["screen-reader-focusable", p28 ? false : null],
    ["input-type", field ? (n.password ? INPUT_TYPE_PASSWORD : INPUT_TYPE_TEXT) : null],
    // The fake has no drawing order of its own; siblings are drawn in index order.
    ["drawing-order", n.index],
    ["showing-hint", showingHint],
    ["text-entry-key", display.sdk >= 29 ? false : null],
    ["dismissable", false],
    ["a11y-focused", false],
    ["heading", p28 ? false : null],
    ["live-region", 0],
    ["context-clickable", false],
    ["content-invalid", false],
    ["window-id", windowId(n.package)],
  ];
  return list.filter((e): e is [string, string | number | boolean] => e[1] !== null);
}

function serialize(n: SnapshotNode, depth: number, display: Uia2Display, out: string[]): void {
  const pad = "  ".repeat(depth);
  const tag = xmlNodeName(n.className);
  const attrs = attributes(n, display)
    .map(([k, v]) => ` ${k}="${escapeAttribute(safe(String(v)))}"`)
    .join("");
  if (n.children.length === 0) {
    out.push(`${pad}<${tag}${attrs} />`);
    return;
  }
  out.push(`${pad}<${tag}${attrs}>`);
  for (const c of n.children) serialize(c, depth + 1, display, out);
  out.push(`${pad}</${tag}>`);
}

/**
 * The whole source: declaration, the `hierarchy` root (index, class, then the display info), one
 * child per window root (here the foreground window only, as without `enableMultiWindows`), two
 * spaces per level. Whether KXmlSerializer ends the document with a newline is not verified; this
 * fake writes none. NAF has no place in this format (it is uiautomator dump's own marker).
 */
export function toUia2Xml(root: SnapshotNode, display: Uia2Display): string {
  const out = [
    XML_DECLARATION,
    `<hierarchy index="0" class="hierarchy" rotation="${display.rotation}" width="${display.width}" height="${display.height}">`,
  ];
  serialize(root, 1, display, out);
  out.push("</hierarchy>");
  return out.join("\n");
}
