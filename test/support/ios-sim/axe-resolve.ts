/**
 * `axe tap --id/--label/--value`: AXe's AccessibilityTargetResolver in small — a unique match for
 * --id, switch-like then actionable matches preferred for --label/--value, the centre as the
 * activation point (a wide switch is tapped 31 pt from its trailing edge), and its error texts.
 */
import { axType } from "./axe-json.ts";
import { type SimNode, walk } from "./ui-tree.ts";

export type Query = { kind: "--id" | "--label" | "--value"; value: string };

const TIP =
  "Make sure the app is on the expected screen, then run `axe describe-ui --udid <SIMULATOR_UDID>` and prefer --id when available.";
const ACTIONABLE = new Set([
  "Button",
  "Cell",
  "CheckBox",
  "Link",
  "MenuItem",
  "PopUpButton",
  "RadioButton",
  "SecureTextField",
  "TextField",
  "Switch",
  "Toggle",
  "Slider",
  "Tab",
  "TabBarButton",
]);

export class ResolutionError extends Error {}

const isSwitchLike = (n: SimNode) => n.kind === "switch";
const isActionable = (n: SimNode) => isSwitchLike(n) || ACTIONABLE.has(axType(n.kind));

function unique(matches: SimNode[], q: Query): SimNode {
  if (matches.length === 0)
    throw new ResolutionError(`No accessibility element matched ${q.kind} '${q.value}'. ${TIP}`);
  if (matches.length > 1) {
    if (matches.some((m) => m.identifier))
      throw new ResolutionError(
        `Multiple (${matches.length}) accessibility elements matched ${q.kind} '${q.value}'. Use --id when labels are not unique. ${TIP}`,
      );
    throw new ResolutionError(
      `Multiple (${matches.length}) accessibility elements matched ${q.kind} '${q.value}', and none of the matches expose AXUniqueId on this screen. Use coordinates for this step (tap -x/-y) or target a more specific screen/state. ${TIP}`,
    );
  }
  return matches[0] as SimNode;
}

function best(matches: SimNode[], q: Query): SimNode {
  const switches = matches.filter(isSwitchLike);
  if (switches.length > 0) return unique(switches, q);
  const actionable = matches.filter(isActionable);
  if (actionable.length > 0) return unique(actionable, q);
  return unique(matches, q);
}

/** The point AXe would tap for the query, or a ResolutionError with AXe's message. */
export function resolveTap(
  root: SimNode,
  q: Query,
  elementType?: string,
): { x: number; y: number; switchLike: boolean } {
  const want = q.value.trim();
  const all = [...walk(root)].map((w) => w.node).filter((n) => !elementType || axType(n.kind) === elementType);
  const field = q.kind === "--id" ? "identifier" : q.kind === "--label" ? "label" : "value";
  const matches = all.filter((n) => (n[field] ?? "").trim() === want && want !== "");
  const el = q.kind === "--id" ? unique(matches, q) : best(matches, q);
  const f = el.frame;
  if (f.width <= 0 || f.height <= 0)
    throw new ResolutionError(`Matched element has an invalid frame size (${f.width}x${f.height}). ${TIP}`);
  const y = f.y + f.height / 2;
  return isSwitchLike(el) && f.width > 100
    ? { x: f.x + f.width - 31, y, switchLike: true }
    : { x: f.x + f.width / 2, y, switchLike: isSwitchLike(el) };
}
