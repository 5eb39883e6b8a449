/** Reads back what drivers/mock/render-png.ts writes (8-bit palette or RGB, filter 0), for pixel assertions in tests. */
import { inflateSync } from "node:zlib";

export interface Pixels {
  width: number;
  height: number;
  at(x: number, y: number): [number, number, number];
}

export function pngSize(png: Uint8Array): { width: number; height: number } {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

export function decodePng(png: Uint8Array): Pixels {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const { width, height } = pngSize(png);
  const colourType = png[25];
  let palette: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  for (let pos = 8; pos < png.length; ) {
    const len = v.getUint32(pos);
    const type = String.fromCharCode(...png.subarray(pos + 4, pos + 8));
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === "PLTE") palette = data;
    if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const bpp = colourType === 3 ? 1 : 3;
  const stride = width * bpp + 1;
  return {
    width,
    height,
    at(x, y) {
      const i = y * stride + 1 + x * bpp;
      if (raw[y * stride] !== 0) throw new Error("decodePng: only filter 0 is supported");
      if (colourType === 3) {
        const k = (raw[i] as number) * 3;
        const p = palette as Uint8Array;
        return [p[k] as number, p[k + 1] as number, p[k + 2] as number];
      }
      return [raw[i] as number, raw[i + 1] as number, raw[i + 2] as number];
    },
  };
}
