/**
 * The APKs the simulated package manager recognises, by the SHA-256 of their bytes: the three
 * pinned helper APKs of issue 27. Package, versions and SDK levels were read from each APK's binary
 * AndroidManifest.xml (the `manifest` and `uses-sdk` attributes, decoded from the files in the npm
 * tarballs io.appium.settings@8.0.10 `apks/settings_apk-debug.apk` and appium-uiautomator2-server@10.6.6
 * `apks/*.apk`); the test APK's manifest has no versionCode/versionName attribute at all. The
 * SHA-256 values are those of /work/wt/issue27-research.md §0.
 */
import { join } from "node:path";

export interface ApkInfo {
  package: string;
  /** null when the manifest declares none (dumpsys then prints `versionName=null`). */
  versionName: string | null;
  versionCode: number;
  minSdk: number;
  targetSdk: number;
  label: string;
  /** The MAIN/LAUNCHER activity (fully qualified), if any. */
  launcher?: string;
  /** More MAIN/LAUNCHER activities. */
  extraLaunchers?: string[];
  /**
   * Requested permissions of protection level `dangerous` (AOSP core/res/AndroidManifest.xml):
   * what `pm install -g` grants. The others are install-time or need `pm grant`/appops.
   */
  runtimePermissions: string[];
  /** Requested permissions `pm grant` may grant beyond the runtime ones (protection level `development`). */
  developmentPermissions: string[];
  /** The other requested permissions (install-time ones): `pm grant` refuses them. */
  otherPermissions: string[];
  /** Input methods the package declares (services with the android.view.InputMethod action), as short ids. */
  imes: string[];
}

export const SETTINGS_APP_PACKAGE = "io.appium.settings";
export const UIA2_SERVER_PACKAGE = "io.appium.uiautomator2.server";
export const UIA2_TEST_PACKAGE = "io.appium.uiautomator2.server.test";

/** The <uses-permission> entries of settings_apk-debug.apk 8.0.10 that are `dangerous`. */
const SETTINGS_RUNTIME = [
  "android.permission.READ_EXTERNAL_STORAGE",
  "android.permission.READ_MEDIA_IMAGES",
  "android.permission.READ_PHONE_STATE",
  "android.permission.ACCESS_FINE_LOCATION",
  "android.permission.ACCESS_COARSE_LOCATION",
  "android.permission.ACCESS_BACKGROUND_LOCATION",
  "android.permission.BLUETOOTH_CONNECT",
  "android.permission.BLUETOOTH_SCAN",
  "android.permission.READ_SMS",
  "android.permission.RECORD_AUDIO",
];

const SETTINGS_OTHER = [
  ...[
    "DISABLE_KEYGUARD",
    "WAKE_LOCK",
    "INTERNET",
    "CHANGE_NETWORK_STATE",
    "ACCESS_NETWORK_STATE",
    "WRITE_SETTINGS",
    "CHANGE_WIFI_STATE",
    "ACCESS_WIFI_STATE",
    "ACCESS_MOCK_LOCATION",
    "FOREGROUND_SERVICE",
    "FOREGROUND_SERVICE_LOCATION",
    "FOREGROUND_SERVICE_MEDIA_PROJECTION",
    "BLUETOOTH",
    "BLUETOOTH_ADMIN",
  ].map((p) => `android.permission.${p}`),
  "io.appium.settings.DYNAMIC_RECEIVER_NOT_EXPORTED_PERMISSION",
];

export const PINNED_APKS: Readonly<Record<string, ApkInfo>> = {
  // io.appium.settings@8.0.10 apks/settings_apk-debug.apk (3 076 294 bytes)
  "4c5d60ab5ae56502857dc625e1dde2996fa6d9e64c479bbce59214774e2129dd": {
    package: SETTINGS_APP_PACKAGE,
    versionName: "8.0.10",
    versionCode: 192,
    minSdk: 26,
    targetSdk: 35,
    label: "Appium Settings",
    launcher: "io.appium.settings.Settings",
    runtimePermissions: SETTINGS_RUNTIME,
    developmentPermissions: ["android.permission.SET_ANIMATION_SCALE", "android.permission.CHANGE_CONFIGURATION"],
    otherPermissions: SETTINGS_OTHER,
    imes: [".AppiumIME", ".EmptyIME", ".UnicodeIME"].map((s) => `${SETTINGS_APP_PACKAGE}/${s}`),
  },
  // appium-uiautomator2-server@10.6.6 apks/appium-uiautomator2-server-v10.6.6.apk (17 968 807 bytes); its
  // LAUNCHER activities come from androidx.test (InstrumentationActivityInvoker$…).
  "8ff760a2a86b487f53090fbdcd5b0360e67d02bb811887d527a9557b0d59c80d": {
    package: UIA2_SERVER_PACKAGE,
    versionName: "10.6.6",
    versionCode: 278,
    minSdk: 26,
    targetSdk: 34,
    label: UIA2_SERVER_PACKAGE,
    launcher: "androidx.test.core.app.InstrumentationActivityInvoker$BootstrapActivity",
    extraLaunchers: [
      "androidx.test.core.app.InstrumentationActivityInvoker$EmptyActivity",
      "androidx.test.core.app.InstrumentationActivityInvoker$EmptyFloatingActivity",
    ],
    runtimePermissions: ["android.permission.BLUETOOTH_SCAN"],
    developmentPermissions: [],
    otherPermissions: [
      "ACCESS_NETWORK_STATE",
      "INTERNET",
      "WAKE_LOCK",
      "CHANGE_WIFI_STATE",
      "ACCESS_WIFI_STATE",
      "BLUETOOTH",
      "QUERY_ALL_PACKAGES",
      "REORDER_TASKS",
    ].map((p) => `android.permission.${p}`),
    imes: [],
  },
  // appium-uiautomator2-server@10.6.6 apks/appium-uiautomator2-server-debug-androidTest.apk (197 183 bytes):
  // an <instrumentation> targeting io.appium.uiautomator2.server, no activity, no version attributes.
  e6f729287d72351388fd66597c35b69988b9091a7011954bf92a55d416cb1e1c: {
    package: UIA2_TEST_PACKAGE,
    versionName: null,
    versionCode: 0,
    minSdk: 26,
    targetSdk: 34,
    label: UIA2_TEST_PACKAGE,
    runtimePermissions: [],
    developmentPermissions: [],
    otherPermissions: [],
    imes: [],
  },
};

/** The pinned APK files, from the npm packages package.json pins (io.appium.settings, appium-uiautomator2-server). */
const NODE_MODULES = join(import.meta.dir, "../../../node_modules");
export const PINNED_APK_FILES = {
  settings: join(NODE_MODULES, "io.appium.settings/apks/settings_apk-debug.apk"),
  server: join(NODE_MODULES, "appium-uiautomator2-server/apks/appium-uiautomator2-server-v10.6.6.apk"),
  test: join(NODE_MODULES, "appium-uiautomator2-server/apks/appium-uiautomator2-server-debug-androidTest.apk"),
} as const;

/** Lower-case hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}
