import clearElement from "../../../protocol/generated/actions/clear-element-arguments.schema.json" with {
  type: "json",
};
import findElement from "../../../protocol/generated/actions/find-element-arguments.schema.json" with { type: "json" };
import setElementValue from "../../../protocol/generated/actions/set-element-value-arguments.schema.json" with {
  type: "json",
};
import tapElement from "../../../protocol/generated/actions/tap-element-arguments.schema.json" with { type: "json" };
import waitForElement from "../../../protocol/generated/actions/wait-for-element-arguments.schema.json" with {
  type: "json",
};
import type { ActionDefinition } from "../../../protocol/types/action.ts";
import { SEMANTIC_ACTION_NAMES, type SemanticActionName } from "../../../protocol/types/ui.ts";

/**
 * The five semantic actions core adds to the action space of a driver with UI trees and element
 * input. setElementValue is protected, as in the reference's iOS driver: values are often
 * credentials, so its arguments are redacted and no screenshot is taken around it.
 */
export const SEMANTIC_DEFINITIONS: readonly ActionDefinition[] = [
  {
    name: "findElement",
    description: "Find the one element of the current UI tree that a selector matches",
    inputSchema: findElement,
  },
  { name: "tapElement", description: "Tap one element chosen by selector or node reference", inputSchema: tapElement },
  { name: "clearElement", description: "Remove all text from one input element", inputSchema: clearElement },
  {
    name: "setElementValue",
    description: "Replace the text of one input element",
    inputSchema: setElementValue,
    protection: "protected",
  },
  {
    name: "waitForElement",
    description: "Wait until an element is present, visible, enabled or absent",
    inputSchema: waitForElement,
  },
];

export const isSemanticName = (name: string): name is SemanticActionName =>
  (SEMANTIC_ACTION_NAMES as readonly string[]).includes(name);

export const semanticProtection = (name: SemanticActionName) => (name === "setElementValue" ? "protected" : "standard");
