/**
 * The selected Xcode, as the fakes see it: what `xcrun xcodebuild -version` prints, what xcrun
 * says when only the Command Line Tools are selected, and which AXe releases can drive which Xcode.
 * Every text below is quoted from a source; the sources are named next to each.
 */

/** The selected developer directory: an Xcode (version and build), or the Command Line Tools. */
export type XcodeSpec = { version: string; build: string } | "command-line-tools";

/**
 * Xcode 26.5, build 17F42: the pair AXe 1.8.0's README validates against ("Compatibility was
 * validated with Xcode 26.5 (build `17F42`) and iOS 26.5 (`23F77`)", cameroncooke/AXe README:32).
 */
export const DEFAULT_XCODE: XcodeSpec = { version: "26.5", build: "17F42" };

export const CLT_DIR = "/Library/Developer/CommandLineTools";
export const XCODE_DEVELOPER_DIR = "/Applications/Xcode.app/Contents/Developer";

/**
 * `xcodebuild -version`: two lines, "Xcode 26.0.1" then "Build version 17A400" (XcodeBuildMCP
 * doctor prints them joined as "Xcode 26.0.1 - Build version 17A400", getsentry/XcodeBuildMCP #117;
 * "Xcode 26.5 - Build version 17F42", #447).
 */
export const xcodebuildVersion = (x: { version: string; build: string }) =>
  `Xcode ${x.version}\nBuild version ${x.build}\n`;

/**
 * xcrun with the Command Line Tools selected, for a tool only Xcode has: exit 72 and this line
 * (okwasniewski/MiniSim #134: "Status code: 72 / Message: xcrun: error: unable to find utility
 * "simctl", not a developer tool or in PATH"; expo/expo-cli #2877, raycast/extensions #28484,
 * zebrunner/stf #692, whose fix is `sudo xcode-select -s /Applications/Xcode.app`).
 */
export const unableToFindUtility = (tool: string) => ({
  stderr: `xcrun: error: unable to find utility "${tool}", not a developer tool or in PATH\n`,
  exitCode: 72,
});

/**
 * `xcodebuild` with the Command Line Tools selected: the /usr/bin shim refuses (quoted in
 * nodejs/node-gyp #569 and in several setup notes: "$ xcodebuild -version / xcode-select: error:
 * tool 'xcodebuild' requires Xcode, but active developer directory '/Library/Developer/CommandLineTools'
 * is a command line tools instance"). Its exit status is not in those sources; 1 is INFERRED.
 */
export const XCODEBUILD_NEEDS_XCODE = {
  stderr: `xcode-select: error: tool 'xcodebuild' requires Xcode, but active developer directory '${CLT_DIR}' is a command line tools instance\n`,
  exitCode: 1,
};

const major = (v: string) => Number(/^(\d+)/.exec(v)?.[1] ?? 0);
const axeAtLeast = (axe: string, min: [number, number]) => {
  const m = /^(\d+)\.(\d+)/.exec(axe);
  if (!m) return true; // dev and staging builds: taken as current
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a !== min[0] ? a > min[0] : b >= min[1];
};

/**
 * Why this AXe cannot load the selected Xcode's simulator frameworks, as the message its commands
 * end with (after `Error: `, exit 1), or null when it can:
 * - AXe 1.8 "supports Xcode 26 and Xcode 27" (README:30). On another Xcode its setup fails.
 *   Input commands run `setup()` first: "AXe could not load simulator support from the selected
 *   Xcode installation. Confirm Xcode 26 or later is selected and try again."
 *   (Sources/AXe/Extensions/AsyncParsableCommand+Setup.swift:32 at 30f4bfa). `describe-ui` runs
 *   `performGlobalSetup` only, which appends the loader's error: "AXe could not load simulator
 *   support from the selected Xcode installation: \(error.localizedDescription)"
 *   (Utilities/GlobalSetup.swift), the loader's text being "Attempting to load a file at path
 *   '%@', but it does not exist" (idb FBWeakFramework). The path named is INFERRED.
 * - AXe 1.7.x on Xcode 27: SimulatorKit moved to Contents/SharedFrameworks, and AXe 1.7.1 fails
 *   with exactly this (getsentry/XcodeBuildMCP #453, "AXe reported by doctor: 1.7.1 / Xcode 27.0"):
 *   `CLIError(errorDescription: "Failed to load essential private frameworks: Attempting to load a
 *   file at path '/Applications/Xcode-beta.app/Contents/Developer/Library/PrivateFrameworks/SimulatorKit.framework', but it does not exist")`.
 *   (Here with the Xcode.app path.)
 */
export function axeCannotDrive(axeVersion: string, xcode: XcodeSpec, command: string): string | null {
  if (xcode === "command-line-tools")
    return "AXe could not find an active Xcode installation. Select Xcode with `xcode-select` or set `DEVELOPER_DIR`, then try again.";
  const x = major(xcode.version);
  const simulatorKit = `${XCODE_DEVELOPER_DIR}/Library/PrivateFrameworks/SimulatorKit.framework`;
  if (axeAtLeast(axeVersion, [1, 8])) {
    if (x === 26 || x === 27) return null;
    return command === "describe-ui"
      ? `AXe could not load simulator support from the selected Xcode installation: Attempting to load a file at path '${simulatorKit}', but it does not exist`
      : "AXe could not load simulator support from the selected Xcode installation. Confirm Xcode 26 or later is selected and try again.";
  }
  if (x >= 27)
    return `CLIError(errorDescription: "Failed to load essential private frameworks: Attempting to load a file at path '${simulatorKit}', but it does not exist")`;
  return null;
}

/**
 * describe-ui while the host's CoreSimulatorBridge is wedged: every call fails with this for
 * about 40 minutes, across reboots, while screenshots work (getsentry/XcodeBuildMCP #458:
 * "`axe describe-ui --udid <UDID>` returns `Error: No translation object returned for simulator.
 * This means you have likely specified a point onscreen that is invalid or invisible due to a
 * fullscreen dialog`").
 */
export const NO_TRANSLATION =
  "No translation object returned for simulator. This means you have likely specified a point onscreen that is invalid or invisible due to a fullscreen dialog";

/**
 * `simctl io … screenshot` before the Simulator's display is up (right after boot, or with the
 * display idle): "Timeout waiting for screen surfaces", exit 60 (callstack/agent-device retries on
 * it: its test builds `{ stderr: 'Timeout waiting for screen surfaces', exitCode: 60 }`; the
 * research note §1.2 quotes its match on `NSPOSIXErrorDomain … code=60`). The simctl error
 * preamble around it follows the recorded samples (simctl-support.ts simError).
 */
export const SCREEN_SURFACES_TIMEOUT = "Timeout waiting for screen surfaces";
