/**
 * Screenshots and where an action touched them: the picture of a screenshot digest, and the
 * markers (tap rings, swipe and scroll arrows, an element's box) drawn over it in device pixels.
 */
import type { ReportImage } from "../model-types.ts";
import { SHA256, live, model } from "./data.ts";
import { svgEl, type Attrs } from "./dom.ts";
import { isNum, isObj } from "./format.ts";
import { type Shot, type Step, elementOf } from "./steps.ts";
import { treeLines, treeShaOf } from "./trees.ts";

const MARKER_STROKE = "#e11d48";
const MARKER_FILL = "rgba(225, 29, 72, 0.22)";

export interface Size {
  width: number;
  height: number;
}
export type Marker =
  | { type: "tap" | "double" | "longpress"; x: number; y: number }
  | { type: "swipe" | "scroll"; x1: number; y1: number; x2: number; y2: number }
  | { type: "element"; x: number; y: number; w: number; h: number };
type Arrow = Extract<Marker, { type: "swipe" | "scroll" }>;

/** The picture of a screenshot digest; in live mode a screenshot not embedded is read from the daemon. */
export function imageFor(shot: Shot | null | undefined): ReportImage | null {
  if (!shot || !shot.sha) return null;
  let image = model.images[shot.sha];
  if (!image && live && SHA256.test(shot.sha)) {
    const vp: Partial<Size> = shot.viewport || {};
    const [width, height] = [vp.width || 0, vp.height || 0];
    image = model.images[shot.sha] = {
      src: `${live.evidenceBase}${shot.sha}${live.evidenceQuery || ""}`,
      width,
      height,
      sourceWidth: width,
      sourceHeight: height,
      full: null,
    };
  }
  return image || null;
}

/** The coordinate space of a shot's markers: its viewport, else the picture's own size. */
export function viewportOf(shot: Shot, image: ReportImage): Size {
  const vp = shot.viewport;
  if (isObj(vp) && vp.width > 0 && vp.height > 0) return { width: vp.width, height: vp.height };
  return { width: image.sourceWidth || image.width || 1, height: image.sourceHeight || image.height || 1 };
}

/** Where an action touched the screen, in device pixels of its before-observation's viewport. */
export function markersFor(step: Step): Marker[] {
  if (step.kind !== "action" || !step.call || step.call.argumentsRedacted || !step.result) return [];
  const a = isObj(step.call.arguments) ? step.call.arguments : {};
  const vp = isObj(step.result.before) && isObj(step.result.before.viewport) ? step.result.before.viewport : null;
  const name = step.call.name;
  if (name === "tap" && isNum(a.x) && isNum(a.y)) return [{ type: "tap", x: a.x, y: a.y }];
  if (name === "doubleTap" && isNum(a.x) && isNum(a.y)) return [{ type: "double", x: a.x, y: a.y }];
  if (name === "longPress" && isNum(a.x) && isNum(a.y)) return [{ type: "longpress", x: a.x, y: a.y }];
  if (name === "swipe" && isNum(a.startX) && isNum(a.startY) && isNum(a.endX) && isNum(a.endY))
    return [{ type: "swipe", x1: a.startX, y1: a.startY, x2: a.endX, y2: a.endY }];
  if (name === "scroll" && isNum(a.deltaX) && isNum(a.deltaY) && vp && (a.deltaX || a.deltaY)) {
    // A scroll has no place of its own: an arrow from the centre, as long as the scroll (kept on screen).
    const cx = vp.width / 2;
    const cy = vp.height / 2;
    const k = Math.min(
      1,
      (0.45 * vp.width) / Math.max(1, Math.abs(a.deltaX)),
      (0.45 * vp.height) / Math.max(1, Math.abs(a.deltaY)),
    );
    return [{ type: "scroll", x1: cx, y1: cy, x2: cx + a.deltaX * k, y2: cy + a.deltaY * k }];
  }
  // Element actions: the element's bounds in the before tree, and for a tap its centre.
  const element = elementOf(step.result);
  const beforeSha = treeShaOf(step.result.before);
  const tree = element && beforeSha ? treeLines(beforeSha) : null;
  const node = tree && element ? tree.nodes.get(element) : null;
  if (!node || !Array.isArray(node.b) || !(node.b[2] > 0) || !(node.b[3] > 0)) return [];
  const [x, y, w, h] = node.b;
  const out: Marker[] = [{ type: "element", x, y, w, h }];
  if (/tap|click|press/i.test(name))
    out.push({
      type: /long/i.test(name) ? "longpress" : /double/i.test(name) ? "double" : "tap",
      x: x + w / 2,
      y: y + h / 2,
    });
  return out;
}

