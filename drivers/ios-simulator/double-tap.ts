/**
 * Where `doubleTap` lands as a double tap (research note F4). UIKit's double-tap recognizer wants
 * the second tap within roughly 300 ms of the first. WebDriverAgent's `/wda/doubleTap` is one
 * XCUITest double tap, so it does. AXe has no double tap: `batch` with two `tap -x -y` steps runs
 * each step's `OrientationAwareCoordinates.translate`, a full read of the frontmost accessibility
 * tree (AXe `Command+BatchConvertible.swift:107-121`, `OrientationAwareCoordinates.swift:121-137`),
 * between the two HID taps — a median 4.4 s on Settings (SimBench, describe-ui). No AXe path has
 * been measured to land inside the window, so on AXe `doubleTap` is neither advertised nor run.
 */
import { DriverError } from "../../src/driver/driver-error.ts";
import type { Backend } from "./actions.ts";

export const DOUBLE_TAP_WINDOW_MS = 300;

/** The backends whose double tap lands inside the window. */
export const DOUBLE_TAP_BACKENDS: ReadonlySet<Backend> = new Set(["wda"]);

export function doubleTapUnsupported(): DriverError {
  return new DriverError("platform_error", {
    platformCode: "ios_double_tap_unsupported",
    retryable: false,
    message: `doubleTap is not offered with AXe: AXe re-reads the whole accessibility tree before each tap (seconds on a real Simulator), so two taps cannot land within iOS's ${DOUBLE_TAP_WINDOW_MS} ms double-tap window; run a WebDriverAgent (DEVICERAIL_IOS_WDA_ENDPOINT) for double taps`,
  });
}

/** Throws the typed refusal for a doubleTap on AXe (a screenshot-only device does not know the name at all). */
export function refuseDoubleTap(name: string, backend: Backend): void {
  if (name === "doubleTap" && backend === "axe" && !DOUBLE_TAP_BACKENDS.has("axe")) throw doubleTapUnsupported();
}
