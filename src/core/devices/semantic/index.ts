/**
 * What the surfaces may use of the semantic layer: the daemon's own selector predicate, so that
 * "matches" in a CLI or MCP answer means exactly what it means to tapElement (role suffixes,
 * resource ids, RE2 patterns).
 */
import type { ElementSelector } from "../../../protocol/types/ui.ts";
import { type NodePredicate, compileSelector } from "./selector.ts";

export type { NodePredicate };

const NO_SELECTOR: ElementSelector = {
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
};
const SITE = { action: "devicerail", pointer: "", redact: false };

/** The predicate of a (possibly partial) selector; null for one the daemon would refuse. */
export function selectorMatcher(selector: Partial<ElementSelector>): NodePredicate | null {
  try {
    return compileSelector({ ...NO_SELECTOR, ...selector }, SITE);
  } catch {
    return null;
  }
}
