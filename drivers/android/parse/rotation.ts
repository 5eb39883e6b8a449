/**
 * The rotation of the built-in display (0–3, Surface.ROTATION_*), from `dumpsys input`.
 *
 * Two formats, newest first:
 * - Android 10 and later list the input viewports, one line each, as AOSP's
 *   `DisplayViewport::toString` prints them (frameworks/native include/input/DisplayViewport.h):
 *   `Viewport INTERNAL: displayId=0, uniqueId=…, port=…, orientation=1, logicalFrame=[…], …`.
 *   The orientation is the number; some builds print the enum name (`ROTATION_270`), accepted too.
 * - Android 12 and older print `SurfaceOrientation: 1` in the touchscreen's dump, the line
 *   appium/appium-adb (`getScreenOrientation`) reads.
 * Null when neither is there: the caller then cannot confirm a rotation and says so.
 */
const VIEWPORT = /^\s*Viewport INTERNAL: displayId=0,[^\n]*?\borientation=(?:ROTATION_)?(\d+)\b/m;
const SURFACE = /^\s*SurfaceOrientation: (\d)\s*$/m;

export function parseDisplayRotation(dumpsysInput: string): number | null {
  const viewport = VIEWPORT.exec(dumpsysInput);
  if (viewport) {
    const n = Number(viewport[1]);
    // The enum name carries degrees (ROTATION_90), the number a quarter-turn count.
    const quarter = n >= 90 ? n / 90 : n;
    return Number.isInteger(quarter) && quarter >= 0 && quarter <= 3 ? quarter : null;
  }
  const surface = SURFACE.exec(dumpsysInput);
  return surface && Number(surface[1]) <= 3 ? Number(surface[1]) : null;
}

/**
 * Whether `settings` was refused by the settings provider: MIUI/ColorOS phones without the
 * vendor's security option refuse `settings put` from the shell user with
 * `java.lang.SecurityException: Permission denial: writing to settings requires:…` (appium/appium#13802,
 * mosmetro-android/mosmetro-android#244, opendx/agent#6), after `Exception occurred while executing 'put':`.
 */
export const isSettingsDenied = (out: string): boolean =>
  /SecurityException: Permission denial[^\n]*settings/.test(out);
