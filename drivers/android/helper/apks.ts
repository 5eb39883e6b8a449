/**
 * The on-device helpers devicerail ships: Appium's io.appium.settings and the UiAutomator2 server
 * with its instrumentation APK, from the npm packages pinned in package.json. Imported as files, so
 * `bun build --compile` embeds them in the binary; each is checked against its SHA-256 before it is
 * installed, so a damaged or replaced file never reaches a phone.
 */
import settingsApk from "../../../node_modules/io.appium.settings/apks/settings_apk-debug.apk" with { type: "file" };
import serverApk from "../../../node_modules/appium-uiautomator2-server/apks/appium-uiautomator2-server-v10.6.6.apk" with {
  type: "file",
};
import serverTestApk from "../../../node_modules/appium-uiautomator2-server/apks/appium-uiautomator2-server-debug-androidTest.apk" with {
  type: "file",
};
import { DriverError } from "../../../src/driver/driver-error.ts";

export interface HelperApk {
  /** What devicerail calls it (`android helper status`). */
  name: "settings" | "uiautomator2" | "uiautomator2-test";
  /** The Android package the APK installs. */
  packageName: string;
  /** The package's versionName as the npm package publishes it. */
  version: string;
  path: string;
  bytes: number;
  sha256: string;
}

/** SHA-256 and sizes of the files in io.appium.settings@8.0.10 and appium-uiautomator2-server@10.6.6 on npm. */
export const HELPER_APKS: readonly HelperApk[] = [
  {
    name: "settings",
    packageName: "io.appium.settings",
    version: "8.0.10",
    path: settingsApk,
    bytes: 3_076_294,
    sha256: "4c5d60ab5ae56502857dc625e1dde2996fa6d9e64c479bbce59214774e2129dd",
  },
  {
    name: "uiautomator2",
    packageName: "io.appium.uiautomator2.server",
    version: "10.6.6",
    path: serverApk,
    bytes: 17_968_807,
    sha256: "8ff760a2a86b487f53090fbdcd5b0360e67d02bb811887d527a9557b0d59c80d",
  },
  {
    name: "uiautomator2-test",
    packageName: "io.appium.uiautomator2.server.test",
    version: "10.6.6",
    path: serverTestApk,
    bytes: 197_183,
    sha256: "e6f729287d72351388fd66597c35b69988b9091a7011954bf92a55d416cb1e1c",
  },
];

export const SETTINGS_PACKAGE = "io.appium.settings";
export const SERVER_PACKAGE = "io.appium.uiautomator2.server";
export const SERVER_TEST_PACKAGE = "io.appium.uiautomator2.server.test";

export const apkOf = (name: HelperApk["name"]): HelperApk => HELPER_APKS.find((a) => a.name === name) as HelperApk;

/** The APK's bytes, after its SHA-256 matched the pinned one. */
export async function verifiedApk(apk: HelperApk, path = apk.path): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await Bun.file(path).bytes();
  } catch (err) {
    throw apkDamaged(apk, `cannot read ${path}: ${(err as Error).message}`);
  }
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  if (sha256 !== apk.sha256) throw apkDamaged(apk, `SHA-256 ${sha256}, expected ${apk.sha256}`);
  return bytes;
}

const apkDamaged = (apk: HelperApk, detail: string) =>
  new DriverError("platform_error", {
    platformCode: "android_helper_apk_damaged",
    retryable: false,
    message: `the ${apk.packageName} ${apk.version} APK shipped with devicerail does not match its pinned SHA-256 (${detail}); reinstall devicerail`,
  });
