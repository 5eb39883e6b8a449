export { IosSimulatorDriver, type IosOptions } from "./ios-simulator-driver.ts";
