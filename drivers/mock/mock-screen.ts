import type { UiNode } from "../../src/protocol/types/ui.ts";
import { SCREEN } from "./mock-app.ts";
import { type Box, type Rgb, renderPng } from "./render-png.ts";

interface Theme {
  background: Rgb;
  text: Rgb;
  muted: Rgb;
  field: Rgb;
  button: Rgb;
  buttonText: Rgb;
  disabled: Rgb;
  list: Rgb;
  border: Rgb;
  focus: Rgb;
}

const LIGHT: Theme = {
  background: [245, 246, 248],
  text: [20, 24, 31],
  muted: [110, 118, 129],
  field: [255, 255, 255],
  button: [37, 99, 235],
  buttonText: [255, 255, 255],
  disabled: [203, 208, 216],
  list: [233, 236, 241],
  border: [190, 196, 206],
  focus: [37, 99, 235],
};

const DARK: Theme = {
  background: [17, 20, 26],
  text: [233, 236, 241],
  muted: [150, 158, 170],
  field: [31, 36, 45],
  button: [59, 130, 246],
  buttonText: [255, 255, 255],
  disabled: [64, 70, 82],
  list: [27, 31, 39],
  border: [70, 78, 92],
  focus: [96, 165, 250],
};

function box(n: UiNode, t: Theme, focused: boolean): Box | null {
  const b = n.bounds;
  if (!b || n.parentStableNodeId === null) return null;
  const at = { x: b.x, y: b.y, width: b.width, height: b.height };
  switch (n.role) {
    case "Button":
      return n.enabled
        ? { ...at, fill: t.button, text: n.text ?? "", textColor: t.buttonText }
        : { ...at, fill: t.disabled, text: n.text ?? "", textColor: t.muted };
    case "TextField":
    case "SecureTextField": {
      const empty = !n.value;
      return {
        ...at,
        fill: t.field,
        border: focused ? t.focus : t.border,
        text: empty ? (n.name ?? "") : (n.value ?? ""),
        textColor: empty ? t.muted : t.text,
      };
    }
    case "Switch":
      return { ...at, fill: t.field, border: t.border, text: `${n.text ?? ""}: ${n.value ?? ""}`, textColor: t.text };
    case "List":
      return { ...at, fill: t.list };
    case "ListItem":
      return { ...at, fill: t.field, border: t.border, text: n.text ?? "", textColor: t.text };
    default:
      return { ...at, fill: t.background, text: n.text ?? "", textColor: t.text };
  }
}

const cache = new Map<string, Uint8Array>();
const CACHE_LIMIT = 64;

/** The screenshot of a tree: one flat box per node in preorder, so parents paint under children. */
export function renderScreen(
  nodes: readonly UiNode[],
  opts: { dark: boolean; focusedNodeId: string | null },
): Uint8Array {
  const key = JSON.stringify([opts, nodes]);
  const hit = cache.get(key);
  if (hit) return hit;
  const t = opts.dark ? DARK : LIGHT;
  const boxes = nodes.map((n) => box(n, t, n.stableNodeId === opts.focusedNodeId)).filter((b): b is Box => b !== null);
  const png = renderPng(SCREEN.width, SCREEN.height, t.background, boxes);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, png);
  return png;
}