/** svg.markers over a screenshot: viewBox in device pixels, stretched over the picture. */
export function markersSvg(viewport: Size, markers: readonly Marker[]): SVGSVGElement {
  const svg = svgEl("svg", {
    class: "markers",
    viewBox: `0 0 ${viewport.width} ${viewport.height}`,
    width: "100%",
    height: "100%",
    preserveAspectRatio: "none",
    "aria-hidden": "true",
  });
  const r = 0.03 * Math.min(viewport.width, viewport.height);
  const ring = (cls: string, cx: number, cy: number, radius: number, extra?: Attrs) =>
    svgEl("circle", {
      class: cls,
      cx,
      cy,
      r: radius,
      stroke: MARKER_STROKE,
      fill: MARKER_FILL,
      "stroke-width": 3,
      "vector-effect": "non-scaling-stroke",
      ...extra,
    });
  for (const m of markers) {
    if (m.type === "tap") svg.append(ring("marker-tap", m.x, m.y, r));
    else if (m.type === "double")
      svg.append(ring("marker-double", m.x, m.y, r), ring("marker-double", m.x, m.y, r * 1.6, { fill: "none" }));
    else if (m.type === "longpress")
      svg.append(ring("marker-longpress", m.x, m.y, r * 1.3, { "stroke-dasharray": "6 4", "stroke-width": 4 }));
    else if (m.type === "element")
      svg.append(
        svgEl("rect", {
          class: "marker-element",
          x: m.x,
          y: m.y,
          width: m.w,
          height: m.h,
          stroke: MARKER_STROKE,
          fill: "none",
          "stroke-width": 2,
          "stroke-dasharray": "5 3",
          "vector-effect": "non-scaling-stroke",
        }),
      );
    else if (m.type === "swipe" || m.type === "scroll")
      svg.append(...arrow(m, r, m.type === "swipe" ? "marker-swipe" : "marker-scroll"));
  }
  return svg;
}

/** A line with a start dot and an arrowhead at its end. */
function arrow(m: Arrow, r: number, cls: string): SVGElement[] {
  const angle = Math.atan2(m.y2 - m.y1, m.x2 - m.x1);
  const len = r * 1.8;
  const point = (a: number) => `${m.x2 - len * Math.cos(a)},${m.y2 - len * Math.sin(a)}`;
  // The shaft stops inside the head, so the head's tip stays sharp.
  const shaftX = m.x2 - len * 0.7 * Math.cos(angle);
  const shaftY = m.y2 - len * 0.7 * Math.sin(angle);
  return [
    svgEl("circle", {
      class: `${cls}-start`,
      cx: m.x1,
      cy: m.y1,
      r: r * 0.45,
      fill: MARKER_FILL,
      stroke: MARKER_STROKE,
      "stroke-width": 2,
      "vector-effect": "non-scaling-stroke",
    }),
    svgEl("line", {
      class: cls,
      x1: m.x1,
      y1: m.y1,
      x2: shaftX,
      y2: shaftY,
      stroke: MARKER_STROKE,
      "stroke-width": 4,
      "stroke-linecap": "round",
      "vector-effect": "non-scaling-stroke",
    }),
    svgEl("polygon", {
      class: `${cls}-head marker-arrowhead`,
      points: `${m.x2},${m.y2} ${point(angle - 0.5)} ${point(angle + 0.5)}`,
      fill: MARKER_STROKE,
    }),
  ];
}
