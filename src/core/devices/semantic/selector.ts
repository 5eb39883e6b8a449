import { RE2JS } from "re2js";
import type { ElementSelector, TextMatch, UiContextRef, UiNode } from "../../../protocol/types/ui.ts";
import { DriverError, invalidArguments } from "../../../driver/driver-error.ts";
import { renderReceived } from "../../../protocol/issue-details.ts";
import { visibleRect } from "../../../protocol/ui-geometry.ts";

/** Longest regex source accepted; RE2 matching is linear, but compiling a huge program is not free. */
export { visibleRect };

export const MAX_REGEX_CODE_POINTS = 4096;

export type NodePredicate = (node: UiNode) => boolean;

const lastSegment = (s: string) => s.slice(s.lastIndexOf(".") + 1);
const afterId = (s: string) => {
  const at = s.indexOf(":id/");
  return at < 0 ? s : s.slice(at + 4);
};

/** Where a selector sits in an action's arguments, for invalid_arguments that point into it. */
export interface SelectorSite {
  readonly action: string;
  /** JSON Pointer of the selector within the arguments, e.g. "/target/selector". */
  readonly pointer: string;
  /** The action is protected: received values are shown as type and length only. */
  readonly redact: boolean;
}

const refuse = (at: SelectorSite, pointer: string, expected: string, received: string) =>
  invalidArguments(at.action, [{ pointer: `${at.pointer}${pointer}`, expected, received }]);

function textPredicate(match: TextMatch, at: SelectorSite): (text: string) => boolean {
  const fold = match.caseSensitive === false;
  if (match.mode === "regex") {
    const received = renderReceived(match.value, at.redact);
    if ([...match.value].length > MAX_REGEX_CODE_POINTS)
      throw refuse(at, "/text/value", `a regular expression of at most ${MAX_REGEX_CODE_POINTS} code points`, received);
    let re: RE2JS;
    try {
      re = RE2JS.compile(match.value, fold ? RE2JS.CASE_INSENSITIVE : 0);
    } catch {
      throw refuse(at, "/text/value", "an RE2 regular expression (no backreferences or lookaround)", received);
    }
    return (text) => re.matcher(text).find();
  }
  const want = fold ? match.value.toLowerCase() : match.value;
  const norm = (t: string) => (fold ? t.toLowerCase() : t);
  return match.mode === "contains" ? (t) => norm(t).includes(want) : (t) => norm(t) === want;
}

const MATCHERS = ["role", "name", "value", "identifier", "text", "css"] as const;

/**
 * Compiles a selector into a node predicate after the checks of docs/protocol/devices-and-actions.md#selectors. Matching is conjunctive
 * over the given members. `role` also matches the last segment of a class name ("Button" for
 * "android.widget.Button"), and `identifier` the part of an Android resource id after ":id/", so
 * selectors stay short without becoming ambiguous across platforms.
 */
export function compileSelector(selector: ElementSelector, at: SelectorSite): NodePredicate {
  const { role, name, value, identifier, text, css } = selector;
  const given = MATCHERS.filter((m) => selector[m] !== null && selector[m] !== undefined);
  if (given.length === 0)
    throw refuse(at, "", `at least one of ${MATCHERS.join(", ")}`, selector.context ? "only a context" : "no matcher");
  if (css != null) {
    if (given.length > 1)
      throw refuse(at, "/css", "css as the only matcher", `css with ${given.filter((m) => m !== "css").join(", ")}`);
    if (selector.context?.contextKind !== "web")
      throw selector.context
        ? refuse(
            at,
            "/context/contextKind",
            '"web" (css needs a web context)',
            renderReceived(selector.context.contextKind, at.redact),
          )
        : refuse(at, "/context", 'a web context ({"contextKind": "web", …}) for css', "null");
    // Every tree we produce is native; a web document to run CSS against does not exist.
    throw new DriverError("ui_context_not_found");
  }
  const textOk = text ? textPredicate(text, at) : null;
  const roleLower = role?.toLowerCase();
  return (n) =>
    (roleLower == null || n.role.toLowerCase() === roleLower || lastSegment(n.role).toLowerCase() === roleLower) &&
    (name == null || n.name === name) &&
    (value == null || n.value === value) &&
    (identifier == null ||
      n.identifier === identifier ||
      (n.identifier !== null && afterId(n.identifier) === identifier)) &&
    (textOk === null || (n.text !== null && textOk(n.text)));
}

/** A selector's context must name the tree's own context (trees have one context per device). */
export function checkSelectorContext(selector: ElementSelector, context: UiContextRef): void {
  const want = selector.context;
  if (!want) return;
  if (want.contextKind !== context.contextKind || (want.contextId !== null && want.contextId !== context.contextId))
    throw new DriverError("ui_context_not_found");
}

/** The one node a selector picks: none is element_not_found, several element_ambiguous. */
export function resolveOne(nodes: readonly UiNode[], predicate: NodePredicate): UiNode {
  let found: UiNode | null = null;
  for (const n of nodes) {
    if (!predicate(n)) continue;
    if (found) throw new DriverError("element_ambiguous");
    found = n;
  }
  if (!found) throw new DriverError("element_not_found");
  return found;
}
