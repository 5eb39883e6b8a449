/**
 * `xcrun simctl <subcommand>` for the fake: what a real Simulator prints and the exit status it
 * ends with (research §1.3–1.5, Sample D).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { HOME_ROOT } from "./device-catalog.ts";
import { appForUrl, bootDevice, installedApp, launchApp, openUrl, shutdownDevice, stopApp } from "./lifecycle.ts";
import { dataPath, readState, transact } from "./sim-state.ts";
import {
  deviceIn,
  fail,
  lookupError,
  onDevice,
  SIM,
  type SimctlHandler,
  simError,
  unhandled,
} from "./simctl-support.ts";
import { io } from "./simctl-io.ts";
import { simctlList } from "./simctl-list.ts";

const list: SimctlHandler = async (ctx, args) => {
  await ctx.faults("list", null, () => lookupError("Shutdown"));
  const r = simctlList(readState(ctx.dir), args);
  if ("stderr" in r) fail(ctx, r);
  ctx.out(r.stdout);
  return 0;
};

const boot: SimctlHandler = async (ctx, [ref]) =>
  onDevice(ctx, "boot", ref, false, (d) => {
    if (!d.isAvailable)
      fail(
        ctx,
        simError(
          SIM,
          403,
          `Unable to boot device because its runtime is unavailable (${d.availabilityError ?? "runtime profile not found"}).`,
        ),
      );
    if (d.state !== "Shutdown") fail(ctx, simError(SIM, 405, `Unable to boot device in current state: ${d.state}`));
    bootDevice(d);
    return 0;
  });

const shutdown: SimctlHandler = async (ctx, [ref]) => {
  if (ref === "all") {
    await ctx.faults("shutdown", null, () => lookupError("Shutdown"));
    transact(ctx.dir, (s) => s.devices.filter((d) => d.state !== "Shutdown").forEach(shutdownDevice));
    return 0;
  }
  return onDevice(ctx, "shutdown", ref, false, (d) => {
    if (d.state === "Shutdown") fail(ctx, simError(SIM, 405, "Unable to shutdown device in current state: Shutdown"));
    shutdownDevice(d);
    return 0;
  });
};

const stamp = () =>
  new Date()
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " +0000");

const bootstatus: SimctlHandler = async (ctx, [ref, ...flags]) => {
  const d0 = deviceIn(ctx, readState(ctx.dir), ref, false);
  await ctx.faults("bootstatus", d0.udid, () => lookupError("Shutdown"));
  ctx.out(`Monitoring boot status for ${d0.name} (${d0.udid}).\n`);
  if (d0.state === "Booted") {
    ctx.out("Device already booted, nothing to do.\n");
    return 0;
  }
  if (d0.state === "Shutdown" && flags.includes("-b"))
    transact(ctx.dir, (s) => bootDevice(deviceIn(ctx, s, d0.udid, false)));
  const started = Date.now();
  for (;;) {
    const d = deviceIn(ctx, readState(ctx.dir), d0.udid, false);
    if (d.state === "Booted") break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const secs = Math.floor((Date.now() - started) / 1000);
  ctx.out(
    `[${stamp()}] Status=4294967295, isTerminal=YES, Elapsed=00:${String(secs).padStart(2, "0")}.\n\tFinished\n\n`,
  );
  return 0;
};

const launch: SimctlHandler = async (ctx, args) => {
  // Options go before the device (and are tolerated between device and bundle id).
  const flags = new Set<string>();
  const rest = [...args];
  const takeFlags = () => {
    while (rest[0]?.startsWith("-")) flags.add(rest.shift() as string);
  };
  takeFlags();
  const ref = rest.shift();
  takeFlags();
  const [bundleId, ...appArgs] = rest;
  if (!bundleId)
    fail(ctx, {
      stderr:
        "Usage: simctl launch [-w | --wait-for-debugger] [--console|--console-pty] [--stdout=<path>] [--stderr=<path>] [--terminate-running-process] <device> <app bundle identifier> [<argv 1> <argv 2> ... <argv n>]\n",
      exitCode: 64,
    });
  if (flags.has("--console") || flags.has("--console-pty")) unhandled(ctx, "simctl launch --console");
  const env = Object.fromEntries(
    Object.entries(process.env)
      .filter(([k]) => k.startsWith("SIMCTL_CHILD_"))
      .map(([k, v]) => [k.slice("SIMCTL_CHILD_".length), v as string]),
  );
  const pid = await onDevice(ctx, "launch", ref, true, (d, s) => {
    if (!installedApp(d, bundleId)) {
      fail(
        ctx,
        simError(
          "FBSOpenApplicationServiceErrorDomain",
          4,
          `The request to open "${bundleId}" failed.`,
          `The operation couldn’t be completed. Application info provider (FBSApplicationLibrary) returned nil for "${bundleId}"`,
        ),
      );
    }
    return launchApp(s, d, bundleId, {
      args: appArgs,
      env,
      terminateRunning: flags.has("--terminate-running-process"),
    });
  });
  ctx.out(`${bundleId}: ${pid}\n`);
  return 0;
};

const terminate: SimctlHandler = async (ctx, [ref, bundleId]) =>
  onDevice(ctx, "terminate", ref, true, (d) => {
    if (!bundleId || !stopApp(d, bundleId)) {
      fail(
        ctx,
        simError(
          "NSPOSIXErrorDomain",
          3,
          `Simulator device failed to terminate ${bundleId}.`,
          "found nothing to terminate",
        ),
      );
    }
    return 0;
  });

const openurl: SimctlHandler = async (ctx, [ref, url]) =>
  onDevice(ctx, "openurl", ref, true, (d, s) => {
    if (!url || !appForUrl(d, url) || !openUrl(s, d, url)) {
      fail(
        ctx,
        simError(
          "NSOSStatusErrorDomain",
          -10814,
          `Simulator device failed to open ${url}.`,
          "The operation couldn’t be completed. (OSStatus error -10814.)",
        ),
      );
    }
    return 0;
  });

const ui: SimctlHandler = async (ctx, [ref, option, value]) => {
  if (option !== "appearance") unhandled(ctx, `simctl ui ${option ?? ""}`);
  if (value !== undefined && value !== "light" && value !== "dark")
    fail(ctx, { stderr: `Invalid appearance value: ${value}. Expected one of: light, dark\n`, exitCode: 1 });
  const now = await onDevice(ctx, "ui", ref, true, (d) => {
    if (value) d.appearance = value;
    return d.appearance;
  });
  if (value === undefined) ctx.out(`${now}\n`);
  return 0;
};

const pbcopy: SimctlHandler = async (ctx, [ref]) => {
  const udid = deviceIn(ctx, readState(ctx.dir), ref, false).udid;
  const text = await ctx.stdin();
  return onDevice(ctx, "pbcopy", udid, true, (d) => {
    d.pasteboard = text;
    return 0;
  });
};

const pbpaste: SimctlHandler = async (ctx, [ref]) => {
  ctx.out(await onDevice(ctx, "pbpaste", ref, true, (d) => d.pasteboard));
  return 0;
};

/**
 * `simctl getenv <device> <name>`: the value from the device's launchd environment. The main
 * screen variables are the framebuffer in pixels and the scale as `%f` prints it: an iPhone 8 Plus
 * app printed `SIMULATOR_MAINSCREEN_WIDTH: 1242`, `SIMULATOR_MAINSCREEN_HEIGHT: 2208`,
 * `SIMULATOR_MAINSCREEN_SCALE: 3.000000` from its ProcessInfo environment
 * (ClintJang/sample-swift-progressinfo README), another app `SIMULATOR_MAINSCREEN_SCALE = 2.000000`.
 * An unknown variable exits 0 with something on stderr: node-simctl's getEnv returns null when
 * stderr is non-empty, and its e2e test ("should return null if no var is found", #109) expects
 * null rather than a rejection, so the exit status is 0. The real stderr text is not known; the
 * fake says so instead of inventing one.
 */
