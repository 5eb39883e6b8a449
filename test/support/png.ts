/**
 * PNGs made in tests. A 24-bit BMP is the simplest container Bun.Image decodes; re-encoding it
 * gives the PNG a phone's screenshot would be.
 */

/** A PNG of `width` × `height` pixels from packed RGB rows (top row first). */
export async function pngFromRgb(width: number, height: number, rgb: Uint8Array): Promise<Uint8Array> {
  const row = Math.ceil((width * 3) / 4) * 4;
  const bmp = new Uint8Array(54 + row * height);
  const v = new DataView(bmp.buffer);
  bmp.set([0x42, 0x4d]);
  v.setUint32(2, bmp.length, true);
  v.setUint32(10, 54, true);
  v.setUint32(14, 40, true);
  v.setInt32(18, width, true);
  // Negative: rows top-down.
  v.setInt32(22, -height, true);
  v.setUint16(26, 1, true);
  v.setUint16(28, 24, true);
  for (let y = 0; y < height; y++) bmp.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), 54 + y * row);
  return new Bun.Image(bmp).png().bytes();
}

/** A PNG of one light grey. */
export const greyPng = (width: number, height: number) =>
  pngFromRgb(width, height, new Uint8Array(width * height * 3).fill(200));

/** A PNG of noise: the hardest kind of picture to compress. */
export function noisePng(width: number, height: number): Promise<Uint8Array> {
  const rgb = new Uint8Array(width * height * 3);
  let seed = 7;
  for (let i = 0; i < rgb.length; i++) rgb[i] = seed = (seed * 1103515245 + 12345) & 0xff;
  return pngFromRgb(width, height, rgb);
}
