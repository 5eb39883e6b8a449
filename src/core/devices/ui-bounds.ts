import { clipText } from "../../driver/clip-text.ts";
import type { UiNode } from "../../protocol/types/ui.ts";

/**
 * Device text is the app's, not ours: any length may arrive. Each text field of a node is kept to
 * these many code points (the protocol allows 65,536; a smaller share leaves room for the rest of
 * the tree under its 768 KiB), and to the tighter one when the whole tree is still too large
 * (docs/protocol/limits.md#device-text).
 */
export const UI_TEXT_MAX = 8_192;
export const UI_TEXT_TIGHT_MAX = 256;
/** The protocol's own limits of the other clipped fields (src/protocol/types/ui.ts). */
const IDENTIFIER_MAX = 4_096;
const ROLE_MAX = 256;
export const UI_TREE_MAX_NODES = 10_000;

export interface BoundedTree<T extends { nodes: UiNode[] }> {
  tree: T;
  /** How many fields were clipped. */
  clipped: number;
}

/** The tree with every text field of every node within `textMax` code points (and identifier and role within the protocol's limits). */
export function boundUiTree<T extends { nodes: UiNode[] }>(tree: T, textMax: number = UI_TEXT_MAX): BoundedTree<T> {
  let clipped = 0;
  const field = (s: string | null, max: number): string | null => {
    if (s === null || s.length <= max) return s;
    const out = clipText(s, max);
    if (out !== s) clipped++;
    return out;
  };
  const nodes = tree.nodes.map((n) => {
    const name = field(n.name, textMax);
    const value = field(n.value, textMax);
    const text = field(n.text, textMax);
    const identifier = field(n.identifier, IDENTIFIER_MAX);
    const role = field(n.role, ROLE_MAX) as string;
    if (name === n.name && value === n.value && text === n.text && identifier === n.identifier && role === n.role)
      return n;
    return { ...n, name, value, text, identifier, role };
  });
  return { tree: clipped === 0 ? tree : { ...tree, nodes }, clipped };
}
