import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseBatteryPercent } from "../../../../drivers/android/parse/battery.ts";

const sample = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/dumpsys-battery/${name}.txt`, import.meta.url), "utf8");

describe("parseBatteryPercent", () => {
  test("reads the level out of its scale when the samples come from a Samsung phone on USB and a Pixel C on AC", () => {
    expect([parseBatteryPercent(sample("samsung-usb-100")), parseBatteryPercent(sample("pixel-c-ac-19"))]).toEqual([
      100, 19,
    ]);
  });

  test("scales a level given out of another scale, and ignores lines that only end in level", () => {
    expect(parseBatteryPercent("  level: 120\n  scale: 200\n")).toBe(60);
    expect(parseBatteryPercent("  Max charging level: 80\n  level: 9\n")).toBe(9);
  });

  test("is null when there is no level, or a level past its scale", () => {
    expect(
      ["", "Can't find service: battery\n", "  level: 101\n  scale: 100\n", "  level: abc\n"].map(parseBatteryPercent),
    ).toEqual([null, null, null, null]);
  });
});
