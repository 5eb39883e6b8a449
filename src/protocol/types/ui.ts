import * as v from "valibot";
import { UuidSchema, cpString, int, nonBlank, nullable } from "../ids.ts";
import { AssetRefSchema } from "./evidence.ts";

export const UiContextKindSchema = v.picklist(["native", "web"]);

export const UiContextRefSchema = v.strictObject({
  contextKind: UiContextKindSchema,
  contextId: nonBlank(4096),
  documentEpoch: nonBlank(4096),
});
export type UiContextRef = v.InferOutput<typeof UiContextRefSchema>;

export const UiContextSelectorSchema = v.strictObject({
  contextKind: UiContextKindSchema,
  contextId: nullable(nonBlank(4096)),
});

const finite = v.pipe(v.number(), v.finite());
const nonNegative = v.pipe(v.number(), v.finite(), v.minValue(0));

export const UiRectSchema = v.strictObject({ x: finite, y: finite, width: nonNegative, height: nonNegative });

/** The most nodes a tree has, and the longest fields of a UiNode in code points: drivers cut longer trees and text to these. */
export const UI_NODE_LIMITS = { nodes: 10_000, id: 4096, role: 256, identifier: 4096, text: 65_536 } as const;

export const UiNodeSchema = v.strictObject({
  stableNodeId: nonBlank(UI_NODE_LIMITS.id),
  parentStableNodeId: nullable(nonBlank(UI_NODE_LIMITS.id)),
  role: nonBlank(UI_NODE_LIMITS.role),
  name: nullable(cpString(0, UI_NODE_LIMITS.text)),
  value: nullable(cpString(0, UI_NODE_LIMITS.text)),
  identifier: nullable(cpString(0, UI_NODE_LIMITS.identifier)),
  text: nullable(cpString(0, UI_NODE_LIMITS.text)),
  bounds: nullable(UiRectSchema),
  enabled: nullable(v.boolean()),
  hittable: nullable(v.boolean()),
});
export type UiNode = v.InferOutput<typeof UiNodeSchema>;

export const UiSnapshotSchema = v.strictObject({
  formatVersion: int(1, 1),
  observationId: UuidSchema,
  context: UiContextRefSchema,
  rootStableNodeIds: v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(UI_NODE_LIMITS.nodes)),
  nodes: v.pipe(v.array(UiNodeSchema), v.minLength(1), v.maxLength(UI_NODE_LIMITS.nodes)),
});
export type UiSnapshot = v.InferOutput<typeof UiSnapshotSchema>;

export const UiSnapshotRefSchema = v.strictObject({
  formatVersion: int(1, 1),
  context: UiContextRefSchema,
  nodeCount: int(1, UI_NODE_LIMITS.nodes),
  byteLength: int(1, 786_432),
  evidence: AssetRefSchema,
});
export type UiSnapshotRef = v.InferOutput<typeof UiSnapshotRefSchema>;

export const UiSnapshotGetParamsSchema = v.strictObject({ observationId: UuidSchema });

export const UiNodeRefSchema = v.strictObject({
  observationId: UuidSchema,
  context: UiContextRefSchema,
  stableNodeId: nonBlank(4096),
});
export type UiNodeRef = v.InferOutput<typeof UiNodeRefSchema>;

/**
 * "regex" is a devicerail extension (RE2 syntax, linear-time matching); the reference knows only
 * "exact" and "contains", so its clients never send it.
 */
export const TextMatchModeSchema = v.picklist(["exact", "contains", "regex"]);
export const TextMatchSchema = v.strictObject({
  value: nonBlank(65_536),
  mode: v.optional(TextMatchModeSchema, "exact"),
  caseSensitive: v.optional(v.boolean(), true),
});

export type TextMatch = v.InferOutput<typeof TextMatchSchema>;

export const ElementSelectorSchema = v.strictObject({
  context: nullable(UiContextSelectorSchema),
  role: nullable(cpString(1, 256)),
  name: nullable(cpString(1, 65_536)),
  value: nullable(cpString(0, 65_536)),
  identifier: nullable(cpString(1, 4096)),
  text: nullable(TextMatchSchema),
  css: nullable(cpString(1, 65_536)),
});
export type ElementSelector = v.InferOutput<typeof ElementSelectorSchema>;

export const ElementTargetSchema = v.variant("kind", [
  v.strictObject({ kind: v.literal("selector"), selector: ElementSelectorSchema }),
  v.strictObject({ kind: v.literal("node"), node: UiNodeRefSchema }),
]);
export type ElementTarget = v.InferOutput<typeof ElementTargetSchema>;

export const CoordinateFallbackReasonSchema = v.picklist(["semanticInteractionUnavailable", "platformLimitation"]);

export const ActionExecutionSchema = v.variant("mode", [
  v.strictObject({ mode: v.literal("nativeSemantic"), context: UiContextRefSchema }),
  v.strictObject({ mode: v.literal("webSemantic"), context: UiContextRefSchema }),
  v.strictObject({
    mode: v.literal("coordinateFallback"),
    context: UiContextRefSchema,
    fallbackReason: CoordinateFallbackReasonSchema,
  }),
]);
export type ActionExecution = v.InferOutput<typeof ActionExecutionSchema>;

const elementResult = v.strictObject({ element: UiNodeRefSchema });

export const FindElementArgumentsSchema = v.strictObject({ selector: ElementSelectorSchema });
export const FindElementResultSchema = elementResult;
export const TapElementArgumentsSchema = v.strictObject({ target: ElementTargetSchema });
export const TapElementResultSchema = elementResult;
export const ClearElementArgumentsSchema = v.strictObject({ target: ElementTargetSchema });
export const ClearElementResultSchema = elementResult;
export const SetElementValueArgumentsSchema = v.strictObject({
  target: ElementTargetSchema,
  value: cpString(0, 65_536),
});
export const SetElementValueResultSchema = elementResult;
export const WaitForElementConditionSchema = v.picklist(["present", "visible", "enabled", "absent"]);
export const WaitForElementArgumentsSchema = v.strictObject({
  selector: ElementSelectorSchema,
  condition: v.optional(WaitForElementConditionSchema, "present"),
});
export type WaitForElementCondition = v.InferOutput<typeof WaitForElementConditionSchema>;
export const WaitForElementResultSchema = v.strictObject({
  matched: v.boolean(),
  condition: WaitForElementConditionSchema,
  element: nullable(UiNodeRefSchema),
});

export const SEMANTIC_ACTION_NAMES = [
  "findElement",
  "tapElement",
  "clearElement",
  "setElementValue",
  "waitForElement",
] as const;
export type SemanticActionName = (typeof SEMANTIC_ACTION_NAMES)[number];

/** The argument type of each semantic action; its generated schema is the advertised inputSchema. */
export const SEMANTIC_ARGUMENTS = {
  findElement: "FindElementArguments",
  tapElement: "TapElementArguments",
  clearElement: "ClearElementArguments",
  setElementValue: "SetElementValueArguments",
  waitForElement: "WaitForElementArguments",
} as const satisfies Record<SemanticActionName, string>;

/**
 * Node states UiNode has no field for, which a driver may report in an Observation's
 * `metadata.uiStates` (docs/protocol/devices-and-actions.md#observing), in the order they are listed.
 */
export const UI_STATES = ["checked", "focused", "password", "selected"] as const;
export type UiState = (typeof UI_STATES)[number];
