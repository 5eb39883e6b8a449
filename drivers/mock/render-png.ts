/**
 * A tiny deterministic PNG renderer for the Mock driver's screenshots: a background colour and a
 * list of flat boxes (optional 1-pixel border and one line of bitmap-font text), nothing else.
 *
 * Output is an indexed-colour PNG (colour type 3, bit depth 8, PLTE of exactly the colours that
 * end up visible, in order of first use) or, when more than 256 colours are visible, RGB (colour
 * type 2, bit depth 8). Every scanline uses filter 0; the data is compressed with zlib's
 * `Bun.deflateSync` inside a zlib wrapper, so identical inputs always give identical bytes.
 */

import { type Canvas, drawText, fillRect } from "./canvas.ts";
import { encodePng } from "./png-encode.ts";

export type Rgb = readonly [number, number, number];
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  fill: Rgb;
  border?: Rgb;
  text?: string;
  textColor?: Rgb;
}

/** Largest width or height accepted (the buffers grow with the product). */
const MAX_SIDE = 16384;

const channel = (v: number) => (Number.isFinite(v) ? Math.min(255, Math.max(0, Math.round(v))) : 0);
const packRgb = (c: Rgb) => (channel(c[0]) << 16) | (channel(c[1]) << 8) | channel(c[2]);

/** The rectangle a box covers, in whole pixels (unclipped), or null when it is degenerate. */
function boxRect(box: Box): { x0: number; y0: number; x1: number; y1: number } | null {
  const x0 = Math.floor(box.x);
  const y0 = Math.floor(box.y);
  const x1 = Math.round(box.x + box.width);
  const y1 = Math.round(box.y + box.height);
  if (Number.isNaN(x0) || Number.isNaN(y0) || Number.isNaN(x1) || Number.isNaN(y1) || x1 <= x0 || y1 <= y0) return null;
  return { x0, y0, x1, y1 };
}

/** Deterministic PNG of `width`×`height` pixels: background, then boxes in order (later boxes paint over earlier ones). */
export function renderPng(width: number, height: number, background: Rgb, boxes: readonly Box[]): Uint8Array {
  for (const [name, v] of [
    ["width", width],
    ["height", height],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_SIDE)
      throw new RangeError(`renderPng: ${name} must be an integer from 1 to ${MAX_SIDE}, got ${v}`);
  }

  // Every colour that may be painted, in order of first use; pixels hold indices into it.
  const colours: number[] = [];
  const indexOf = new Map<number, number>();
  const intern = (c: Rgb) => {
    const key = packRgb(c);
    let i = indexOf.get(key);
    if (i === undefined) {
      i = colours.length;
      colours.push(key);
      indexOf.set(key, i);
    }
    return i;
  };
  intern(background);
  const ops = boxes.map((box) => ({
    rect: boxRect(box),
    box,
    fill: intern(box.fill),
    border: box.border ? intern(box.border) : -1,
    text: box.text ? intern(box.textColor ?? [0, 0, 0]) : -1,
  }));

  // With at most 256 candidate colours, paint straight into the PNG's raw scanlines (one filter
  // byte, 0, then one index byte per pixel); otherwise into a wider index buffer.
  const direct = colours.length <= 256;
  const cv: Canvas = direct
    ? { data: new Uint8Array((width + 1) * height), stride: width + 1, offset: 1, width, height }
    : { data: new Uint32Array(width * height), stride: width, offset: 0, width, height };
  // Background is index 0, which both buffers start as.
  for (const { rect, box, fill, border, text } of ops) {
    if (!rect) continue;
    const { x0, y0, x1, y1 } = rect;
    fillRect(cv, x0, y0, x1, y1, fill);
    if (border >= 0) {
      fillRect(cv, x0, y0, x1, y0 + 1, border);
      fillRect(cv, x0, y1 - 1, x1, y1, border);
      fillRect(cv, x0, y0, x0 + 1, y1, border);
      fillRect(cv, x1 - 1, y0, x1, y1, border);
    }
    if (text >= 0 && box.text) drawText(cv, box.text, x0, y0, x1, y1, border >= 0 ? 1 : 0, text);
  }

  // Which colours survived, renumbered in order of first use.
  const counts = new Uint32Array(colours.length);
  const data = cv.data;
  for (let i = 0; i < data.length; i++) {
    const k = data[i] as number;
    counts[k] = (counts[k] as number) + 1;
  }
  if (direct) counts[0] = (counts[0] as number) - height; // the filter bytes
  const remap = new Int32Array(colours.length).fill(-1);
  let used = 0;
  for (let i = 0; i < colours.length; i++) if ((counts[i] as number) > 0) remap[i] = used++;

  if (used <= 256) {
    const palette = new Uint8Array(used * 3);
    for (let i = 0; i < colours.length; i++) {
      const j = remap[i] as number;
      if (j < 0) continue;
      const c = colours[i] as number;
      palette[3 * j] = c >>> 16;
      palette[3 * j + 1] = (c >>> 8) & 0xff;
      palette[3 * j + 2] = c & 0xff;
    }
    let raw: Uint8Array;
    if (direct) {
      raw = data as Uint8Array;
      if (used !== colours.length) {
        for (let y = 0; y < height; y++) {
          const end = (y + 1) * (width + 1);
          for (let i = end - width; i < end; i++) raw[i] = remap[raw[i] as number] as number;
        }
      }
    } else {
      raw = new Uint8Array((width + 1) * height);
      for (let y = 0; y < height; y++) {
        const src = y * width;
        const dst = y * (width + 1) + 1;
        for (let x = 0; x < width; x++) raw[dst + x] = remap[data[src + x] as number] as number;
      }
    }
    return encodePng(width, height, 3, palette, raw);
  }

  const raw = new Uint8Array((3 * width + 1) * height);
  for (let y = 0; y < height; y++) {
    const src = cv.offset + y * cv.stride;
    let dst = y * (3 * width + 1) + 1;
    for (let x = 0; x < width; x++) {
      const c = colours[data[src + x] as number] as number;
      raw[dst++] = c >>> 16;
      raw[dst++] = (c >>> 8) & 0xff;
      raw[dst++] = c & 0xff;
    }
  }
  return encodePng(width, height, 2, null, raw);
}
