/**
 * `devicerail android helper install|status|remove [-d SERIAL]`: Appium's helper apps on one phone
 * (docs/android-helpers.md), through the user's adb server and without the daemon. The daemon
 * uses them as DEVICERAIL_ANDROID_HELPER says; these commands are how a phone's owner consents.
 */
import { type HelperStatus, loadHelperTool } from "../../drivers/android/index.ts";
import { DriverError } from "../driver/driver-error.ts";
import { silentLogger } from "../protocol/rpc-error.ts";
import { ConfigError, loadConfig } from "../server/config.ts";
import { hostRequest, parseDevices } from "./adb-host.ts";
import { findAdb } from "./doctor-checks.ts";
import { CliError, EXIT, printJson, withSpinner } from "./output.ts";
import { stdout } from "./std-streams.ts";

type Env = Record<string, string | undefined>;
export type HelperVerb = "install" | "status" | "remove";

const WARNING =
  "note: io.appium.settings answers requests from any app on the phone (clipboard, notifications, location; its README: " +
  '"trusted test environment" only). Keep it on test phones; `devicerail android helper remove` uninstalls it.';

/** The phone to act on: -d (a serial or an android-adb: id), else the only ready phone. */
async function chooseSerial(port: number, device: string | undefined): Promise<string> {
  let body: string;
  try {
    body = await hostRequest(port, "host:devices");
  } catch (e) {
    throw new CliError(
      `no adb server answers on 127.0.0.1:${port} (${(e as Error).message}); start one with \`adb start-server\``,
    );
  }
  const devices = parseDevices(body);
  const ready = devices.filter((d) => d.state === "device").map((d) => d.serial);
  if (device !== undefined) {
    const serial = device.replace(/^android-adb:/, "");
    const known = devices.find((d) => d.serial === serial);
    if (!known)
      throw new CliError(
        `no Android device ${serial} (attached: ${devices.map((d) => d.serial).join(", ") || "none"})`,
      );
    if (known.state !== "device") throw new CliError(`${serial} is ${known.state}, not ready`);
    return serial;
  }
  if (ready.length === 1) return ready[0] as string;
  if (ready.length === 0) throw new CliError("no Android device attached and ready (see devicerail doctor)");
  throw new CliError(
    `several Android devices are attached (${ready.join(", ")}): choose one with -d SERIAL`,
    EXIT.usage,
  );
}

function statusText(s: HelperStatus): string {
  const lines = [`phone ${s.serial} (${s.manufacturer || "unknown maker"})`];
  const width = Math.max(...s.apps.map((a) => a.packageName.length));
  for (const a of s.apps)
    lines.push(`  ${a.packageName.padEnd(width)}  ${a.installed ?? "not installed"} (devicerail ships ${a.shipped})`);
  lines.push(
    `  Unicode IME          ${s.imeUsable ? "usable" : "not usable"}${s.selectedIme ? ` (the phone's keyboard: ${s.selectedIme})` : ""}`,
  );
  lines.push(`  UiAutomator2 server  ${s.serverUsable ? "usable" : "not usable"}`);
  for (const b of s.blocked) lines.push(`  blocked: ${b}`);
  if (s.apps.every((a) => a.installed === null)) lines.push("install them with: devicerail android helper install");
  return `${lines.join("\n")}\n`;
}

export async function androidHelperCommand(
  verb: HelperVerb,
  opts: { device?: string; json?: boolean },
  env: Env = process.env,
): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
  if (config.android === "off") throw new CliError("DEVICERAIL_ANDROID=off: Android devices are not used", EXIT.usage);
  const bin = findAdb(config.adbPath, env);
  if (!bin)
    throw new CliError(`${config.adbPath} not found: install Android platform-tools or set DEVICERAIL_ADB_PATH`);
  const adb = { bin, port: config.adbServerPort };
  const serial = await chooseSerial(adb.port, opts.device ?? (env.ANDROID_SERIAL || undefined));
  const tool = await loadHelperTool();
  const ctx = { signal: new AbortController().signal, deadline: Date.now() + 300_000, log: silentLogger };
  try {
    if (verb === "status") {
      const s = await tool.helperStatus(adb, serial, ctx);
      if (opts.json) printJson(s);
      else stdout.write(statusText(s));
      return EXIT.ok;
    }
    const changed =
      verb === "install"
        ? await withSpinner(`installing the helpers on ${serial}…`, () => tool.helperInstall(adb, serial, ctx))
        : await withSpinner(`removing the helpers from ${serial}…`, () => tool.helperRemove(adb, serial, ctx));
    if (opts.json) printJson({ serial, [verb === "install" ? "installed" : "removed"]: changed });
    else {
      const what = verb === "install" ? "installed" : "removed";
      stdout.write(
        changed.length
          ? `${what} ${changed.join(", ")} on ${serial}\n`
          : `nothing to do: ${verb === "install" ? "the helpers are current" : "no helper is installed"} on ${serial}\n`,
      );
      if (verb === "install") stdout.write(`${WARNING}\n`);
    }
    return EXIT.ok;
  } catch (e) {
    if (e instanceof DriverError) throw new CliError(e.message, EXIT.runtime, { platformCode: e.platformCode ?? null });
    throw e;
  }
}
