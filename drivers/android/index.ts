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

export type { PhoneCheck } from "./phone-checks.ts";

/** doctor's checks on attached phones; loaded on demand for the same reason as the driver. */
export async function loadPhoneChecks(): Promise<typeof import("./phone-checks.ts").checkPhones> {
  return (await import("./phone-checks.ts")).checkPhones;
}

export type { HelperStatus } from "./helper/helper-tool.ts";

/** `devicerail android helper …`: loaded on demand for the same reason as the driver. */
export async function loadHelperTool(): Promise<typeof import("./helper/helper-tool.ts")> {
  return import("./helper/helper-tool.ts");
}
