/**
 * `devicerail android helper install|status|remove` and doctor's helper check: the helper apps on
 * one phone through the user's adb server, without a daemon. Status only reads; install and
 * remove change nothing but the three packages.
 */
import type { CallContext } from "../../../src/driver/driver.ts";
import { AdbkitPort } from "../adbkit-port.ts";
import { AndroidShell } from "../android-shell.ts";
import { isInjectionDenied } from "../input-probe.ts";
import type { PhoneCheck } from "../phone-checks.ts";
import { HELPER_APKS } from "./apks.ts";
import { type HelperPackages, installHelpers, readHelperPackages, removeHelpers } from "./helper-packages.ts";

export interface HelperStatus extends HelperPackages {
  serial: string;
  manufacturer: string;
  /** Whether `input` is refused (the vendor's security option): every helper's typing needs it. */
  inputRefused: boolean;
  /** What the phone's vendor settings block, as known from its manufacturer and the input probe. */
  blocked: string[];
  /** The UiAutomator2 server's two packages are installed at the shipped version. */
  serverUsable: boolean;
  /** The Unicode IME is there to be selected (io.appium.settings installed, the IME listed). */
  imeUsable: boolean;
}

const XIAOMI = /^(xiaomi|redmi|poco)$/i;
const OPPO = /^(oppo|realme|oneplus)$/i;

const tool = (adb: { bin: string; port: number }) => {
  const port = new AdbkitPort({ port: adb.port, bin: adb.bin });
  return { port, shell: new AndroidShell(port, () => null) };
};

export async function helperStatus(
  adb: { bin: string; port: number },
  serial: string,
  ctx: CallContext,
): Promise<HelperStatus> {
  return statusOn(tool(adb).shell, serial, ctx);
}

async function statusOn(shell: AndroidShell, serial: string, ctx: CallContext): Promise<HelperStatus> {
  const packages = await readHelperPackages(shell, serial, ctx);
  const manufacturer = (await shell.run(serial, "getprop ro.product.manufacturer", ctx)).trim();
  const probe = await shell.exec(serial, "input keyevent 0", ctx);
  const inputRefused = isInjectionDenied(probe.out);
  const blocked: string[] = [];
  if (inputRefused) blocked.push("input from adb (taps, keys, text): the vendor's security option is off");
  if (XIAOMI.test(manufacturer))
    blocked.push(
      "MIUI/HyperOS: installs over USB need Developer options › Install via USB, input needs › USB debugging (Security settings)",
    );
  if (OPPO.test(manufacturer))
    blocked.push("ColorOS: installs over USB may ask on the phone (Developer options › Verify apps over USB)");
  const current = (name: string) => {
    const app = packages.apps.find((a) => a.name === name);
    return app !== undefined && app.installed === app.shipped;
  };
  return {
    ...packages,
    serial,
    manufacturer,
    inputRefused,
    blocked,
    serverUsable: current("uiautomator2") && current("uiautomator2-test") && !inputRefused,
    imeUsable: packages.unicodeIme && !inputRefused,
  };
}

export async function helperInstall(
  adb: { bin: string; port: number },
  serial: string,
  ctx: CallContext,
): Promise<string[]> {
  const { port, shell } = tool(adb);
  return installHelpers(port, shell, serial, ctx);
}

export async function helperRemove(
  adb: { bin: string; port: number },
  serial: string,
  ctx: CallContext,
): Promise<string[]> {
  const { shell } = tool(adb);
  return removeHelpers(shell, serial, ctx);
}

/** doctor's line about the helpers: what is installed and usable; absence is fine (they are optional). */
export function helperCheck(s: HelperStatus): PhoneCheck {
  const installed = s.apps.filter((a) => a.installed !== null);
  if (installed.length === 0)
    return {
      name: "helpers",
      status: "ok",
      detail: "Appium's helpers are not installed: the stock shell serves (ASCII text only, trees by uiautomator dump)",
      fix: `optional: devicerail android helper install -d ${s.serial} (any Unicode text, UI trees and taps through the UiAutomator2 server)`,
    };
  const stale = installed.filter((a) => a.installed !== a.shipped);
  const parts = [
    ...s.apps.map((a) => `${a.packageName} ${a.installed ?? "not installed"}`),
    `Unicode IME ${s.imeUsable ? "usable" : "not usable"}`,
    `UiAutomator2 server ${s.serverUsable ? "usable" : "not usable"}`,
  ];
  const incomplete = stale.length > 0 || installed.length < HELPER_APKS.length || !s.imeUsable || !s.serverUsable;
  return {
    name: "helpers",
    status: incomplete ? "warn" : "ok",
    detail: [...parts, ...s.blocked.map((b) => `blocked: ${b}`)].join("; "),
    fix: incomplete ? `devicerail android helper install -d ${s.serial} installs the versions devicerail ships` : null,
  };
}

/** The doctor's phone check (phone-checks.ts). */
export const helpersPhoneCheck = async (shell: AndroidShell, serial: string, ctx: CallContext): Promise<PhoneCheck> =>
  helperCheck(await statusOn(shell, serial, ctx));
