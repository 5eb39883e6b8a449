/**
 * Device types and runtimes the fake Simulator knows. Screen sizes follow research §3 (points @
 * scale); simctl itself reports no screen size, so only the fakes (and the driver, at run time,
 * from screenshot width ÷ root frame width) know them. Model identifiers and build numbers are
 * plausible, not checked against Xcode (§8).
 */

export interface ScreenSpec {
  /** Points. */
  width: number;
  height: number;
  scale: number;
}

export interface DeviceTypeSpec {
  identifier: string;
  name: string;
  productFamily: "iPhone" | "iPad" | "Apple Watch" | "Apple TV" | "Apple Vision";
  modelIdentifier: string;
  screen: ScreenSpec;
}

export interface RuntimeSpec {
  identifier: string;
  name: string;
  platform: "iOS" | "watchOS" | "tvOS" | "xrOS";
  version: string;
  buildversion: string;
  isAvailable: boolean;
}

const TYPE_PREFIX = "com.apple.CoreSimulator.SimDeviceType.";
export const RUNTIME_PREFIX = "com.apple.CoreSimulator.SimRuntime.";

const type = (
  id: string,
  name: string,
  productFamily: DeviceTypeSpec["productFamily"],
  modelIdentifier: string,
  width: number,
  height: number,
  scale: number,
): DeviceTypeSpec => ({
  identifier: TYPE_PREFIX + id,
  name,
  productFamily,
  modelIdentifier,
  screen: { width, height, scale },
});

export const DEVICE_TYPES: readonly DeviceTypeSpec[] = [
  type("iPhone-17-Pro", "iPhone 17 Pro", "iPhone", "iPhone18,1", 402, 874, 3),
  type("iPhone-17-Pro-Max", "iPhone 17 Pro Max", "iPhone", "iPhone18,2", 440, 956, 3),
  type("iPhone-17", "iPhone 17", "iPhone", "iPhone18,3", 402, 874, 3),
  type("iPhone-16", "iPhone 16", "iPhone", "iPhone17,3", 393, 852, 3),
  type("iPhone-15", "iPhone 15", "iPhone", "iPhone15,4", 393, 852, 3),
  type("iPhone-SE-3rd-generation", "iPhone SE (3rd generation)", "iPhone", "iPhone14,6", 375, 667, 2),
  type("iPad-A16", "iPad (A16)", "iPad", "iPad15,7", 820, 1180, 2),
  // Not iOS devices, but simctl lists them beside the iPhones (the driver must not offer them).
  // Names, identifiers and product families as `simctl list -j` prints them in public samples:
  // "Apple Watch Series 10 (46mm)" / Apple-Watch-Series-10-46mm / "Apple Watch" (a runtimes
  // sample's supportedDeviceTypes); "Apple TV 4K (3rd generation)" / Apple-TV-4K-3rd-generation-4K,
  // 3840×2160 screenshots (a devices sample and a tvOS screenshot script); "Apple Vision Pro" /
  // Apple-Vision-Pro on an xrOS runtime (a runtimes sample). Model identifiers and the watch and
  // Vision screen sizes are plausible, not checked.
  type("Apple-Watch-Series-10-46mm", "Apple Watch Series 10 (46mm)", "Apple Watch", "Watch7,9", 208, 248, 2),
  type("Apple-TV-4K-3rd-generation-4K", "Apple TV 4K (3rd generation)", "Apple TV", "AppleTV14,1", 1920, 1080, 2),
  type("Apple-Vision-Pro", "Apple Vision Pro", "Apple Vision", "RealityDevice14,1", 1280, 720, 2),
];

/** The iPhone and iPad types: the only ones a runtime of platform iOS supports. */
export const IOS_DEVICE_TYPES: readonly DeviceTypeSpec[] = DEVICE_TYPES.filter(
  (t) => t.productFamily === "iPhone" || t.productFamily === "iPad",
);

export const RUNTIMES: readonly RuntimeSpec[] = [
  {
    identifier: `${RUNTIME_PREFIX}iOS-26-5`,
    name: "iOS 26.5",
    platform: "iOS",
    version: "26.5",
    buildversion: "23F77",
    isAvailable: true,
  },
  {
    identifier: `${RUNTIME_PREFIX}iOS-26-0`,
    name: "iOS 26.0",
    platform: "iOS",
    version: "26.0",
    buildversion: "23A343",
    isAvailable: true,
  },
  {
    identifier: `${RUNTIME_PREFIX}watchOS-11-5`,
    name: "watchOS 11.5",
    platform: "watchOS",
    version: "11.5",
    buildversion: "22T572",
    isAvailable: true,
  },
  // Identifiers and platform names as in public `simctl list -j` samples (tvOS-26-5; xrOS-26-0 with "platform": "xrOS"); build numbers plausible.
  {
    identifier: `${RUNTIME_PREFIX}tvOS-26-5`,
    name: "tvOS 26.5",
    platform: "tvOS",
    version: "26.5",
    buildversion: "23L580",
    isAvailable: true,
  },
  {
    identifier: `${RUNTIME_PREFIX}xrOS-26-0`,
    name: "visionOS 26.0",
    platform: "xrOS",
    version: "26.0",
    buildversion: "23M336",
    isAvailable: true,
  },
];

/** The runtimes installed in Sample A (iOS 26.0 is known but not installed unless asked for). */
export const DEFAULT_RUNTIME_IDS: readonly string[] = [`${RUNTIME_PREFIX}watchOS-11-5`, `${RUNTIME_PREFIX}iOS-26-5`];

export function deviceType(identifier: string): DeviceTypeSpec | undefined {
  return DEVICE_TYPES.find((t) => t.identifier === identifier || t.name === identifier);
}

/** `com.apple.CoreSimulator.SimRuntime.iOS-26-5` → `{ platform: "iOS", version: "26.5" }`. */
export function parseRuntimeId(identifier: string): { platform: string; version: string } {
  const m = /^([^\s-]+)[\s-](.+)$/.exec(identifier.replace(RUNTIME_PREFIX, ""));
  return m
    ? { platform: m[1] as string, version: (m[2] as string).replaceAll("-", ".") }
    : { platform: identifier, version: "" };
}

export const HOME_ROOT = "/Users/dev/Library/Developer/CoreSimulator/Devices";
export const LOG_ROOT = "/Users/dev/Library/Logs/CoreSimulator";
