/**
 * WebDriverAgent's `GET /source?format=json` tree (research §2.3 and Sample C): an Application with
 * one Window holding the app's elements, booleans as `"1"`/`"0"` strings, `traits` as a
 * comma-separated string, `children` only when non-empty.
 */
import type { NodeKind, SimNode } from "./ui-tree.ts";
import { rectString } from "./ui-tree.ts";

const WDA_TYPE: Record<NodeKind, string> = {
  application: "Application",
  text: "StaticText",
  textField: "TextField",
  secureTextField: "SecureTextField",
  switch: "Switch",
  button: "Button",
  backButton: "Button",
  group: "Other",
  tabBar: "TabBar",
  tab: "Button",
  icon: "Icon",
};

function traits(n: SimNode): string {
  const t: string[] = [];
  if (n.kind === "text") t.push("StaticText");
  if (n.kind === "button" || n.kind === "backButton" || n.kind === "tab" || n.kind === "switch" || n.kind === "icon")
    t.push("Button");
  if (n.kind === "switch") t.push("ToggleButton");
  if (n.kind === "tabBar") t.push("TabBar");
  if (n.kind === "tab" && n.selected) t.push("Selected");
  if (!n.enabled) t.push("NotEnabled");
  return t.join(", ");
}

const flag = (b: boolean) => (b ? "1" : "0");
const isContainer = (n: SimNode) => n.kind === "application" || n.kind === "group" || n.kind === "tabBar";

export type WdaElement = Record<string, unknown>;

function element(n: SimNode, kind: string, label: string | null, children: WdaElement[]): WdaElement {
  const rect = { x: n.frame.x, y: n.frame.y, width: n.frame.width, height: n.frame.height };
  const accessible = !isContainer(n) && kind !== "Window";
  const out: WdaElement = {
    type: kind,
    rawIdentifier: n.identifier,
    name: n.identifier ?? label,
    label,
    // Tab bar buttons carry selection in traits only (Sample C); AXe exposes it as AXValue "1"/"0".
    value: n.kind === "tab" ? null : n.value,
  };
  if (n.kind === "textField" || n.kind === "secureTextField") out.placeholderValue = n.placeholder ?? null;
  Object.assign(out, {
    rect,
    customActions: null,
    frame: rectString(n.frame),
    nativeFrame: rectString(n.frame),
    isEnabled: flag(n.enabled),
    isVisible: "1",
    isAccessible: flag(accessible),
    isNativeAccessibilityElement: flag(accessible),
    isFocused: flag(n.focused),
    traits: kind === "Window" ? "" : traits(n),
  });
  if (children.length > 0) out.children = children;
  return out;
}

function convert(n: SimNode): WdaElement {
  const label = n.kind === "tabBar" ? (n.label ?? "Tab Bar") : n.label;
  return element(n, WDA_TYPE[n.kind], label, n.children.map(convert));
}

/** The `value` of `/source?format=json`. */
export function wdaSource(root: SimNode): WdaElement {
  const windowNode: SimNode = { ...root, kind: "group", label: null, value: null, identifier: null };
  const window = element(windowNode, "Window", null, root.children.map(convert));
  window.traits = "";
  return element(root, "Application", root.label, [window]);
}
