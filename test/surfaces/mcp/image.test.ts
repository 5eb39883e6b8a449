import { describe, expect, test } from "bun:test";
import { ImageTooLargeError, ModelImages, encodeForModel } from "../../../src/surfaces/mcp/image.ts";
import { noisePng } from "../../support/png.ts";

describe("screenshots for a model", () => {
  test("scales a phone screen to a long edge of 1568 px and states the scale", async () => {
    const img = await encodeForModel(await noisePng(1080, 2400), { format: "jpeg", maxEdge: 1568, maxBytes: 400_000 });
    expect([img.width, img.height, img.mimeType, img.sourceWidth, img.sourceHeight]).toEqual([
      706,
      1568,
      "image/jpeg",
      1080,
      2400,
    ]);
    expect(img.scale).toBeCloseTo(706 / 1080, 6);
    expect(img.data.length).toBeLessThanOrEqual(400_000);
    expect(await new Bun.Image(img.data).metadata()).toEqual({ width: 706, height: 1568, format: "jpeg" });
  });

  test("lowers the quality, then the size, until the bytes fit", async () => {
    const img = await encodeForModel(await noisePng(1080, 2400), { format: "jpeg", maxEdge: 1568, maxBytes: 60_000 });
    expect(img.data.length).toBeLessThanOrEqual(60_000);
    expect([75, 60, 45, 30]).toContain(img.quality);
    expect(img.width).toBeLessThan(706);
    expect(img.width / img.sourceWidth).toBeCloseTo(img.scale, 6);
  });

  test("leaves a small screen at its size", async () => {
    const img = await encodeForModel(await noisePng(320, 180), { format: "webp", maxEdge: 1568, maxBytes: 400_000 });
    expect([img.width, img.height, img.scale, img.mimeType]).toEqual([320, 180, 1, "image/webp"]);
  });

  test("refuses what no size brings under the limit", async () => {
    await expect(
      encodeForModel(await noisePng(1080, 2400), { format: "jpeg", maxEdge: 4096, maxBytes: 10 }),
    ).rejects.toBeInstanceOf(ImageTooLargeError);
  });

  test("encodes an unchanged screen once", async () => {
    const png = await noisePng(200, 100);
    let reads = 0;
    const images = new ModelImages();
    const read = async () => {
      reads++;
      return png;
    };
    const [a, b] = await Promise.all([images.encode("sha-a", read), images.encode("sha-a", read)]);
    expect(await images.encode("sha-a", read)).toBe(a);
    expect(b).toBe(a);
    expect(reads).toBe(1);
  });

  test("a failed encoding is not cached", async () => {
    const images = new ModelImages();
    let reads = 0;
    const bad = async () => {
      reads++;
      return new Uint8Array([1, 2, 3]);
    };
    await expect(images.encode("sha-b", bad)).rejects.toBeDefined();
    await expect(images.encode("sha-b", bad)).rejects.toBeDefined();
    expect(reads).toBe(2);
  });
});
