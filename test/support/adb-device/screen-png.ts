/** `screencap -p` for the simulated phone: one flat box per visible node of the current tree. */
import { type Box, type Rgb, renderPng } from "../../../drivers/mock/render-png.ts";
import { paintOrder, type SnapshotNode, type View } from "./scenario.ts";

export const COLOURS = {
  background: [250, 250, 250],
  text: [33, 33, 33],
  clickable: [25, 118, 210],
  clickableText: [255, 255, 255],
  checked: [56, 142, 60],
  disabled: [189, 189, 189],
  disabledText: [117, 117, 117],
  field: [255, 255, 255],
  fieldBorder: [158, 158, 158],
  focused: [255, 143, 0],
} as const satisfies Record<string, Rgb>;

/** Boxes in paint order; containers without text or a role are left as background. */
export function boxesFor(root: SnapshotNode): Box[] {
  const boxes: Box[] = [];
  for (const n of paintOrder(root)) {
    const [x1, y1, x2, y2] = n.bounds;
    const rect = { x: x1, y: y1, width: x2 - x1, height: y2 - y1 };
    const label = n.text || n.contentDesc || undefined;
    const isField = n.source.field !== undefined;
    let box: Box | null = null;
    if (!n.enabled && (n.clickable || isField))
      box = { ...rect, fill: COLOURS.disabled, textColor: COLOURS.disabledText };
    else if (isField)
      box = {
        ...rect,
        fill: COLOURS.field,
        border: n.focused ? COLOURS.focused : COLOURS.fieldBorder,
        textColor: COLOURS.text,
      };
    else if (n.checked) box = { ...rect, fill: COLOURS.checked, textColor: COLOURS.clickableText };
    else if (n.clickable) box = { ...rect, fill: COLOURS.clickable, textColor: COLOURS.clickableText };
    else if (label) box = { ...rect, fill: COLOURS.background, textColor: COLOURS.text };
    if (!box) continue;
    if (n.focused && !isField) box.border = COLOURS.focused;
    if (label) box.text = label;
    boxes.push(box);
  }
  return boxes;
}

/** Renders are cached by tree (its XML) and size: encoding a 1080x2400 frame costs tens of ms. */
export class ScreenRenderer {
  private readonly cache = new Map<string, Uint8Array>();
  renders = 0;

  constructor(private readonly limit = 16) {}

  png(root: SnapshotNode, key: string, view: View): Uint8Array {
    const k = `${view.width}x${view.height}|${key}`;
    const hit = this.cache.get(k);
    if (hit) return hit;
    this.renders++;
    const png = renderPng(view.width, view.height, COLOURS.background, boxesFor(root));
    if (this.cache.size >= this.limit) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(k, png);
    return png;
  }
}
