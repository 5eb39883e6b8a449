export { AndroidDriver, type AndroidOptions } from "./android-driver.ts";
export { stateProblem } from "./parse/devices.ts";