const getenv: SimctlHandler = async (ctx, [ref, name]) => {
  const value = await onDevice(ctx, "getenv", ref, true, (d) => {
    const env: Record<string, string> = {
      HOME: dataPath(d),
      SIMULATOR_UDID: d.udid,
      SIMULATOR_DEVICE_NAME: d.name,
      TMPDIR: `${dataPath(d)}/tmp/`,
    };
    if (d.mainScreenEnv) {
      env.SIMULATOR_MAINSCREEN_WIDTH = String(Math.round(d.screen.width * d.screen.scale));
      env.SIMULATOR_MAINSCREEN_HEIGHT = String(Math.round(d.screen.height * d.screen.scale));
      env.SIMULATOR_MAINSCREEN_SCALE = d.screen.scale.toFixed(6);
    }
    return name ? env[name] : undefined;
  });
  if (value === undefined) {
    ctx.err(`fake xcrun: getenv: ${name} is not set (the real stderr text is unknown)\n`);
    return 0;
  }
  ctx.out(`${value}\n`);
  return 0;
};

const spawn: SimctlHandler = async (ctx, [ref, ...command]) => {
  const line = command.join(" ");
  const out = await onDevice(ctx, "spawn", ref, true, (d) => {
    if (line === "launchctl list") {
      const rows = Object.entries(d.running).map(
        ([b, pid]) => `${pid}\t0\tUIKitApplication:${b}[${pid.toString(16)}][rb-legacy]`,
      );
      return `PID\tStatus\tLabel\n${rows.join("\n")}\n`;
    }
    if (line === "launchctl kickstart -k user/foreground/com.apple.testmanagerd") return "";
    return null;
  });
  if (out === null) unhandled(ctx, `simctl spawn ${line}`);
  ctx.out(out);
  return 0;
};

