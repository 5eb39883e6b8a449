/** The display and foreground parsers against public real-device samples (fixtures/platform/android/README.md names each source). */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  chooseCaptureDisplay,
  parseGetDisplays,
  parseSurfaceFlingerDisplayIds,
} from "../../../../drivers/android/parse/capture-display.ts";
import { parseForeground, withoutLastAnr } from "../../../../drivers/android/parse/foreground.ts";
import { pngSize, pngStart } from "../../../../src/driver/png.ts";
import { FOLDABLE_DISPLAYS } from "../../../support/adb-device/displays.ts";
import { FakePhone } from "../../../support/adb-device/index.ts";

const sample = (dir: string, name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/${dir}/${name}.txt`, import.meta.url), "utf8");

describe("text in front of a screencap PNG", () => {
  test("the PNG is found after each real prefix, whatever its line breaks", () => {
    const png = new FakePhone().screenshot();
    const found = ["pixel-fold-multi-display", "multi-display-older", "vmos-linker-warning"].map((name) => {
      const prefix = new TextEncoder().encode(sample("screencap-prefix", name));
      const bytes = new Uint8Array([...prefix, ...png]);
      return [pngStart(bytes) === prefix.length, pngSize(bytes.subarray(pngStart(bytes)))];
    });
    expect(found).toEqual(found.map(() => [true, { width: 1080, height: 2400 }]));
  });

  test("the simulated phone prints the Pixel Fold's warning byte for byte", async () => {
    const phone = new FakePhone({ props: { "ro.build.version.sdk": "34" }, displays: FOLDABLE_DISPLAYS });
    expect((await phone.runForText("screencap -p >/dev/null")).err).toBe(
      sample("screencap-prefix", "pixel-fold-multi-display"),
    );
  });
});

describe("parseSurfaceFlingerDisplayIds", () => {
  test("lists the physical displays of each sample in the phone's order, virtual ones left out", () => {
    expect(
      ["galaxy-z-fold2", "emulator-one-display", "pixel-10-pro-fold-emulator", "galaxy-z-fold6-scrcpy"].map((n) =>
        parseSurfaceFlingerDisplayIds(sample("surfaceflinger-display-id", n)),
      ),
    ).toEqual([
      ["19261213734341250", "19261213734341249"],
      ["4619827259835644672"],
      ["4619827259835644672", "4619827551948147201"],
      ["4630947194243491972"],
    ]);
  });
});

describe("parseGetDisplays and chooseCaptureDisplay", () => {
  test("reads state and physical panel of each logical display", () => {
    expect([
      parseGetDisplays(sample("display-get-displays", "pixel-9-pro-fold-mobilecli")),
      parseGetDisplays(sample("display-get-displays", "galaxy-z-fold6-scrcpy")),
    ]).toEqual([
      [
        { logicalId: 0, on: true, physicalId: "4619827259835644672" },
        { logicalId: 3, on: false, physicalId: "4619827551948147201" },
      ],
      [
        { logicalId: 0, on: false, physicalId: "4630947194243491972" },
        { logicalId: 15, on: true, physicalId: null },
      ],
    ]);
  });

  test("chooses the panel that is on, and nothing when only a virtual display is on or there is one panel", () => {
    const fold = parseGetDisplays(sample("display-get-displays", "pixel-9-pro-fold-mobilecli"));
    const fold6 = parseGetDisplays(sample("display-get-displays", "galaxy-z-fold6-scrcpy"));
    expect([
      chooseCaptureDisplay(["4619827259835644672", "4619827551948147201"], fold),
      chooseCaptureDisplay(["4630947194243491972", "4630946165277524611"], fold6),
      chooseCaptureDisplay(["4619827259835644672"], fold),
      // The listings disagree (the ON panel is not a SurfaceFlinger display): screencap's default.
      chooseCaptureDisplay(["19261213734341250", "19261213734341249"], fold),
    ]).toEqual(["4619827259835644672", null, null, null]);
  });
});

describe("the LAST ANR section of dumpsys window", () => {
  test("the foreground is the live one when the frozen section names another app (Android 14)", () => {
    const out = sample("dumpsys-window", "android-14-last-anr-instagram");
    expect(parseForeground(out)).toEqual({
      packageName: "com.google.android.apps.nexuslauncher",
      activity: "com.google.android.apps.nexuslauncher.NexusLauncherActivity",
    });
  });

  test("a section that is all frozen state yields no foreground", () => {
    expect(
      ["last-anr-no-focused-window", "no-anr-since-boot"].map((n) => [
        withoutLastAnr(sample("dumpsys-window", n)),
        parseForeground(sample("dumpsys-window", n)),
      ]),
    ).toEqual([
      ["", null],
      ["", null],
    ]);
  });

  test("the frozen copy of the display contents after Last ANR continued is skipped with its own header", () => {
    // A composition for the test (not one capture): the real LAST ANR head and the real tail of a
    // frozen section, followed by a real live windows section.
    const out = `${sample("dumpsys-window", "last-anr-no-focused-window")}${sample("dumpsys-window", "android-11-last-anr-continued")}\n${sample("dumpsys-window", "android-11-launcher")}`;
    const live = withoutLastAnr(out);
    expect([
      live.includes("DisplaySettingsActivity"),
      live.includes("WINDOW MANAGER WINDOWS (dumpsys window windows)"),
    ]).toEqual([false, true]);
    expect(parseForeground(out)).toEqual(parseForeground(sample("dumpsys-window", "android-11-launcher")));
  });
});

describe("focus lines of dumpsys window displays", () => {
  test("names the launcher, also when the notification shade has the focus", () => {
    const launcher = {
      packageName: "com.android.launcher3",
      activity: "com.android.launcher3.uioverrides.QuickstepLauncher",
    };
    expect(
      ["displays-launcher3", "displays-notification-shade"].map((n) => parseForeground(sample("dumpsys-window", n))),
    ).toEqual([launcher, launcher]);
  });
});
