/**
 * Pure facts about a UI tree that the daemon and every surface share: the on-screen part of a
 * node (what "visible" means for waitForElement and where a tap lands) and waitForElement's own
 * wait when the call gives no budget (docs/protocol/devices-and-actions.md).
 */
import type { Viewport } from "./types/device.ts";
import type { UiNode } from "./types/ui.ts";

/** How long waitForElement waits without an actionTimeoutMs. */
export const DEFAULT_WAIT_MS = 10_000;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The on-screen part of a node's bounds, or null when it has no area inside the viewport. */
export function visibleRect(node: UiNode, viewport: Viewport): Rect | null {
  const b = node.bounds;
  if (!b || b.width <= 0 || b.height <= 0) return null;
  const x0 = Math.max(0, b.x);
  const y0 = Math.max(0, b.y);
  const x1 = Math.min(viewport.width, b.x + b.width);
  const y1 = Math.min(viewport.height, b.y + b.height);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}
