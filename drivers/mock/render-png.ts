/**
 * A tiny deterministic PNG renderer for the Mock driver's screenshots: a background colour and a
 * list of flat boxes (optional 1-pixel border and one line of bitmap-font text), nothing else.
 *
 * Output is an indexed-colour PNG (colour type 3, bit depth 8, PLTE of exactly the colours that
 * end up visible, in order of first use) or, when more than 256 colours are visible, RGB (colour
 * type 2, bit depth 8). Every scanline uses filter 0; the data is compressed with zlib's
 * `Bun.deflateSync` inside a zlib wrapper, so identical inputs always give identical bytes.
 */

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
/** Compressed data is split into IDAT chunks of at most this many bytes. */
const IDAT_CHUNK = 1 << 16;

const GLYPH_W = 5;
const GLYPH_H = 7;
/** Horizontal advance per glyph, in font pixels (glyph plus one column of spacing). */
const ADVANCE = GLYPH_W + 1;
const MAX_SCALE = 6;

/**
 * 5×7 glyphs for 0x20–0x7E, 10 hex digits each: five columns left to right, bit 0 of each column
 * is the top row. Index 95 is the "unknown character" glyph (a small filled box).
 */
const FONT_HEX =
  "0000000000" + "00005f0000" + "0007000700" + "147f147f14" + "242a7f2a12" + "2313086462" + "3649552250" + "0005030000" + // space ! " # $ % & '
  "001c224100" + "0041221c00" + "082a1c2a08" + "08083e0808" + "0050300000" + "0808080808" + "0060600000" + "2010080402" + // ( ) * + , - . /
  "3e5149453e" + "00427f4000" + "4261514946" + "2141454b31" + "1814127f10" + "2745454539" + "3c4a494930" + "0171090503" + // 0-7
  "3649494936" + "064949291e" + "0036360000" + "0056360000" + "0814224100" + "1414141414" + "0041221408" + "0201510906" + // 8 9 : ; < = > ?
  "3249794136" + "7e1111117e" + "7f49494936" + "3e41414122" + "7f4141221c" + "7f49494941" + "7f09090101" + "3e41415132" + // @ A-G
  "7f0808087f" + "00417f4100" + "2040413f01" + "7f08142241" + "7f40404040" + "7f0204027f" + "7f0408107f" + "3e4141413e" + // H-O
  "7f09090906" + "3e4151215e" + "7f09192946" + "4649494931" + "01017f0101" + "3f4040403f" + "1f2040201f" + "7f2018207f" + // P-W
  "6314081463" + "0304780403" + "6151494543" + "007f414100" + "0204081020" + "0041417f00" + "0402010204" + "4040404040" + // X Y Z [ \ ] ^ _
  "0001020400" + "2054545478" + "7f48444438" + "3844444420" + "384444487f" + "3854545418" + "087e090102" + "0c5252523e" + // ` a-g
  "7f08040478" + "00447d4000" + "2040443d00" + "007f102844" + "00417f4000" + "7c04180478" + "7c08040478" + "3844444438" + // h-o
  "7c14141408" + "081414187c" + "7c08040408" + "4854545420" + "043f444020" + "3c4040207c" + "1c2040201c" + "3c4030403c" + // p-w
  "4428102844" + "0c5050503c" + "4464544c44" + "0008364100" + "00007f0000" + "0041360800" + "0201020402" + // x y z { | } ~
  "7c7c7c7c7c"; // unknown character

