/**
 * A simulated Android device over the real ADB transport, driven by the real adb server:
 *
 *   await using server = await startAdbServer();                 // private port and HOME
 *   await using dev = await startFakeDevice(server, { scenario: demoScenario, props: { "ro.product.model": "Pixel_Test" } });
 *   await server.adb(["-s", dev.serial, "shell", "input", "tap", "540", "935"]);   // or adbkit on server.port
 *   expect(dev.phone.inputLog).toEqual([{ kind: "tap", x: 540, y: 935, target: "com.example.app:id/sign_in" }]);
 */
export { ADB_PATH, AdbServer, type AdbResult, type DeviceEntry, startAdbServer } from "./adb-server.ts";
export type { CommandFn, CommandIo, StdinReader } from "./command-io.ts";
export { DEMO_ITEMS, DEMO_PACKAGE, type DemoState, demoScenario } from "./demo-scenario.ts";
export {
  type AuthMode,
  DEFAULT_FEATURES,
  FakeAdbd,
  type FakeAdbdOptions,
  type SystemType,
  type TraceEntry,
} from "./fake-adbd.ts";
export { type FakeDevice, type FakeDeviceOptions, startFakeDevice } from "./fake-device.ts";
export {
  type CommandRecord,
  DEFAULT_PROPS,
  FakePhone,
  type FakePhoneOptions,
  type Faults,
  type InputRecord,
  type ServiceRecord,
} from "./fake-phone.ts";
export {
  type Bounds,
  type Scenario,
  type ScenarioContext,
  screenRoot,
  type SnapshotNode,
  type UiNode,
  type View,
  vstack,
} from "./scenario.ts";
export { DEFAULT_DUMP_FILE, IDLE_STATE_ERROR, NULL_ROOT_ERROR } from "./commands-screen.ts";
export { adbServerForFile, describeWithAdb } from "./with-adb.ts";
export {
  type ApkInfo,
  PINNED_APK_FILES,
  PINNED_APKS,
  SETTINGS_APP_PACKAGE,
  sha256Hex,
  UIA2_SERVER_PACKAGE,
  UIA2_TEST_PACKAGE,
} from "./apk-catalog.ts";
export { type InstalledPackage, installApk, PackageState } from "./packages.ts";
export { decodeImapRun, encodeImapUtf7, ImeService, STOCK_IME, UNICODE_IME } from "./ime.ts";
export {
  AppiumSettingsState,
  type PhoneLocation,
  type PostedNotification,
  settingsAppRunning,
} from "./appium-settings.ts";
export {
  CRASH_OUTPUT,
  UIA2_DEVICE_PORT,
  UIA2_INSTRUMENTATION,
  UIA2_LATENCY_MS,
  UIA2_TEST_CLASS,
  type Uia2Options,
  Uia2Server,
} from "./uia2-server.ts";
export { type Uia2Op } from "./uia2-protocol.ts";
export { UIA2_ROUTES } from "./uia2-routes.ts";
export { toUia2Xml } from "./uia2-source.ts";
