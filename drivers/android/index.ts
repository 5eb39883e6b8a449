/**
 * The Android driver's entry for the daemon. The driver itself is loaded on demand: adbkit and
 * its dependencies cost start-up time and memory that a daemon without Android should not pay.
 */
export type { AndroidOptions } from "./android-driver.ts";
export { stateProblem } from "./parse/devices.ts";
export { parseAdbClientVersion } from "./parse/adb-version.ts";

export async function loadAndroidDriver(): Promise<typeof import("./android-driver.ts").AndroidDriver> {
  return (await import("./android-driver.ts")).AndroidDriver;
}