const UNKNOWN_GLYPH = 95;
const FONT = (() => {
  const bytes = new Uint8Array(FONT_HEX.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(FONT_HEX.slice(2 * i, 2 * i + 2), 16);
  return bytes;
})();

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const channel = (v: number) => (Number.isFinite(v) ? Math.min(255, Math.max(0, Math.round(v))) : 0);
const packRgb = (c: Rgb) => (channel(c[0]) << 16) | (channel(c[1]) << 8) | channel(c[2]);

/** A paint target: palette indices, `stride` per row, pixel (x, y) at `offset + y * stride + x`. */
interface Canvas {
  readonly data: Uint8Array | Uint32Array;
  readonly stride: number;
  readonly offset: number;
  readonly width: number;
  readonly height: number;
}

/** Fills [x0, x1) × [y0, y1), clipped to the canvas. */
function fillRect(cv: Canvas, x0: number, y0: number, x1: number, y1: number, index: number): void {
  const ax = Math.max(0, x0);
  const bx = Math.min(cv.width, x1);
  const ay = Math.max(0, y0);
  const by = Math.min(cv.height, y1);
  if (ax >= bx || ay >= by) return;
  for (let y = ay; y < by; y++) {
    const row = cv.offset + y * cv.stride;
    cv.data.fill(index, row + ax, row + bx);
  }
}

/** The rectangle a box covers, in whole pixels (unclipped), or null when it is degenerate. */
function boxRect(box: Box): { x0: number; y0: number; x1: number; y1: number } | null {
  const x0 = Math.floor(box.x);
  const y0 = Math.floor(box.y);
  const x1 = Math.round(box.x + box.width);
  const y1 = Math.round(box.y + box.height);
  if (Number.isNaN(x0) || Number.isNaN(y0) || Number.isNaN(x1) || Number.isNaN(y1) || x1 <= x0 || y1 <= y0) return null;
  return { x0, y0, x1, y1 };
}

function drawText(cv: Canvas, text: string, x0: number, y0: number, x1: number, y1: number, inset: number, index: number): void {
  // Clip to the box's interior (inside the border, if any) and to the canvas.
  const cx0 = Math.max(0, x0 + inset);
  const cy0 = Math.max(0, y0 + inset);
  const cx1 = Math.min(cv.width, x1 - inset);
  const cy1 = Math.min(cv.height, y1 - inset);
  if (cx0 >= cx1 || cy0 >= cy1 || !Number.isFinite(x0 + x1 + y0 + y1)) return;
  const boxH = y1 - y0;
  const scale = Math.min(MAX_SCALE, Math.max(1, Math.round((0.4 * boxH) / GLYPH_H)));
  const padding = 2 * scale;
  const top = y0 + Math.floor((boxH - GLYPH_H * scale) / 2);
  const right = x1 - inset; // whole glyphs only: truncate at the first one that does not fit
  let gx = x0 + inset + padding;
  for (const ch of text) {
    if (gx + GLYPH_W * scale > right) break;
    const code = ch.codePointAt(0) as number;
    const glyph = code >= 0x20 && code <= 0x7e ? code - 0x20 : UNKNOWN_GLYPH;
    for (let col = 0; col < GLYPH_W; col++) {
      const bits = FONT[glyph * GLYPH_W + col] as number;
      if (bits === 0) continue;
      const px0 = Math.max(cx0, gx + col * scale);
      const px1 = Math.min(cx1, gx + (col + 1) * scale);
      if (px0 >= px1) continue;
      for (let row = 0; row < GLYPH_H; row++) {
        if (((bits >> row) & 1) === 0) continue;
        const py0 = Math.max(cy0, top + row * scale);
        const py1 = Math.min(cy1, top + (row + 1) * scale);
        for (let y = py0; y < py1; y++) {
          const base = cv.offset + y * cv.stride;
          cv.data.fill(index, base + px0, base + px1);
        }
      }
    }
    gx += ADVANCE * scale;
  }
}

function writeChunk(out: Uint8Array, view: DataView, pos: number, type: string, data: Uint8Array): number {
  view.setUint32(pos, data.length);
  for (let i = 0; i < 4; i++) out[pos + 4 + i] = type.charCodeAt(i);
  out.set(data, pos + 8);
  view.setUint32(pos + 8 + data.length, crc32(out, pos + 4, pos + 8 + data.length));
  return pos + 12 + data.length;
}

/**
 * The zlib stream PNG wants (RFC 1950): header, raw DEFLATE, Adler-32. Bun's built-in deflate
 * instead of node:zlib, whose module costs the daemon about 10 MiB of memory at start-up.
 */
function zlibDeflate(raw: Uint8Array): Uint8Array {
  const body = Bun.deflateSync(raw as Uint8Array<ArrayBuffer>, { level: 6 });
  let a = 1;
  let b = 0;
  for (let i = 0; i < raw.length; ) {
    // 5552 bytes is the longest run before the sums must be reduced (zlib's NMAX).
    const end = Math.min(raw.length, i + 5552);
    for (; i < end; i++) {
      a += raw[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  const out = new Uint8Array(2 + body.length + 4);
  out[0] = 0x78;
  out[1] = 0x9c;
  out.set(body, 2);
  new DataView(out.buffer).setUint32(2 + body.length, ((b << 16) | a) >>> 0);
  return out;
}

function encodePng(width: number, height: number, colourType: 2 | 3, palette: Uint8Array | null, raw: Uint8Array): Uint8Array {
  const compressed = zlibDeflate(raw);
  const ihdr = new Uint8Array(13);
  const iv = new DataView(ihdr.buffer);
  iv.setUint32(0, width);
  iv.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = colourType;
  // compression 0, filter method 0, interlace 0
  const idatCount = Math.max(1, Math.ceil(compressed.length / IDAT_CHUNK));
  const size = 8 + (12 + 13) + (palette ? 12 + palette.length : 0) + idatCount * 12 + compressed.length + 12;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
  let pos = writeChunk(out, view, 8, "IHDR", ihdr);
  if (palette) pos = writeChunk(out, view, pos, "PLTE", palette);
  for (let i = 0; i < idatCount; i++) {
    pos = writeChunk(out, view, pos, "IDAT", compressed.subarray(i * IDAT_CHUNK, Math.min(compressed.length, (i + 1) * IDAT_CHUNK)));
  }
  writeChunk(out, view, pos, "IEND", new Uint8Array(0));
  return out;
}

/** Deterministic PNG of `width`×`height` pixels: background, then boxes in order (later boxes paint over earlier ones). */
export function renderPng(width: number, height: number, background: Rgb, boxes: readonly Box[]): Uint8Array {
  for (const [name, v] of [["width", width], ["height", height]] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_SIDE) throw new RangeError(`renderPng: ${name} must be an integer from 1 to ${MAX_SIDE}, got ${v}`);
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