function plistString(plist: string, key: string): string | undefined {
  return new RegExp(`<key>${key}</key>\\s*<string>([^<]*)</string>`).exec(plist)?.[1];
}

const install: SimctlHandler = async (ctx, [ref, path]) => {
  const dir = path ? resolve(path) : "";
  const plist =
    dir && existsSync(`${dir}/Info.plist`) && statSync(dir).isDirectory()
      ? readFileSync(`${dir}/Info.plist`, "utf8")
      : null;
  const bundleId = plist ? plistString(plist, "CFBundleIdentifier") : undefined;
  return onDevice(ctx, "install", ref, true, (d) => {
    if (!bundleId || !dir.endsWith(".app"))
      fail(
        ctx,
        simError(
          "NSPOSIXErrorDomain",
          2,
          "Failed to install the requested application",
          "The application's Info.plist could not be read or has no CFBundleIdentifier.",
        ),
      );
    d.installed = d.installed.filter((a) => a.bundleId !== bundleId);
    const name =
      (plist && (plistString(plist, "CFBundleDisplayName") ?? plistString(plist, "CFBundleName"))) ||
      basename(dir, ".app");
    d.installed.push({ bundleId, name, kind: "plain", urlSchemes: [] });
    return 0;
  });
};

const uninstall: SimctlHandler = async (ctx, [ref, bundleId]) =>
  onDevice(ctx, "uninstall", ref, true, (d) => {
    if (bundleId) stopApp(d, bundleId);
    d.installed = d.installed.filter((a) => a.bundleId !== bundleId);
    return 0;
  });

const getAppContainer: SimctlHandler = async (ctx, [ref, bundleId, kind = "app"]) => {
  const path = await onDevice(ctx, "get_app_container", ref, true, (d) => {
    const app = bundleId ? installedApp(d, bundleId) : undefined;
    if (!app) fail(ctx, simError("NSPOSIXErrorDomain", 2, "No such file or directory"));
    const slug = app.bundleId
      .replace(/[^A-Za-z0-9]/g, "")
      .toUpperCase()
      .padEnd(8, "0")
      .slice(0, 8);
    return kind === "data"
      ? `${dataPath(d)}/Containers/Data/Application/${slug}-0000-4000-8000-000000000000`
      : `${HOME_ROOT}/${d.udid}/data/Containers/Bundle/Application/${slug}-0000-4000-8000-000000000000/${app.name}.app`;
  });
  ctx.out(`${path}\n`);
  return 0;
};

const privacy: SimctlHandler = async (ctx, [ref, action, service, bundleId]) =>
  onDevice(ctx, "privacy", ref, true, (d) => {
    if (!action || !["grant", "revoke", "reset"].includes(action) || !service)
      unhandled(ctx, `simctl privacy ${action ?? ""} ${service ?? ""}`);
    d.privacy.push({ action, service, bundleId: bundleId ?? null });
    return 0;
  });

const statusBar: SimctlHandler = async (ctx, [ref, op, ...flags]) => {
  const out = await onDevice(ctx, "status_bar", ref, true, (d) => {
    if (op === "clear") d.statusBar = {};
    else if (op === "override")
      for (let i = 0; i + 1 < flags.length; i += 2)
        d.statusBar[(flags[i] as string).replace(/^--/, "")] = flags[i + 1] as string;
    else if (op !== "list") unhandled(ctx, `simctl status_bar ${op ?? ""}`);
    return op === "list"
      ? `Current Status Bar Overrides:\n=============================\n${Object.entries(d.statusBar)
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")}\n`
      : "";
  });
  ctx.out(out);
  return 0;
};

const erase: SimctlHandler = async (ctx, [ref]) =>
  onDevice(ctx, "erase", ref, false, (d) => {
    if (d.state !== "Shutdown")
      fail(ctx, simError(SIM, 405, `Unable to erase contents and settings in current state: ${d.state}`));
    Object.assign(d, {
      pasteboard: "",
      openedUrls: [],
      launches: [],
      input: [],
      statusBar: {},
      privacy: [],
      appearance: "light",
    });
    d.installed = d.installed.filter((a) => a.kind !== "plain");
    return 0;
  });

export const SIMCTL: Record<string, SimctlHandler> = {
  list,
  boot,
  shutdown,
  bootstatus,
  io,
  launch,
  terminate,
  openurl,
  ui,
  pbcopy,
  pbpaste,
  getenv,
  spawn,
  install,
  uninstall,
  get_app_container: getAppContainer,
  privacy,
  status_bar: statusBar,
  erase,
};
