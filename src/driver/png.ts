/** A width and height in pixels. */
export type PixelSize = { width: number; height: number };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IHDR = [0x49, 0x48, 0x44, 0x52];
/** Signature, IHDR length and type, its 13 data bytes and CRC. */
const HEADER_BYTES = 8 + 8 + 13 + 4;
/** The PNG spec caps dimensions at 2^31 − 1. */
const MAX_PNG_DIMENSION = 0x7fffffff;

/** The pixel size from the IHDR chunk, which PNG requires first; null for anything else. */
export function pngSize(bytes: Uint8Array): PixelSize | null {
  if (bytes.length < HEADER_BYTES) return null;
  if (PNG_SIGNATURE.some((b, i) => bytes[i] !== b) || IHDR.some((b, i) => bytes[12 + i] !== b)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13) return null;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width < 1 || height < 1 || width > MAX_PNG_DIMENSION || height > MAX_PNG_DIMENSION) return null;
  return { width, height };
}

/**
 * Where the PNG signature first occurs, or -1. Android's `screencap` output can carry text before
 * the image when stderr shares the stream (a multi-display warning, linker warnings): the image
 * starts at the signature.
 */
export function pngStart(bytes: Uint8Array): number {
  const first = PNG_SIGNATURE[0] as number;
  for (
    let i = bytes.indexOf(first);
    i >= 0 && i + PNG_SIGNATURE.length <= bytes.length;
    i = bytes.indexOf(first, i + 1)
  ) {
    if (PNG_SIGNATURE.every((b, k) => bytes[i + k] === b)) return i;
  }
  return -1;
}
