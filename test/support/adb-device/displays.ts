/**
 * The simulated phone's physical displays: `dumpsys SurfaceFlinger --display-id`, `cmd display
 * get-displays`, and what `screencap` does when there are several (a foldable: inner panel and
 * cover panel). Every printed line follows a public real-device sample; the source is beside it.
 */
import { renderPng } from "../../../drivers/mock/render-png.ts";
import type { CommandIo } from "./command-io.ts";

export interface FakeDisplay {
  /** SurfaceFlinger's 64-bit physical display id, decimal: what `screencap -d` takes. */
  physicalId: string;
  /** The hardware composer's index, `(HWC display N)`. The first display listed is screencap's default. */
  hwc: number;
  port: number;
  pnpId: string;
  /** SurfaceFlinger's `displayName`. */
  displayName: string;
  /** The logical display (DisplayManager) this panel backs: `Display id N` of `cmd display get-displays`. */
  logicalId: number;
  /** DisplayInfo's name, e.g. "Built-in Screen". */
  label: string;
  /** Whether the panel is on. The folded-away panel of a foldable is off, and captures black. */
  on: boolean;
  width: number;
  height: number;
}

/**
 * A Pixel 9 Pro Fold as the public samples show it: the inner panel (2076 x 2152) and the cover
 * panel (1080 x 2424). Ids, names, ports and sizes from mobile-next/mobilecli
 * devices/android_display_test.go (added for "screenshot from multi display android (like Pro
 * Fold 9)", #113) and the emulator's SurfaceFlinger listing quoted in
 * appium/appium-uiautomator2-driver lib/commands/screenshot.ts (`Display 4619827259835644672 (HWC
 * display 0): port=0 pnpId=GGL displayName="EMU_display_0"`); the second panel's
 * `port=1 pnpId=GGL displayName="EMU_display_1"` from a Pixel_10_Pro_Fold emulator capture in
 * stored public code (index id 55514159315). As given, unfolded: the inner panel is on.
 */
export const FOLDABLE_DISPLAYS: readonly FakeDisplay[] = [
  {
    physicalId: "4619827259835644672",
    hwc: 0,
    port: 0,
    pnpId: "GGL",
    displayName: "EMU_display_0",
    logicalId: 0,
    label: "Built-in Screen",
    on: true,
    width: 2076,
    height: 2152,
  },
  {
    physicalId: "4619827551948147201",
    hwc: 1,
    port: 1,
    pnpId: "GGL",
    displayName: "EMU_display_1",
    logicalId: 3,
    label: "Second Screen",
    on: false,
    width: 1080,
    height: 2424,
  },
];

/** The same phone folded: the inner panel (the first listed, screencap's default) is off, the cover panel is on. */
export const FOLDED_DISPLAYS: readonly FakeDisplay[] = FOLDABLE_DISPLAYS.map((d) => ({ ...d, on: d.hwc !== 0 }));

/** A single built-in panel (the default): the emulator line quoted in appium-uiautomator2-driver lib/commands/screenshot.ts. */
export function singleDisplay(width: number, height: number): FakeDisplay[] {
  return [
    {
      physicalId: "4619827259835644672",
      hwc: 0,
      port: 0,
      pnpId: "GGL",
      displayName: "EMU_display_0",
      logicalId: 0,
      label: "Built-in Screen",
      on: true,
      width,
      height,
    },
  ];
}

/**
 * What screencap writes to stderr when the phone has several physical displays and no `-d` was
 * given, byte for byte: AOSP frameworks/base cmds/screencap/screencap.cpp (three fprintf calls,
 * `physicalDisplays.size() > 1`), seen on a Google Pixel Fold in
 * MaaAssistantArknights/MaaAssistantArknights PR #16927 and quoted in google/mobileharness
 * AndroidMediaUtil.java (b/277879807). An older variant without the middle line is quoted in
 * LmeSzinc/AzurLaneAutoScript module/device/method/utils.py (issue #5682 has this one).
 */
export const MULTI_DISPLAY_WARNING =
  "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display found, however this default is not guaranteed to be consistent across captures. A display id should be specified.\n" +
  "A display ID can be specified with the [-d display-id] option.\n" +
  'See "dumpsys SurfaceFlinger --display-id" for valid display IDs.\n';

/** screencap.cpp's refusal of a `-d` that is not a decimal 64-bit number (exit 1). */
export const INVALID_DISPLAY_ID = "Invalid display ID: Out of range [0, 2^64).\n";

/**
 * `dumpsys SurfaceFlinger --display-id`: one line per physical display. Format of
 * the samples in appium-uiautomator2-driver lib/commands/screenshot.ts and mobile-next/mobile-mcp
 * issue #158 (a Pixel 9 Pro Fold: `Display 4619827677550801152 (HWC display 0): port=0 pnpId=GGL
 * displayName="Common Panel"`). Android 16 builds add `screenPartStatus=UNSUPPORTED` before
 * `displayName` (emulator capture, index id 55514159315); this fake prints the older form.
 */
export function surfaceFlingerDisplayIds(displays: readonly FakeDisplay[]): string {
  // In the phone's order, which need not be the HWC order: a Galaxy Z Fold 2 lists `(HWC display 3)`
  // first (pfmaggi/pfmaggi.github.io content/posts/android_screencapture.md).
  return displays
    .map(
      (d) =>
        `Display ${d.physicalId} (HWC display ${d.hwc}): port=${d.port} pnpId=${d.pnpId} displayName="${d.displayName}"\n`,
    )
    .join("");
}

/**
 * `cmd display get-displays`: `Displays:` and one `Display id N: DisplayInfo{…}` line per logical
 * display, with the fields and order that mobile-next/mobilecli devices/android_display_test.go
 * quotes from a Pixel 9 Pro Fold (a subset of DisplayInfo.toString: name, displayId, state, type,
 * uniqueId, app size; the real line has more fields between them, as the Galaxy Z Fold6 excerpt in
 * stored public code shows, index id 70908418064).
 */
export function getDisplays(displays: readonly FakeDisplay[]): string {
  const lines = [...displays]
    .sort((a, b) => a.logicalId - b.logicalId)
    .map(
      (d) =>
        `Display id ${d.logicalId}: DisplayInfo{"${d.label}", displayId ${d.logicalId}, state ${d.on ? "ON" : "OFF"}, type INTERNAL, uniqueId "local:${d.physicalId}", app ${d.width} x ${d.height}}\n`,
    );
  return `Displays:\n${lines.join("")}`;
}

/** `cmd display …`: only `get-displays` is simulated. */
export function displayCommand(
  displays: readonly FakeDisplay[],
  args: readonly string[],
  io: CommandIo,
): number | null {
  if (args.length !== 1 || args[0] !== "get-displays") return null;
  io.out(getDisplays(displays));
  return 0;
}

/** A panel that is off captures black (mobile-next/mobile-mcp issue #158: "completely black screenshots" of a Pixel 9 Pro Fold). */
export function blackPng(d: FakeDisplay): Uint8Array {
  return renderPng(d.width, d.height, [0, 0, 0], []);
}
