/**
 * Fake iOS Simulator tooling for tests on Linux: `xcrun simctl`, `axe` and WebDriverAgent over one
 * shared simulated Simulator (sim-state.ts), with Apple-format output, real PNGs, real exit codes
 * and stderr, a command log and fault switches.
 *
 *   await using sim = await startFakeSimulators({ wda: true });
 *   const udid = sim.device().udid;                                     // the booted iPhone 17 Pro
 *   await sim.run("axe", ["tap", "-x", "201", "-y", "243", "--udid", udid]);
 *   execFile("xcrun", ["simctl", "io", udid, "screenshot", "-"], { env: sim.env, encoding: "buffer" }, cb);
 *   sim.setFault({ tool: "axe", command: "describe-ui", mode: "hang" });           // a tree read that never ends
 *   sim.setFault({ tool: "axe", command: "describe-ui", mode: "malformed-json" }); // a tree cut in half
 *   await startFakeSimulators({ xcode: { version: "16.4", build: "16F6" } });      // AXe 1.8 cannot drive it
 *   await startFakeSimulators({ xcode: "command-line-tools" });                    // xcrun finds no simctl
 *   sim.update((s) => { s.devices[0].noTranslation = true; });                    // a wedged CoreSimulatorBridge
 *   sim.update((s) => { s.devices[0].screenSurfacesTimeouts = 2; });              // display not up yet
 *   expect(sim.readLog("axe").map((r) => r.argv)).toEqual([...]);
 */
export { appleJson } from "./apple-json.ts";
export { DEMO_ITEMS, type DemoUi, WRONG_PASSWORD } from "./apps.ts";
export { DEVICE_TYPES, RUNTIMES, type ScreenSpec } from "./device-catalog.ts";
export {
  BUN_PATH,
  type FakeSimulators,
  type FakeSimulatorsOptions,
  type RunResult,
  startFakeSimulators,
} from "./fake-simulators.ts";
export { type FakeWda, type FakeWdaOptions, startFakeWda } from "./fake-wda.ts";
export { decodePng, type Pixels, pngSize } from "./png-pixels.ts";
export { DEFAULT_XCODE, NO_TRANSLATION, SCREEN_SURFACES_TIMEOUT, type XcodeSpec } from "./xcode.ts";
export { PALETTE } from "./screenshot.ts";
export {
  type CommandRecord,
  DEMO_BUNDLE,
  type DeviceSpec,
  type Fault,
  type FaultMode,
  type InputEvent,
  SAFARI_BUNDLE,
  SAMPLE_A_DEVICES,
  SETTINGS_BUNDLE,
  type SimDevice,
  type SimState,
  STATE_ENV,
} from "./sim-state.ts";
