/**
 * PNG encoding for the Mock's screenshots: 8-bit indexed (colour type 3) or RGB (colour type 2)
 * scanlines, each already prefixed by filter byte 0, in a zlib stream split into IDAT chunks.
 * Identical input gives identical bytes.
 */

/** Compressed data is split into IDAT chunks of at most this many bytes. */
const IDAT_CHUNK = 1 << 16;

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

/** The PNG file of `raw` (scanlines each led by filter byte 0) in one colour type; `palette` for type 3. */
export function encodePng(
  width: number,
  height: number,
  colourType: 2 | 3,
  palette: Uint8Array | null,
  raw: Uint8Array,
): Uint8Array {
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
    pos = writeChunk(
      out,
      view,
      pos,
      "IDAT",
      compressed.subarray(i * IDAT_CHUNK, Math.min(compressed.length, (i + 1) * IDAT_CHUNK)),
    );
  }
  writeChunk(out, view, pos, "IEND", new Uint8Array(0));
  return out;
}
