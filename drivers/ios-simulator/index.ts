/**
 * The iOS Simulator driver's entry for the daemon. The driver itself is loaded on demand (as the
 * Android one is): a CLI command or a daemon without Xcode should not pay for node-simctl.
 */
export type { IosOptions } from "./ios-simulator-driver.ts";
// What `devicerail doctor` checks without a driver: the simulator list and the AXe/Xcode probe.
export { isIosSimulator, parseDeviceList } from "./parse/simctl.ts";
export {
  INSTALL_AXE,
  MIN_AXE_VERSION,
  SELECT_XCODE,
  XCODE_NOT_SELECTED,
  atLeast,
  axeXcodeProblem,
  locateAxe,
  parseAxeVersion,
  parseXcodeVersion,
  treeFailure,
} from "./probe.ts";

export async function loadIosSimulatorDriver(): Promise<typeof import("./ios-simulator-driver.ts").IosSimulatorDriver> {
  return (await import("./ios-simulator-driver.ts")).IosSimulatorDriver;
}
