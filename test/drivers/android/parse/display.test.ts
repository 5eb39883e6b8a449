import { describe, expect, test } from "bun:test";
import {
  DisplayParseError,
  orientationOf,
  parseWmDensity,
  parseWmSize,
  pngSize,
} from "../../../../drivers/android/parse/display.ts";
import { FakePhone } from "../../../support/adb-device/index.ts";

/** stdout and stderr of a script on the simulated phone, as the driver reads them (2>&1). */
const shell = async (phone: FakePhone, src: string) => (await phone.runForText(src)).both;

function error(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof DisplayParseError) return e.message;
    throw e;
  }
  throw new Error("did not throw");
}

describe("parseWmSize", () => {
  test("reads the physical size and the override when one is in force", () => {
    expect([
      parseWmSize("Physical size: 1080x2400\n"),
      parseWmSize("Physical size: 1080x2400\r\nOverride size: 720x1600\r\n"),
    ]).toEqual([
      { physical: { width: 1080, height: 2400 }, override: null },
      { physical: { width: 1080, height: 2400 }, override: { width: 720, height: 1600 } },
    ]);
  });

  test("matches the simulated phone when wm size is overridden and reset", async () => {
    const phone = new FakePhone({ screen: { width: 1440, height: 3120 } });
    const plain = await shell(phone, "wm size");
    await shell(phone, "wm size 1080x2340");
    const overridden = await shell(phone, "wm size");
    await shell(phone, "wm size reset");
    const reset = await shell(phone, "wm size");
    expect([parseWmSize(plain), parseWmSize(overridden), parseWmSize(reset)]).toEqual([
      { physical: { width: 1440, height: 3120 }, override: null },
      { physical: { width: 1440, height: 3120 }, override: { width: 1080, height: 2340 } },
      { physical: { width: 1440, height: 3120 }, override: null },
    ]);
  });

  test("ignores unrelated lines when a ROM prints warnings around the answer", () => {
    expect(parseWmSize('WARNING: linker: "/system/bin/wm" unused DT entry\nPhysical size: 720x1280\n')).toEqual({
      physical: { width: 720, height: 1280 },
      override: null,
    });
  });

  test("throws DisplayParseError when the output is garbage", () => {
    expect(
      [
        "",
        "Error: no display\n",
        "Physical size: 1080*2400",
        "Physical size: 0x2400",
        "Physical size: 1080x2400\nOverride size: big",
        "Physical size: 1x1\nPhysical size: 2x2",
      ].map((s) => error(() => parseWmSize(s))),
    ).toEqual([
      'no "Physical size" in wm size output: ""',
      'no "Physical size" in wm size output: "Error: no display\\n"',
      'Physical size "1080*2400" is not WIDTHxHEIGHT',
      'Physical size "0x2400" is not WIDTHxHEIGHT',
      'Override size "big" is not WIDTHxHEIGHT',
      '"Physical size" appears 2 times',
    ]);
  });
});

describe("parseWmDensity", () => {
  test("reads the physical density and the override when one is in force", async () => {
    const phone = new FakePhone({ screen: { density: 560 } });
    const plain = await shell(phone, "wm density");
    await shell(phone, "wm density 480");
    expect([
      parseWmDensity(plain),
      parseWmDensity(await shell(phone, "wm density")),
      parseWmDensity("Physical density: 420\nOverride density: 320"),
    ]).toEqual([
      { physical: 560, override: null },
      { physical: 560, override: 480 },
      { physical: 420, override: 320 },
    ]);
  });

  test("throws DisplayParseError when the output is garbage", () => {
    expect(
      [
        "Physical size: 1080x2400",
        "Physical density: 4.2",
        "Physical density: 0",
        "Physical density: 420\nOverride density: -1",
      ].map((s) => error(() => parseWmDensity(s))),
    ).toEqual([
      'no "Physical density" in wm density output: "Physical size: 1080x2400"',
      'Physical density "4.2" is not a density',
      'Physical density "0" is not a density',
      'Override density "-1" is not a density',
    ]);
  });
});

/** Signature + IHDR(13) for the given size, then `extra` bytes; the CRC is not checked. */
function pngHeader(width: number, height: number, length = 13): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const v = new DataView(b.buffer);
  v.setUint32(8, length);
  b.set([0x49, 0x48, 0x44, 0x52], 12);
  v.setUint32(16, width);
  v.setUint32(20, height);
  b.set([8, 2, 0, 0, 0], 24);
  return b;
}

describe("pngSize", () => {
  test("reads the size from IHDR when the bytes are the simulated phone's screenshot", () => {
    expect(pngSize(new FakePhone({ screen: { width: 720, height: 1600 } }).screenshot())).toEqual({
      width: 720,
      height: 1600,
    });
  });

  test("reads the size when the header sits inside a larger buffer", () => {
    const outer = new Uint8Array(40);
    outer.set(pngHeader(2400, 1080), 7);
    expect(pngSize(outer.subarray(7))).toEqual({ width: 2400, height: 1080 });
  });

  test("returns null when the bytes are not a PNG header", () => {
    const badSignature = pngHeader(10, 10);
    badSignature[1] = 0x51;
    const badType = pngHeader(10, 10);
    badType[12] = 0x69;
    const cases = [
      new Uint8Array(0),
      pngHeader(10, 10).subarray(0, 32),
      badSignature,
      badType,
      pngHeader(10, 10, 12),
      pngHeader(0, 10),
      pngHeader(10, 0),
      pngHeader(0x80000000, 10),
    ];
    expect(cases.map(pngSize)).toEqual(cases.map(() => null));
  });
});

describe("orientationOf", () => {
  test("names the longer side when width and height differ or match", () => {
    expect([
      orientationOf({ width: 1080, height: 2400 }),
      orientationOf({ width: 2400, height: 1080 }),
      orientationOf({ width: 1840, height: 1840 }),
    ]).toEqual(["portrait", "landscape", "square"]);
  });
});
