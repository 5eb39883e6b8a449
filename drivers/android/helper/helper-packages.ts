/**
 * Installing, reading and removing the helper apps on one phone: each APK checked against its
 * pinned SHA-256, pushed to /data/local/tmp and installed with `pm install -r -g -t` (replace,
 * grant its runtime permissions, allow a test package), the pushed file removed whatever happened.
 * The package manager's refusals become typed errors naming the phone setting to change.
 */
import type { CallContext } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import type { AdbkitPort } from "../adbkit-port.ts";
import type { AndroidShell } from "../android-shell.ts";
import { quote } from "../parse/shell.ts";
import { apkOf, HELPER_APKS, type HelperApk, verifiedApk } from "./apks.ts";
import { UNICODE_IME } from "./unicode-ime.ts";

export interface InstalledHelper {
  name: HelperApk["name"];
  packageName: string;
  /** The version devicerail ships. */
  shipped: string;
  /** The installed versionName, or null when the package is not installed. */
  installed: string | null;
}

export interface HelperPackages {
  apps: InstalledHelper[];
  /** Whether the phone lists the Unicode IME among its input methods (`ime list -a -s`). */
  unicodeIme: boolean;
  /** The phone's selected IME (`settings get secure default_input_method`). */
  selectedIme: string | null;
}

/** What each refusal of the package manager means and how the phone's owner lifts it. */
const INSTALL_FIXES: Record<string, string> = {
  INSTALL_FAILED_USER_RESTRICTED:
    "the phone refuses installs over USB: on Xiaomi/Redmi/POCO (MIUI, HyperOS) turn on Developer options › Install via USB (it asks for a Mi account); on OPPO/realme/OnePlus (ColorOS) turn off Developer options › Verify apps over USB, or accept the install prompt on the phone",
  INSTALL_FAILED_VERIFICATION_FAILURE:
    "the phone's package verifier refused the app: turn off Developer options › Verify apps over USB (Google Play Protect may ask on the phone)",
  INSTALL_FAILED_INSUFFICIENT_STORAGE: "the phone has not enough free storage for the helpers (about 25 MB): free some",
  INSTALL_FAILED_UPDATE_INCOMPATIBLE:
    "a copy signed by someone else is installed (an Appium install's, say): remove it with `devicerail android helper remove`, then install again",
  INSTALL_FAILED_VERSION_DOWNGRADE:
    "a newer version is installed (by Appium?): devicerail uses it as it is, or remove it with `devicerail android helper remove` and install again",
  INSTALL_FAILED_TEST_ONLY:
    "the phone refuses test-only packages: install again (devicerail passes -t); if it persists the ROM forbids them",
};

export const installRefused = (apk: HelperApk, out: string) => {
  const code = /Failure \[([A-Z_]+)/.exec(out)?.[1] ?? null;
  const fix = (code && INSTALL_FIXES[code]) ?? "see the phone's screen for a prompt to accept, then install again";
  return new DriverError("platform_error", {
    platformCode: "android_helper_install_refused",
    retryable: false,
    message: `the phone refused to install ${apk.packageName} ${apk.version} (${code ?? out.trim().slice(0, 200)}): ${fix}`,
  });
};

/** The versionName `dumpsys package <pkg>` prints for the package, or null. */
export function parseVersionName(dumpsys: string, packageName: string): string | null {
  const at = dumpsys.indexOf(`Package [${packageName}]`);
  if (at < 0) return null;
  const name = /^\s*versionName=(\S+)/m.exec(dumpsys.slice(at))?.[1] ?? null;
  // A package without a versionName (the server's test APK declares none) prints `versionName=null`.
  return name === "null" ? null : name;
}

export async function readHelperPackages(
  shell: AndroidShell,
  serial: string,
  ctx: CallContext,
): Promise<HelperPackages> {
  const listed = await shell.run(serial, "pm list packages io.appium", ctx, { ceilingMs: 10_000 });
  const present = new Set([...listed.matchAll(/^package:(\S+)/gm)].map((m) => m[1] as string));
  const apps: InstalledHelper[] = [];
  for (const apk of HELPER_APKS) {
    let installed: string | null = null;
    if (present.has(apk.packageName)) {
      const out = await shell.run(serial, `dumpsys package ${quote(apk.packageName)}`, ctx, { ceilingMs: 10_000 });
      // The test APK declares no version: it counts as the one shipped beside the server it came with.
      installed =
        parseVersionName(out, apk.packageName) ?? (apk.name === "uiautomator2-test" ? apk.version : "unknown");
    }
    apps.push({ name: apk.name, packageName: apk.packageName, shipped: apk.version, installed });
  }
  const imes = present.has("io.appium.settings")
    ? await shell.exec(serial, "ime list -a -s", ctx, { ceilingMs: 10_000 })
    : { out: "", code: 0 };
  const selected = (await shell.run(serial, "settings get secure default_input_method", ctx)).trim();
  return {
    apps,
    unicodeIme: imes.code === 0 && imes.out.split(/\r?\n/).includes(UNICODE_IME),
    selectedIme: selected && selected !== "null" ? selected : null,
  };
}

/** Installs each helper that is missing or of another version; returns the packages installed. */
export async function installHelpers(
  port: AdbkitPort,
  shell: AndroidShell,
  serial: string,
  ctx: CallContext,
  apkPath: (apk: HelperApk) => string = (apk) => apk.path,
): Promise<string[]> {
  const before = await readHelperPackages(shell, serial, ctx);
  const done: string[] = [];
  for (const apk of HELPER_APKS) {
    // The test APK has no version of its own: it is replaced whenever the server is.
    const withServer = apk.name === "uiautomator2-test" && done.includes(apkOf("uiautomator2").packageName);
    if (before.apps.find((a) => a.name === apk.name)?.installed === apk.version && !withServer) continue;
    const bytes = await verifiedApk(apk, apkPath(apk));
    const remote = `/data/local/tmp/devicerail-${apk.name}.apk`;
    try {
      await port.push(serial, bytes, remote, ctx);
      const { out } = await shell.exec(serial, `pm install -r -g -t ${quote(remote)}`, ctx, { ceilingMs: 120_000 });
      if (!/^Success/m.test(out)) throw installRefused(apk, out);
      done.push(apk.packageName);
    } finally {
      const cleanup: CallContext = { signal: new AbortController().signal, deadline: Date.now() + 5_000, log: ctx.log };
      await shell.exec(serial, `rm -f ${quote(remote)}`, cleanup).catch(() => {});
    }
  }
  return done;
}

/** Uninstalls the helpers that are installed; returns the packages removed. */
export async function removeHelpers(shell: AndroidShell, serial: string, ctx: CallContext): Promise<string[]> {
  const before = await readHelperPackages(shell, serial, ctx);
  const removed: string[] = [];
  // The test package first: it instruments the server package.
  for (const app of [...before.apps].reverse()) {
    if (app.installed === null) continue;
    const { out } = await shell.exec(serial, `pm uninstall ${quote(app.packageName)}`, ctx, { ceilingMs: 60_000 });
    if (!/^Success/m.test(out))
      throw new DriverError("platform_error", {
        platformCode: "android_helper_remove_failed",
        retryable: true,
        message: `the phone did not uninstall ${app.packageName} (${out.trim().slice(0, 200)}); remove it in the phone's Settings › Apps`,
      });
    removed.push(app.packageName);
  }
  return removed;
}
