export { AndroidDriver, type AndroidOptions } from "./android-driver.ts";
