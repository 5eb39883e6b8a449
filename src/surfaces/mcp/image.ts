/**
 * Screenshots as a model should get them: JPEG (or WebP) with the long edge at most `maxEdge`
 * pixels and the bytes at most `maxBytes`, lowering the quality and then the size until both hold.
 * Bun.Image does the work (libjpeg-turbo, libspng and libwebp built into the runtime, so the
 * compiled binary needs nothing else; the pipeline runs off the main thread). Encodings are
 * cached by the evidence digest: an unchanged screen is encoded once.
 */
export interface ImageSettings {
  format: "jpeg" | "webp";
  /** Longest edge in pixels (the model API's many-image limit is 2000; 1568 keeps its own resampling out of the way). */
  maxEdge: number;
  maxBytes: number;
}

export const DEFAULT_IMAGE_SETTINGS: ImageSettings = { format: "jpeg", maxEdge: 1568, maxBytes: 400_000 };

export interface ModelImage {
  data: Uint8Array;
  mimeType: "image/jpeg" | "image/webp";
  width: number;
  height: number;
  /** Image pixels per device pixel: a point (x, y) in the image is (x / scale, y / scale) on the device. */
  scale: number;
  sourceWidth: number;
  sourceHeight: number;
  quality: number;
  /** How long the encoding took when it was made (a cached one keeps its first time). */
  encodeMs: number;
}

export class ImageTooLargeError extends Error {}

const QUALITIES = [75, 60, 45, 30];
const CACHE_ENTRIES = 32;

export class ModelImages {
  private readonly cache = new Map<string, Promise<ModelImage>>();

  constructor(readonly settings: ImageSettings = DEFAULT_IMAGE_SETTINGS) {}

  /** The model's image of stored screenshot bytes named by `sha256`. */
  encode(sha256: string, bytes: () => Promise<Uint8Array>): Promise<ModelImage> {
    const key = `${sha256}:${this.settings.format}:${this.settings.maxEdge}:${this.settings.maxBytes}`;
    const hit = this.cache.get(key);
    if (hit) {
      // Most recently used last.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const made = bytes().then((b) => encodeForModel(b, this.settings));
    made.catch(() => this.cache.delete(key));
    this.cache.set(key, made);
    if (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    return made;
  }
}

export async function encodeForModel(bytes: Uint8Array, s: ImageSettings): Promise<ModelImage> {
  const started = performance.now();
  const { width: sw, height: sh } = await new Bun.Image(bytes).metadata();
  let scale = Math.min(1, s.maxEdge / Math.max(sw, sh));
  // Each round shrinks the picture by a quarter once the lowest quality is still too large.
  for (let round = 0; round < 6; round++) {
    const width = Math.max(1, Math.round(sw * scale));
    const height = Math.max(1, Math.round(sh * scale));
    for (const quality of QUALITIES) {
      let img = new Bun.Image(bytes);
      if (width !== sw || height !== sh) img = img.resize(width, height, { filter: "lanczos3" });
      const data = await (s.format === "webp" ? img.webp({ quality }) : img.jpeg({ quality })).bytes();
      if (data.length <= s.maxBytes)
        return {
          data,
          mimeType: s.format === "webp" ? "image/webp" : "image/jpeg",
          width,
          height,
          scale: width / sw,
          sourceWidth: sw,
          sourceHeight: sh,
          quality,
          encodeMs: performance.now() - started,
        };
    }
    scale *= 0.75;
  }
  throw new ImageTooLargeError(`the screenshot cannot be brought under ${s.maxBytes} bytes`);
}
