/**
 * `axe describe-ui` output (AXe 1.8, research §2.1 and Sample B): an array of roots, every node
 * with the same key set, `traits` always `[]`, printed by Foundation's pretty printer.
 */
import { appleJson } from "./apple-json.ts";
import type { NodeKind, SimNode } from "./ui-tree.ts";
import { rectString } from "./ui-tree.ts";

const AX: Record<NodeKind, { type: string; role: string; roleDescription: string; subrole: string | null }> = {
  application: { type: "Application", role: "AXApplication", roleDescription: "application", subrole: null },
  text: { type: "StaticText", role: "AXStaticText", roleDescription: "text", subrole: null },
  textField: { type: "TextField", role: "AXTextField", roleDescription: "text field", subrole: null },
  // idb's serializer sets `type` to `role` without "AX" (FBSimulatorAccessibilityCommands.m
  // l.228-233 at dfc9e2175^; FBAXNodeSerializer.swift:118-124) and its translator has no secure
  // role: secure entry is a subrole (FBAXRoleVocabulary.swift:84-109). So a real password field is
  // a TextField with subrole AXSecureTextField (research note F7; INFERRED, confirm on a Mac). The
  // fake printed type SecureTextField before, a combination the real tool cannot produce.
  secureTextField: {
    type: "TextField",
    role: "AXTextField",
    roleDescription: "secure text field",
    subrole: "AXSecureTextField",
  },
  switch: { type: "CheckBox", role: "AXCheckBox", roleDescription: "switch", subrole: "AXSwitch" },
  button: { type: "Button", role: "AXButton", roleDescription: "button", subrole: null },
  backButton: { type: "Button", role: "AXButton", roleDescription: "back button", subrole: null },
  group: { type: "Group", role: "AXGroup", roleDescription: "group", subrole: null },
  tabBar: { type: "Group", role: "AXGroup", roleDescription: "group", subrole: null },
  tab: { type: "RadioButton", role: "AXRadioButton", roleDescription: "tab", subrole: null },
  icon: { type: "Button", role: "AXButton", roleDescription: "button", subrole: null },
};

export type AxeElement = Record<string, unknown>;

export const axType = (kind: NodeKind) => AX[kind].type;

/** One node in AXe's key order (Sample B's order; real output's order varies). */
export function axeElement(n: SimNode, pid: number): AxeElement {
  const m = AX[n.kind];
  return {
    AXFrame: rectString(n.frame),
    AXUniqueId: n.identifier,
    frame: { y: n.frame.y, x: n.frame.x, width: n.frame.width, height: n.frame.height },
    role_description: m.roleDescription,
    AXLabel: n.label,
    content_required: false,
    type: m.type,
    title: null,
    help: null,
    custom_actions: [],
    AXValue: n.value,
    enabled: n.enabled,
    role: m.role,
    children: n.children.map((c) => axeElement(c, pid)),
    subrole: m.subrole,
    pid,
    traits: [],
  };
}

/** The whole `describe-ui` document for the frontmost app. */
export function describeUi(root: SimNode, pid: number): string {
  return appleJson([axeElement(root, pid)]);
}

/** What AXe prints right after boot (XcodeBuildMCP #290): a bare application with a zero frame and no children. */
export function emptyDescribeUi(pid: number): string {
  const empty = axeElement(
    {
      kind: "application",
      label: null,
      value: null,
      identifier: null,
      frame: { x: 0, y: 0, width: 0, height: 0 },
      enabled: true,
      focused: false,
      children: [],
    },
    pid,
  );
  return appleJson([empty]);
}
