/**
 * One element as one line, in two styles of the same renderer:
 *
 * - `terminal` (the CLI): `role "text" #identifier [x,y,w,h] [disabled] [focused]`, the node as the
 *   device gives it (full role, full label, bounds), coloured by the caller's paint;
 * - `model` (MCP): `Button "Sign in" id=login value="x" [disabled] [focused] at=540,1200 size=300x120`,
 *   short role and id, labels clipped to one line, the centre and size of the visible part, so a
 *   model can tap it and spends few tokens reading it.
 */
import type { UiNode } from "../../protocol/types/ui.ts";
import type { Rect } from "../../protocol/ui-geometry.ts";

/** How the terminal style colours its parts; identity for plain text. */
export interface Paint {
  bold(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  yellow(s: string): string;
}

const same = (s: string) => s;
export const PLAIN: Paint = { bold: same, cyan: same, dim: same, yellow: same };

export type LineStyle = { style: "terminal"; paint?: Paint } | { style: "model"; visible: Rect };

const LABEL_CHARS = 80;

/** One line of at most LABEL_CHARS: whitespace and control characters (a device can put anything in a label) become single spaces. */
export const clip = (s: string) => {
  const oneLine = s.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  const points = [...oneLine];
  return points.length > LABEL_CHARS ? `${points.slice(0, LABEL_CHARS - 1).join("")}…` : oneLine;
};

// A role is the device's text too (an Android class name): one line, like every label.
export const shortRole = (role: string) => clip(role.slice(role.lastIndexOf(".") + 1));
const shortId = (id: string) => (id.includes(":id/") ? id.slice(id.indexOf(":id/") + 4) : id);
const round = (n: number) => String(Math.round(n));

/** The text a person reads, else the accessible name. */
const labelOf = (n: UiNode) => n.text || n.name;

/** Where a tap lands: the centre of the visible part, in device pixels. */
export const centreOf = (r: Rect) => ({ x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) });

/** The element's line (without its ref) in the given style. */
export function elementLine(n: UiNode, states: readonly string[], s: LineStyle): string {
  const label = labelOf(n);
  if (s.style === "terminal") {
    const p = s.paint ?? PLAIN;
    const b = n.bounds;
    const flags = [...(n.enabled === false ? ["disabled"] : []), ...states];
    return [
      p.bold(n.role),
      label ? JSON.stringify(label) : "",
      n.identifier ? p.cyan(`#${n.identifier}`) : "",
      b ? p.dim(`[${[b.x, b.y, b.width, b.height].map(round).join(",")}]`) : "",
      ...flags.map((f) => p.yellow(`[${f}]`)),
    ]
      .filter(Boolean)
      .join(" ");
  }
  const parts = [shortRole(n.role)];
  if (label) parts.push(JSON.stringify(clip(label)));
  if (n.identifier) parts.push(`id=${clip(shortId(n.identifier))}`);
  if (n.value && n.value !== label) parts.push(`value=${JSON.stringify(clip(n.value))}`);
  if (n.enabled === false) parts.push("[disabled]");
  for (const st of states) parts.push(`[${st}]`);
  const c = centreOf(s.visible);
  parts.push(`at=${c.x},${c.y}`, `size=${Math.round(s.visible.width)}x${Math.round(s.visible.height)}`);
  return parts.join(" ");
}

/** Role and label only (`Button "Sign in"`, model style): what names an element whose states may have changed since. */
export function shortLine(n: UiNode): string {
  const label = labelOf(n);
  return label ? `${shortRole(n.role)} ${JSON.stringify(clip(label))}` : shortRole(n.role);
}
