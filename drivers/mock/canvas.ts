/**
 * The painting primitives of the Mock's screenshots: flat rectangles and one line of 5×7 bitmap
 * text, into a buffer of palette indices.
 */

/** A paint target: palette indices, `stride` per row, pixel (x, y) at `offset + y * stride + x`. */
export interface Canvas {
  readonly data: Uint8Array | Uint32Array;
  readonly stride: number;
  readonly offset: number;
  readonly width: number;
  readonly height: number;
}

/** Fills [x0, x1) × [y0, y1), clipped to the canvas. */
export function fillRect(cv: Canvas, x0: number, y0: number, x1: number, y1: number, index: number): void {
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
  "0000000000" +
  "00005f0000" +
  "0007000700" +
  "147f147f14" +
  "242a7f2a12" +
  "2313086462" +
  "3649552250" +
  "0005030000" + // space ! " # $ % & '
  "001c224100" +
  "0041221c00" +
  "082a1c2a08" +
  "08083e0808" +
  "0050300000" +
  "0808080808" +
  "0060600000" +
  "2010080402" + // ( ) * + , - . /
  "3e5149453e" +
  "00427f4000" +
  "4261514946" +
  "2141454b31" +
  "1814127f10" +
  "2745454539" +
  "3c4a494930" +
  "0171090503" + // 0-7
  "3649494936" +
  "064949291e" +
  "0036360000" +
  "0056360000" +
  "0814224100" +
  "1414141414" +
  "0041221408" +
  "0201510906" + // 8 9 : ; < = > ?
  "3249794136" +
  "7e1111117e" +
  "7f49494936" +
  "3e41414122" +
  "7f4141221c" +
  "7f49494941" +
  "7f09090101" +
  "3e41415132" + // @ A-G
  "7f0808087f" +
  "00417f4100" +
  "2040413f01" +
  "7f08142241" +
  "7f40404040" +
  "7f0204027f" +
  "7f0408107f" +
  "3e4141413e" + // H-O
  "7f09090906" +
  "3e4151215e" +
  "7f09192946" +
  "4649494931" +
  "01017f0101" +
  "3f4040403f" +
  "1f2040201f" +
  "7f2018207f" + // P-W
  "6314081463" +
  "0304780403" +
  "6151494543" +
  "007f414100" +
  "0204081020" +
  "0041417f00" +
  "0402010204" +
  "4040404040" + // X Y Z [ \ ] ^ _
  "0001020400" +
  "2054545478" +
  "7f48444438" +
  "3844444420" +
  "384444487f" +
  "3854545418" +
  "087e090102" +
  "0c5252523e" + // ` a-g
  "7f08040478" +
  "00447d4000" +
  "2040443d00" +
  "007f102844" +
  "00417f4000" +
  "7c04180478" +
  "7c08040478" +
  "3844444438" + // h-o
  "7c14141408" +
  "081414187c" +
  "7c08040408" +
  "4854545420" +
  "043f444020" +
  "3c4040207c" +
  "1c2040201c" +
  "3c4030403c" + // p-w
  "4428102844" +
  "0c5050503c" +
  "4464544c44" +
  "0008364100" +
  "00007f0000" +
  "0041360800" +
  "0201020402" + // x y z { | } ~
  "7c7c7c7c7c"; // unknown character

const UNKNOWN_GLYPH = 95;
const FONT = (() => {
  const bytes = new Uint8Array(FONT_HEX.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(FONT_HEX.slice(2 * i, 2 * i + 2), 16);
  return bytes;
})();

/** One line of text in whole glyphs, scaled to the box height and clipped to its interior (inside the border). */
export function drawText(
  cv: Canvas,
  text: string,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  inset: number,
  index: number,
): void {
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
