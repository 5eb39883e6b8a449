import { describe, expect, test } from "bun:test";
import { inflateSync } from "node:zlib";
import { type Box, type Rgb, renderPng } from "../../../drivers/mock/render-png.ts";

/** Bitwise CRC-32 (independent of the table the renderer uses). */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

interface Decoded {
  width: number;
  height: number;
  colourType: number;
  chunkTypes: string[];
  palette: Rgb[] | null;
  filters: number[];
  /** The pixel's colour as [r, g, b]. */
  at(x: number, y: number): Rgb;
}

/** A strict little PNG decoder for the subset the renderer emits (8-bit, colour types 2 and 3). */
function decode(png: Uint8Array): Decoded {
  expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: { type: string; data: Uint8Array }[] = [];
  let pos = 8;
  while (pos < png.length) {
    const length = view.getUint32(pos);
    const type = String.fromCharCode(...png.subarray(pos + 4, pos + 8));
    const data = png.subarray(pos + 8, pos + 8 + length);
    expect(pos + 12 + length).toBeLessThanOrEqual(png.length);
    expect(view.getUint32(pos + 8 + length)).toBe(crc32(png.subarray(pos + 4, pos + 8 + length)));
    chunks.push({ type, data });
    pos += 12 + length;
  }
  expect(pos).toBe(png.length);
  const types = chunks.map((c) => c.type);
  expect(types[0]).toBe("IHDR");
  expect(types.at(-1)).toBe("IEND");
  expect(chunks.at(-1)?.data.length).toBe(0);

  const ihdr = chunks[0]!.data;
  expect(ihdr.length).toBe(13);
  const iv = new DataView(ihdr.buffer, ihdr.byteOffset, 13);
  const width = iv.getUint32(0);
  const height = iv.getUint32(4);
  expect(ihdr[8]).toBe(8); // bit depth
  const colourType = ihdr[9]!;
  expect([2, 3]).toContain(colourType);
  expect([ihdr[10], ihdr[11], ihdr[12]]).toEqual([0, 0, 0]); // compression, filter, interlace

  // IDAT chunks are consecutive; PLTE (only for indexed) comes before them.
  const firstIdat = types.indexOf("IDAT");
  const lastIdat = types.lastIndexOf("IDAT");
  expect(firstIdat).toBeGreaterThan(0);
  expect(types.slice(firstIdat, lastIdat + 1).every((t) => t === "IDAT")).toBe(true);
  let palette: Rgb[] | null = null;
  const plte = chunks.filter((c) => c.type === "PLTE");
  if (colourType === 3) {
    expect(plte.length).toBe(1);
    expect(types.indexOf("PLTE")).toBeLessThan(firstIdat);
    const p = plte[0]!.data;
    expect(p.length % 3).toBe(0);
    expect(p.length / 3).toBeGreaterThanOrEqual(1);
    expect(p.length / 3).toBeLessThanOrEqual(256);
    palette = [];
    for (let i = 0; i < p.length; i += 3) palette.push([p[i]!, p[i + 1]!, p[i + 2]!]);
  } else {
    expect(plte.length).toBe(0);
  }

  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === "IDAT").map((c) => c.data)));
  const bpp = colourType === 3 ? 1 : 3;
  const rowBytes = width * bpp;
  expect(raw.length).toBe(height * (rowBytes + 1));
  const pixels = new Uint8Array(height * rowBytes);
  const filters: number[] = [];
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (rowBytes + 1)]!;
    filters.push(filter);
    const line = raw.subarray(y * (rowBytes + 1) + 1, (y + 1) * (rowBytes + 1));
    const out = pixels.subarray(y * rowBytes, (y + 1) * rowBytes);
    const prev = y > 0 ? pixels.subarray((y - 1) * rowBytes, y * rowBytes) : new Uint8Array(rowBytes);
    for (let i = 0; i < rowBytes; i++) {
      const a = i >= bpp ? out[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      let pred: number;
      if (filter === 0) pred = 0;
      else if (filter === 1) pred = a;
      else if (filter === 2) pred = b;
      else if (filter === 3) pred = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`bad filter type ${filter}`);
      out[i] = (line[i]! + pred) & 0xff;
    }
  }
  if (palette) {
    let maxIndex = 0;
    for (const index of pixels) if (index > maxIndex) maxIndex = index;
    expect(maxIndex).toBeLessThan(palette.length);
  }

  return {
    width,
    height,
    colourType,
    chunkTypes: types,
    palette,
    filters,
    at(x, y) {
      if (x < 0 || y < 0 || x >= width || y >= height)
        throw new RangeError(`(${x}, ${y}) is outside ${width}×${height}`);
      if (palette) return palette[pixels[y * width + x]!]!;
      const i = (y * width + x) * 3;
      return [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!];
    },
  };
}

