/**
 * The disambiguation rule, decided once for every surface: when tapElement answers
 * element_ambiguous for a selector and exactly one of the matching elements can be tapped
 * (enabled, not reported unhittable, on the screen), that one is what the caller meant (a
 * "Sign in" title above a "Sign in" button), and the surface taps it through a node reference
 * into the observation it read after the failure. Otherwise the ambiguity stands.
 */
import type { Viewport } from "../../protocol/types/device.ts";
import type { ElementTarget, UiSnapshot } from "../../protocol/types/ui.ts";
import { visibleRect } from "../../protocol/ui-geometry.ts";
import type { NodePredicate } from "./closest.ts";

/** What the rule decided: the node to tap instead, and the note that says so. */
export interface Disambiguated {
  target: ElementTarget;
  stableNodeId: string;
  note: string;
}

/** The only tappable element of several that `matches` (in `snapshot` of observation `observationId`), or null. */
export function onlyTappable(
  snapshot: UiSnapshot,
  viewport: Viewport,
  matches: NodePredicate | null,
  label: string,
): Disambiguated | null {
  if (!matches) return null;
  const matching = snapshot.nodes.filter(matches);
  const tappable = matching.filter(
    (n) => n.enabled !== false && n.hittable !== false && visibleRect(n, viewport) !== null,
  );
  const only = tappable.length === 1 ? tappable[0] : undefined;
  if (!only || matching.length < 2) return null;
  return {
    target: {
      kind: "node",
      node: { observationId: snapshot.observationId, context: snapshot.context, stableNodeId: only.stableNodeId },
    },
    stableNodeId: only.stableNodeId,
    note: `${matching.length} elements match ${label}; tapped the only one that can be tapped`,
  };
}
