/** The launch parsers against public real-device output (fixtures/platform/android/README.md names each source). */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseAmStartWait } from "../../../../drivers/android/parse/launch.ts";

const sample = (dir: string, name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/${dir}/${name}.txt`, import.meta.url), "utf8");

describe("parseAmStartWait on a real report", () => {
  test("reads a cold start with -S before Android 10: a Stopping line, ThisTime, no LaunchState, another activity reported", () => {
    expect(parseAmStartWait(sample("am-start-w", "pre-android-10-stop-cold"))).toEqual({
      kind: "ok",
      launchState: null,
      activity: "com.ziipin.softkeyboard.uzbekistan/com.ziipin.setting.GuideActivity",
      totalTimeMs: 4171,
      waitTimeMs: 4190,
      warning: null,
    });
  });
});