/** Every pixel coordinate whose colour equals `colour`. */
function pixelsOf(img: Decoded, colour: Rgb): [number, number][] {
  const out: [number, number][] = [];
  for (let y = 0; y < img.height; y++)
    for (let x = 0; x < img.width; x++) if (sameRgb(img.at(x, y), colour)) out.push([x, y]);
  return out;
}
const sameRgb = (a: Rgb, b: Rgb) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];

const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const RED: Rgb = [220, 30, 40];
const BLUE: Rgb = [20, 60, 200];
const GREEN: Rgb = [10, 180, 70];

describe("renderPng", () => {
  test("produces a valid indexed PNG of the requested size when given a few colours", () => {
    const img = decode(renderPng(40, 30, WHITE, [{ x: 5, y: 5, width: 10, height: 10, fill: RED }]));
    expect([img.width, img.height, img.colourType]).toEqual([40, 30, 3]);
    expect(img.chunkTypes[1]).toBe("PLTE");
    expect(img.filters.every((f) => f === 0)).toBe(true);
  });

  test("paints the background at every corner when boxes do not cover it", () => {
    const img = decode(renderPng(40, 30, BLUE, [{ x: 10, y: 10, width: 5, height: 5, fill: RED }]));
    for (const [x, y] of [
      [0, 0],
      [39, 0],
      [0, 29],
      [39, 29],
    ] as const)
      expect(img.at(x, y)).toEqual(BLUE);
  });

  test("paints the box fill at its centre and nowhere outside it when the box is on screen", () => {
    const img = decode(renderPng(50, 40, WHITE, [{ x: 10, y: 8, width: 20, height: 12, fill: RED }]));
    expect(img.at(20, 14)).toEqual(RED);
    const reds = pixelsOf(img, RED);
    expect(reds.length).toBe(20 * 12);
    expect(reds.every(([x, y]) => x >= 10 && x < 30 && y >= 8 && y < 20)).toBe(true);
  });

  test("draws a 1-pixel border inside the box edges when a border is given", () => {
    const img = decode(renderPng(50, 40, WHITE, [{ x: 10, y: 8, width: 20, height: 12, fill: RED, border: GREEN }]));
    for (const [x, y] of [
      [10, 8],
      [29, 8],
      [10, 19],
      [29, 19],
      [20, 8],
      [20, 19],
      [10, 14],
      [29, 14],
    ] as const)
      expect(img.at(x, y)).toEqual(GREEN);
    for (const [x, y] of [
      [11, 9],
      [28, 18],
      [20, 14],
    ] as const)
      expect(img.at(x, y)).toEqual(RED);
    for (const [x, y] of [
      [9, 14],
      [30, 14],
      [20, 7],
      [20, 20],
    ] as const)
      expect(img.at(x, y)).toEqual(WHITE);
    expect(pixelsOf(img, GREEN).length).toBe(2 * 20 + 2 * 10);
  });

  test("floors x and y and rounds the far edges when coordinates are fractional", () => {
    // x: floor(3.7) = 3 to round(3.7 + 4.6 = 8.3) = 8; y: floor(2.2) = 2 to round(2.2 + 3.4 = 5.6) = 6.
    const img = decode(renderPng(12, 10, WHITE, [{ x: 3.7, y: 2.2, width: 4.6, height: 3.4, fill: RED }]));
    const reds = pixelsOf(img, RED);
    expect(reds.length).toBe(5 * 4);
    expect(Math.min(...reds.map(([x]) => x))).toBe(3);
    expect(Math.max(...reds.map(([x]) => x))).toBe(7);
    expect(Math.min(...reds.map(([, y]) => y))).toBe(2);
    expect(Math.max(...reds.map(([, y]) => y))).toBe(5);
  });

  test("clips a box to the image when it is partly off screen", () => {
    const boxes: Box[] = [
      { x: -15, y: -5, width: 25, height: 10, fill: RED, border: GREEN },
      { x: 30, y: 25, width: 100, height: 100, fill: BLUE },
    ];
    const img = decode(renderPng(40, 30, WHITE, boxes));
    expect(img.at(0, 0)).toEqual(RED); // the border's top-left corner is off screen
    expect(img.at(9, 0)).toEqual(GREEN); // right border column
    expect(img.at(0, 4)).toEqual(GREEN); // bottom border row
    expect(img.at(10, 0)).toEqual(WHITE);
    expect(img.at(0, 5)).toEqual(WHITE);
    expect(pixelsOf(img, RED).length).toBe(9 * 4);
    expect(img.at(39, 29)).toEqual(BLUE);
    expect(img.at(30, 25)).toEqual(BLUE);
    expect(img.at(29, 29)).toEqual(WHITE);
    expect(pixelsOf(img, BLUE).length).toBe(10 * 5);
  });

  test("leaves the image byte-identical to one without the box when the box is entirely off screen or empty", () => {
    const base = renderPng(30, 20, WHITE, [{ x: 2, y: 2, width: 5, height: 5, fill: RED }]);
    const offscreen: Box[] = [
      { x: 2, y: 2, width: 5, height: 5, fill: RED },
      { x: -50, y: 3, width: 20, height: 5, fill: BLUE, border: GREEN, text: "hi" },
      { x: 31, y: 3, width: 20, height: 5, fill: BLUE },
      { x: 3, y: 200, width: 20, height: 5, fill: BLUE },
      { x: 3, y: 3, width: 0, height: 5, fill: BLUE },
      { x: 3, y: 3, width: -4, height: 5, fill: BLUE },
      { x: Number.NaN, y: 3, width: 4, height: 5, fill: BLUE },
    ];
    expect(renderPng(30, 20, WHITE, offscreen)).toEqual(base);
  });

  test("paints later boxes over earlier ones when boxes overlap", () => {
    const img = decode(
      renderPng(30, 30, WHITE, [
        { x: 0, y: 0, width: 20, height: 20, fill: RED },
        { x: 10, y: 10, width: 20, height: 20, fill: BLUE },
      ]),
    );
    expect(img.at(5, 5)).toEqual(RED);
    expect(img.at(15, 15)).toEqual(BLUE);
    expect(img.at(25, 25)).toEqual(BLUE);
  });

  test("lists only visible colours in the palette when a box is painted over completely", () => {
    const img = decode(
      renderPng(20, 20, WHITE, [
        { x: 2, y: 2, width: 5, height: 5, fill: RED, border: GREEN },
        { x: 0, y: 0, width: 10, height: 10, fill: BLUE },
      ]),
    );
    expect(img.palette).toEqual([WHITE, BLUE]);
  });

  test("paints text in its textColor inside the box when the box has text", () => {
    const box: Box = { x: 10, y: 10, width: 200, height: 40, fill: WHITE, text: "Hello", textColor: RED };
    const img = decode(renderPng(240, 70, BLUE, [box]));
    const reds = pixelsOf(img, RED);
    expect(reds.length).toBeGreaterThan(50);
    // Scale is round(0.4 * 40 / 7) = 2: the "H" has a full-height left stem, two pixels wide.
    const left = Math.min(...reds.map(([x]) => x));
    const top = Math.min(...reds.map(([, y]) => y));
    const bottom = Math.max(...reds.map(([, y]) => y));
    expect(bottom - top + 1).toBe(14);
    expect(left).toBeGreaterThan(10);
    expect(left).toBeLessThan(20); // left-aligned with a small padding
    expect(Math.abs(top - 10 - (50 - 1 - bottom))).toBeLessThanOrEqual(1); // vertically centred
    for (let y = top; y <= bottom; y++) {
      expect(img.at(left, y)).toEqual(RED);
      expect(img.at(left + 1, y)).toEqual(RED);
    }
  });

  test("paints text in black when no textColor is given", () => {
    const img = decode(renderPng(100, 30, WHITE, [{ x: 0, y: 0, width: 100, height: 30, fill: GREEN, text: "I" }]));
    expect(pixelsOf(img, BLACK).length).toBeGreaterThan(0);
    expect(img.at(50, 15)).toEqual(GREEN);
  });

  test("scales text with the box height within 1 to 6 when boxes differ in height", () => {
    const heightOfText = (boxHeight: number) => {
      const img = decode(
        renderPng(400, boxHeight, WHITE, [
          { x: 0, y: 0, width: 400, height: boxHeight, fill: WHITE, text: "I", textColor: RED },
        ]),
      );
      const ys = pixelsOf(img, RED).map(([, y]) => y);
      return Math.max(...ys) - Math.min(...ys) + 1;
    };
    expect(heightOfText(10)).toBe(7); // scale 1 (the minimum)
    expect(heightOfText(70)).toBe(28); // round(28 / 7) = 4
    expect(heightOfText(400)).toBe(42); // capped at 6
  });

  test("never paints text outside its box when the text is too long or the box too small", () => {
    const boxes: Box[] = [
      {
        x: 5,
        y: 5,
        width: 60,
        height: 20,
        fill: WHITE,
        border: GREEN,
        text: "A very long label that cannot possibly fit",
        textColor: RED,
      },
      { x: 5, y: 40, width: 40, height: 4, fill: WHITE, text: "WWWWWWWW", textColor: RED }, // shorter than one glyph
      { x: 70, y: 5, width: 6, height: 30, fill: WHITE, text: "M", textColor: RED }, // narrower than padding + glyph
      { x: -8, y: 50, width: 30, height: 14, fill: WHITE, text: "@@@@", textColor: RED }, // partly off screen
    ];
    const img = decode(renderPng(100, 64, BLUE, boxes));
    const reds = pixelsOf(img, RED);
    expect(reds.length).toBeGreaterThan(0);
    const inside = ([x, y]: [number, number]) =>
      (x > 5 && x < 64 && y > 5 && y < 24) || // inside the first box's border
      (x >= 5 && x < 45 && y >= 40 && y < 44) ||
      (x >= 0 && x < 22 && y >= 50 && y < 64);
    expect(reds.filter((p) => !inside(p))).toEqual([]);
    // Each box except the too-narrow third one shows (clipped) text.
    expect(reds.some(([, y]) => y < 24)).toBe(true);
    expect(reds.some(([, y]) => y >= 40 && y < 44)).toBe(true);
    expect(reds.some(([, y]) => y >= 50)).toBe(true);
    expect(pixelsOf(img, GREEN).length).toBe(2 * 60 + 2 * 18); // the border is intact
    // Whole glyphs only: the first box shows a few characters then stops before its right edge.
    expect(Math.max(...reds.filter(([, y]) => y < 24).map(([x]) => x))).toBeLessThan(63);
  });

  test("renders characters outside printable ASCII as the same filled box when text is not ASCII", () => {
    const render = (text: string) =>
      renderPng(60, 20, WHITE, [{ x: 0, y: 0, width: 60, height: 20, fill: WHITE, text, textColor: RED }]);
    const img = decode(render("é"));
    const reds = pixelsOf(img, RED);
    const xs = reds.map(([x]) => x);
    const ys = reds.map(([, y]) => y);
    const w = Math.max(...xs) - Math.min(...xs) + 1;
    const h = Math.max(...ys) - Math.min(...ys) + 1;
    expect(reds.length).toBe(w * h); // solid
    expect(render("€")).toEqual(render("é"));
    expect(render("\u{1f600}")).toEqual(render("é")); // one code point, one glyph
    expect(render("\t")).toEqual(render("é"));
    expect(render("?")).not.toEqual(render("é"));
  });

  test("returns identical bytes when called twice with the same inputs", () => {
    const boxes: Box[] = [
      { x: 0, y: 0, width: 320, height: 60, fill: [30, 30, 30], text: "Settings", textColor: WHITE },
      { x: 10.5, y: 80.25, width: 300.3, height: 48.7, fill: WHITE, border: [200, 200, 200], text: "Wi-Fi  >" },
      { x: 10, y: 140, width: 300, height: 48, fill: BLUE, text: "Bluetooth", textColor: [255, 255, 0] },
    ];
    const a = renderPng(320, 480, [240, 240, 240], boxes);
    const b = renderPng(
      320,
      480,
      [240, 240, 240],
      boxes.map((box) => ({ ...box })),
    );
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
  });

  test("rounds and clamps colour components when they are fractional or out of range", () => {
    const img = decode(renderPng(4, 4, [300, -5, 127.6], []));
    expect(img.at(0, 0)).toEqual([255, 0, 128]);
  });

  test("stays indexed when exactly 256 colours are visible", () => {
    const boxes: Box[] = [];
    for (let i = 0; i < 255; i++)
      boxes.push({ x: i % 16, y: Math.floor(i / 16), width: 1, height: 1, fill: [i, 255 - i, 7] });
    const img = decode(renderPng(16, 17, WHITE, boxes));
    expect(img.colourType).toBe(3);
    expect(img.palette?.length).toBe(256);
    expect(img.at(5, 3)).toEqual([53, 202, 7]);
  });

  test("falls back to RGB when more than 256 colours are visible", () => {
    const boxes: Box[] = [];
    for (let i = 0; i < 300; i++)
      boxes.push({ x: i % 20, y: Math.floor(i / 20), width: 1, height: 1, fill: [i % 256, Math.floor(i / 256), 99] });
    const img = decode(renderPng(20, 16, WHITE, boxes));
    expect(img.colourType).toBe(2);
    expect(img.palette).toBeNull();
    expect(img.filters.every((f) => f === 0)).toBe(true);
    expect(img.at(0, 0)).toEqual([0, 0, 99]);
    expect(img.at(3, 14)).toEqual([27, 1, 99]); // i = 283
    expect(img.at(19, 15)).toEqual(WHITE);
  });

  test("stays indexed when more than 256 colours are painted but at most 256 remain visible", () => {
    const boxes: Box[] = [];
    for (let i = 0; i < 300; i++)
      boxes.push({ x: i % 20, y: Math.floor(i / 20), width: 1, height: 1, fill: [i % 256, Math.floor(i / 256), 99] });
    boxes.push({ x: 0, y: 0, width: 20, height: 8, fill: RED, text: "covered", textColor: GREEN });
    const img = decode(renderPng(20, 16, WHITE, boxes));
    expect(img.colourType).toBe(3);
    expect(img.at(0, 0)).toEqual(RED);
    expect(img.at(3, 14)).toEqual([27, 1, 99]);
    expect(img.at(19, 15)).toEqual(WHITE);
  });

  test("splits the compressed data over several IDAT chunks when it is large", () => {
    const boxes: Box[] = [];
    let seed = 1;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (let y = 0; y < 200; y++)
      for (let x = 0; x < 200; x++) boxes.push({ x, y, width: 1, height: 1, fill: [next(), next(), next()] });
    const png = renderPng(200, 200, WHITE, boxes);
    const img = decode(png);
    expect(img.colourType).toBe(2);
    expect(img.chunkTypes.filter((t) => t === "IDAT").length).toBeGreaterThan(1);
    seed = 1;
    expect(img.at(0, 0)).toEqual([next(), next(), next()]);
  });

  test("encodes a phone-sized screen when the image is 1440×3200", () => {
    const boxes: Box[] = Array.from({ length: 30 }, (_, i) => ({
      x: 40,
      y: 100 + i * 100,
      width: 1360,
      height: 90,
      fill: i % 2 ? WHITE : ([235, 235, 245] as const),
      border: [200, 200, 210] as const,
      text: `Row ${i}: the quick brown fox`,
    }));
    const img = decode(renderPng(1440, 3200, [250, 250, 250], boxes));
    expect([img.width, img.height, img.colourType]).toEqual([1440, 3200, 3]);
    expect(img.at(720, 145)).toEqual([235, 235, 245]);
    expect(img.at(40, 100)).toEqual([200, 200, 210]);
  });

  test("throws a RangeError when the size is not a positive integer", () => {
    for (const [w, h] of [
      [0, 10],
      [10, 0],
      [1.5, 10],
      [10, Number.NaN],
      [-3, 4],
      [100000, 1],
    ] as const) {
      expect(() => renderPng(w, h, WHITE, [])).toThrow(RangeError);
    }
  });
});
