/**
 * The checks of `devicerail doctor`. Each reports what it saw and, when something is off, the
 * fix. None starts a server or changes state beyond what the daemon itself does at start-up.
 * Over 300 lines because it is a list of independent checks, each short, that read best side by side.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { DatabaseLockedError, openDatabase } from "../core/sessions/db.ts";
import { ListenAddressError, checkListenAddress, isLoopbackAddress } from "../transports/tcp.ts";
import type { Config } from "../server/config.ts";
import { DataDirError, ensurePrivateDir, resolveDataPaths } from "../server/data-dir.ts";
import { peerCredentialsSupported } from "../transports/peer-credentials.ts";
import { answersWithoutCredential } from "./daemon-control.ts";
import { isAlive, readRecord } from "../server/daemon-record.ts";
import { endpointText } from "../client/endpoint.ts";
import { hostRequest, listeningAddresses, parseDevices, serverExecutable } from "./adb-host.ts";
import { loadPhoneChecks, parseAdbClientVersion, stateProblem } from "../../drivers/android/index.ts";
import { silentLogger } from "../protocol/rpc-error.ts";
import {
  isIosSimulator,
  parseDeviceList,
  INSTALL_AXE,
  MIN_AXE_VERSION,
  SELECT_XCODE,
  XCODE_NOT_SELECTED,
  atLeast,
  axeXcodeProblem,
  locateAxe,
  parseAxeVersion,
  parseXcodeVersion,
  treeFailure,
} from "../../drivers/ios-simulator/index.ts";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix: string | null;
}

type Env = Record<string, string | undefined>;
const check = (name: string, status: CheckStatus, detail: string, fix: string | null = null): Check => ({
  name,
  status,
  detail,
  fix,
});

/** The adb binary as the daemon would run it: a path, or a name looked up on PATH. */
export function findAdb(adbPath: string, env: Env): string | null {
  if (adbPath.includes("/") || adbPath.includes("\\")) return existsSync(adbPath) ? adbPath : null;
  return Bun.which(adbPath, { PATH: env.PATH ?? "" });
}

const INSTALL_ADB =
  "install Android platform-tools (Debian/Ubuntu: apt-get install adb; macOS: brew install android-platform-tools) or point DEVICERAIL_ADB_PATH at adb";

/** The fix for each adb device state that keeps a phone from being used: the driver's own hint. */
export function stateFix(state: string): string | null {
  return stateProblem(state)?.hint ?? null;
}

/** adb (found, version), its server (reachable, bound to loopback only) and each device's state. */
export async function adbChecks(config: Config, env: Env): Promise<Check[]> {
  if (config.android === "off") return [check("adb", "skip", "DEVICERAIL_ANDROID=off: Android devices are not used")];
  const missing = config.android === "required" ? "fail" : "warn";
  const bin = findAdb(config.adbPath, env);
  if (!bin) return [check("adb", missing, `${config.adbPath} not found (DEVICERAIL_ADB_PATH or PATH)`, INSTALL_ADB)];
  const r = Bun.spawnSync([bin, "version"], {
    env: env as Record<string, string>,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 5_000,
  });
  const firstLines = r.stdout.toString().trim().split("\n").slice(0, 2).join(", ");
  if (r.exitCode !== 0)
    return [
      check("adb", "fail", `${bin} version failed: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`, INSTALL_ADB),
    ];
  const checks = [check("adb", "ok", `${bin}: ${firstLines}`)];

  const port = config.adbServerPort;
  let protocol: number;
  try {
    protocol = Number.parseInt(await hostRequest(port, "host:version"), 16);
  } catch (e) {
    checks.push(
      check(
        "adb server",
        "warn",
        `no adb server answers on 127.0.0.1:${port} (${(e as Error).message})`,
        "devicerail starts one when it needs it; or run `adb start-server`",
      ),
    );
    return checks;
  }
  checks.push(serverVersionCheck(port, protocol, bin, parseAdbClientVersion(r.stdout.toString())));
  checks.push(exposureCheck(port));

  const devices = parseDevices(await hostRequest(port, "host:devices").catch(() => ""));
  if (devices.length === 0)
    checks.push(
      check(
        "devices",
        "warn",
        "no Android device attached",
        "connect a phone by USB with USB debugging on (Settings › Developer options), or start an emulator",
      ),
    );
  const ready = devices.filter((d) => d.state === "device").map((d) => d.serial);
  const onPhones = await phoneChecks(bin, port, ready);
  for (const d of devices) {
    const fix = stateFix(d.state);
    checks.push(check(`device ${d.serial}`, fix ? "fail" : "ok", fix ? d.state : "device (ready)", fix));
    checks.push(...(onPhones.get(d.serial) ?? []));
  }
  return checks;
}

/**
 * The driver's phone checks on each ready phone, named after it; a failure to run them at all is
 * one failed check per phone.
 */
async function phoneChecks(bin: string, port: number, serials: string[]): Promise<Map<string, Check[]>> {
  if (serials.length === 0) return new Map();
  const named = (serial: string, c: Check) => ({ ...c, name: `phone ${serial}: ${c.name}` });
  try {
    const checkPhones = await loadPhoneChecks();
    const found = await checkPhones({ bin, port }, serials, {
      signal: new AbortController().signal,
      deadline: Date.now() + 60_000,
      log: silentLogger,
    });
    return new Map(serials.map((s) => [s, (found.get(s) ?? []).map((c) => named(s, c))]));
  } catch (e) {
    return new Map(
      serials.map((s) => [
        s,
        [
          named(
            s,
            check(
              "checks",
              "fail",
              `could not run the phone checks: ${(e as Error).message}`,
              "run devicerail doctor again; if it persists, report it",
            ),
          ),
        ],
      ]),
    );
  }
}

/**
 * The server must be of the adb's own version: an adb client of another version kills the
 * running server and starts its own ("adb server version (40) doesn't match this client (41);
 * killing..."), so two adbs on one machine keep replacing each other's server. devicerail uses
 * the running server as it is; the user has to pick one adb.
 */
function serverVersionCheck(port: number, server: number, bin: string, client: number | null): Check {
  if (client === null || client === server)
    return check("adb server", "ok", `answers on 127.0.0.1:${port} (adb protocol ${server})`);
  const starter = serverExecutable(port);
  const which = starter
    ? `the adb that started it (${starter}): set DEVICERAIL_ADB_PATH=${starter}`
    : `the adb that started it (one whose \`adb version\` prints 1.0.${server}), and set DEVICERAIL_ADB_PATH to it`;
  return check(
    "adb server",
    "warn",
    `answers on 127.0.0.1:${port} with adb protocol ${server}, but ${bin} is version ${client}: adb clients and servers of different versions kill each other ` +
      `("adb server version (${server}) doesn't match this client (${client}); killing..."); devicerail uses the running server as it is and never restarts it`,
    `use one adb for everything: ${which}; or stop this server and use only ${bin} (the adb you run yourself), pointing DEVICERAIL_ADB_PATH at it`,
  );
}

/**
 * An adb server on 0.0.0.0 lets anyone on the network drive the phones; adb binds loopback unless
 * started with -a.
 */
function exposureCheck(port: number): Check {
  const addresses = listeningAddresses(port);
  if (addresses === null) return check("adb server exposure", "skip", "cannot list listening sockets on this system");
  const wide = addresses.filter((a) => !isLoopbackAddress(a));
  if (wide.length === 0)
    return check(
      "adb server exposure",
      "ok",
      `listens on loopback only (${[...new Set(addresses)].join(", ") || "127.0.0.1"})`,
    );
  return check(
    "adb server exposure",
    "warn",
    `listens on ${wide.join(", ")} port ${port}: anyone who can reach this machine can drive its phones`,
    "restart it bound to loopback: `adb kill-server && adb start-server` (without -a)",
  );
}

type Ran = { ok: boolean; stdout: string; stderr: string; timedOut: boolean };
function runSync(argv: string[], env: Env, timeout: number): Ran {
  try {
    const r = Bun.spawnSync(argv, { env: env as Record<string, string>, stdout: "pipe", stderr: "pipe", timeout });
    return {
      ok: r.exitCode === 0,
      stdout: r.stdout.toString(),
      stderr: r.stderr.toString().trim(),
      timedOut: r.exitCode === null,
    };
  } catch (e) {
    return { ok: false, stdout: "", stderr: (e as Error).message, timedOut: false };
  }
}
const firstLine = (s: string) => s.trim().split("\n")[0] ?? "";
const said = (r: Ran) =>
  (/Error: (.*)/.exec(r.stderr)?.[1] ?? firstLine(r.stderr)) || (r.timedOut ? "no answer in time" : "failed");

/**
 * xcrun, the selected Xcode, simctl and AXe, as the iOS Simulator driver's connect-time probe
 * sees them (drivers/ios-simulator/probe.ts): where AXe was found and its version, the Xcode
 * version and whether that AXe supports it, and a real describe-ui on each booted iPhone or iPad,
 * each with its fix. They run on macOS, or wherever DEVICERAIL_XCRUN_PATH names an xcrun (the
 * tests' fake one).
 */
export async function iosChecks(config: Config, env: Env): Promise<Check[]> {
  if (process.platform !== "darwin" && !config.xcrunPath) return [check("iOS simulator tools", "skip", "not macOS")];
  if (config.ios === "off")
    return [check("iOS simulator tools", "skip", "DEVICERAIL_IOS=off: iOS Simulators are not used")];
  const missing = config.ios === "required" ? "fail" : "warn";
  const checks: Check[] = [];
  const xcrun = config.xcrunPath ?? Bun.which("xcrun", { PATH: env.PATH ?? "" });
  if (!xcrun)
    return [
      check(
        "xcrun",
        missing,
        "xcrun not found",
        "install Xcode from the App Store and run it once, or set DEVICERAIL_XCRUN_PATH",
      ),
    ];
  checks.push(check("xcrun", "ok", xcrun));
  const notSelected = (r: Ran) => XCODE_NOT_SELECTED.test(r.stderr);
  const selectFix = `the Command Line Tools are selected instead of Xcode: ${SELECT_XCODE}`;

  const xb = runSync([xcrun, "xcodebuild", "-version"], env, 10_000);
  const xcode = xb.ok ? parseXcodeVersion(xb.stdout) : null;
  if (xcode) checks.push(check("Xcode", "ok", `Xcode ${xcode.version}${xcode.build ? ` (${xcode.build})` : ""}`));
  else if (notSelected(xb)) checks.push(check("Xcode", missing, firstLine(xb.stderr), selectFix));
  else
    checks.push(
      check(
        "Xcode",
        "warn",
        `xcodebuild -version: ${xb.ok ? `unexpected output "${firstLine(xb.stdout)}"` : said(xb)}`,
        "install Xcode from the App Store and run it once",
      ),
    );

  const list = runSync([xcrun, "simctl", "list", "devices", "--json"], env, 15_000);
  let booted: { udid: string; name: string }[] = [];
  if (list.ok) {
    try {
      booted = parseDeviceList(list.stdout).filter((d) => d.isAvailable && d.state === "Booted" && isIosSimulator(d));
      checks.push(
        check(
          "simctl",
          "ok",
          booted.length
            ? `booted: ${booted.map((d) => d.name).join(", ")}`
            : "answers; no iPhone or iPad Simulator is booted",
        ),
      );
    } catch (e) {
      checks.push(
        check(
          "simctl",
          "warn",
          `simctl list output is not understood: ${(e as Error).message}`,
          "report it with the output of xcrun simctl list devices --json",
        ),
      );
    }
  } else
    checks.push(
      check(
        "simctl",
        missing,
        `xcrun simctl: ${firstLine(list.stderr) || said(list)}`,
        notSelected(list) ? selectFix : "install Xcode from the App Store and run it once",
      ),
    );

  const { found, tried } = locateAxe({ axePath: config.axePath, pathEnv: env.PATH ?? "" });
  if (!found) {
    checks.push(
      check(
        "AXe",
        "warn",
        `not found (looked in ${tried.join(", ")}): iOS Simulators are screenshot-only`,
        INSTALL_AXE,
      ),
    );
    return checks;
  }
  const where = `${found.path} (${found.via === "PATH" ? "on PATH" : found.via === "install place" ? "an install place outside PATH" : "DEVICERAIL_AXE_PATH"})`;
  const v = runSync([found.path, "--version"], env, 5_000);
  const version = v.ok ? parseAxeVersion(v.stdout) : null;
  const min = MIN_AXE_VERSION.join(".");
  if (!version) {
    checks.push(
      check(
        "AXe",
        "warn",
        `${where}: --version ${v.ok ? `printed "${firstLine(v.stdout)}", not a release version` : `failed: ${said(v)}`}`,
        INSTALL_AXE,
      ),
    );
    return checks;
  }
  const axe = version.join(".");
  if (!atLeast(version, MIN_AXE_VERSION)) {
    checks.push(
      check(
        "AXe",
        "warn",
        `${where}: version ${axe}, older than ${min} (the first with --tap-style and orientation-aware taps)`,
        "upgrade AXe: brew upgrade axe",
      ),
    );
    return checks;
  }
  checks.push(check("AXe", "ok", `${where}: version ${axe}`));
  if (xcode) {
    const problem = axeXcodeProblem(version, xcode.major);
    checks.push(
      problem
        ? check("AXe and Xcode", "warn", `AXe ${axe} with Xcode ${xcode.version}: unsupported`, problem)
        : check("AXe and Xcode", "ok", `AXe ${axe} with Xcode ${xcode.version}`),
    );
    if (problem) return checks;
  }
  for (const d of booted) {
    const r = runSync([found.path, "describe-ui", "--udid", d.udid], env, 10_000);
    if (r.ok) checks.push(check(`AXe on ${d.name}`, "ok", "describe-ui answers"));
    else if (r.timedOut)
      checks.push(
        check(
          `AXe on ${d.name}`,
          "warn",
          "describe-ui did not answer within 10 s",
          "open the simulator in Simulator.app and run devicerail doctor again",
        ),
      );
    else {
      const why = treeFailure(said(r), { axeVersion: axe, xcodeVersion: xcode?.version ?? null });
      checks.push(
        check(
          `AXe on ${d.name}`,
          "warn",
          `describe-ui failed (${why.platformCode}): ${said(r)}`,
          why.error.data.message,
        ),
      );
    }
  }
  return checks;
}

/** Opens the data directory as the daemon does: private folder, writable, database lock free. */
export function dataDirCheck(env: Env): Check {
  const paths = resolveDataPaths(env, process.platform, homedir(), process.cwd());
  const name = "data directory";
  const other = "or set DEVICERAIL_DATA_DIR to another folder";
  try {
    ensurePrivateDir(paths.dataDir);
    const probe = join(paths.dataDir, `.doctor-${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe);
  } catch (e) {
    const why = e instanceof DataDirError ? e.message : `${paths.dataDir} is not writable: ${(e as Error).message}`;
    return check(name, "fail", why, `fix the folder's owner or permissions, ${other}`);
  }
  try {
    openDatabase(paths.databasePath).raw.close();
  } catch (e) {
    if (e instanceof DatabaseLockedError && /another devicerail daemon/.test(e.message)) {
      const record = readRecord(paths.dataDir);
      if (record && isAlive(record.pid) && !record.stdio)
        return check(
          name,
          "ok",
          `${paths.dataDir}: served by the devicerail daemon (pid ${record.pid}${record.version ? `, version ${record.version}` : ""})`,
        );
      return check(
        name,
        "warn",
        `${paths.dataDir}: in use by a devicerail daemon that commands cannot reach (${record && isAlive(record.pid) ? `pid ${record.pid}, serving stdio only` : "serve on stdio?"})`,
        `commands attach to a daemon that serves a socket: stop that one (devicerail daemon start starts one), ${other}`,
      );
    }
    if (e instanceof DatabaseLockedError) return check(name, "fail", e.message, `move the database away, ${other}`);
    throw e;
  }
  return check(name, "ok", `${paths.dataDir}: writable, lock free`);
}

/** DEVICERAIL_RPC_LISTEN must be a loopback address that can be bound now. */
export async function listenCheck(config: Config): Promise<Check> {
  const name = "listen address";
  if (!config.listen) return check(name, "skip", "DEVICERAIL_RPC_LISTEN is not set (serve uses stdio)");
  const text = endpointText(config.listen);
  try {
    checkListenAddress(config.listen.host, config.listen.port);
  } catch (e) {
    if (e instanceof ListenAddressError)
      return check(name, "fail", `${text}: ${e.message}`, "use a loopback address such as 127.0.0.1:7777");
    throw e;
  }
  const { host, port } = config.listen;
  const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const s = createServer();
    s.once("error", (e) => resolve(e));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(null)));
  });
  if (!error) return check(name, "ok", `${text} can be bound`);
  const inUse = error.code === "EADDRINUSE";
  return check(
    name,
    "fail",
    `${text} cannot be bound: ${error.code ?? error.message}${inUse ? " (already in use, perhaps by a running daemon)" : ""}`,
    inUse
      ? "stop what listens there, or choose another port in DEVICERAIL_RPC_LISTEN"
      : "choose another address in DEVICERAIL_RPC_LISTEN",
  );
}

/**
 * Who else can reach the data directory's daemon: its TCP port is probed with no credential (as
 * another local user would), and the Unix socket's protection on this platform is named.
 */
export async function accessChecks(env: Env): Promise<Check[]> {
  const { dataDir } = resolveDataPaths(env, process.platform, homedir(), process.cwd());
  const checks: Check[] = [];
  const record = readRecord(dataDir);
  const running = record && isAlive(record.pid) && !record.stdio ? record : null;
  if (!running || running.port === undefined)
    checks.push(
      check(
        "daemon TCP port",
        "skip",
        running ? "the running daemon has no TCP listener" : "no devicerail daemon runs on this data directory",
      ),
    );
  else {
    const where = endpointText({ host: running.host ?? "127.0.0.1", port: running.port });
    checks.push(
      (await answersWithoutCredential({ host: running.host ?? "127.0.0.1", port: running.port }))
        ? check(
            "daemon TCP port",
            "warn",
            `the daemon (pid ${running.pid}) serves ${where} with no token: every local user of this machine can list, export and delete its Sessions and drive its devices`,
            "restart it with a token: `devicerail daemon stop` (commands then start one that requires <data dir>/daemon.token), or set DEVICERAIL_TOKEN for serve --listen",
          )
        : check(
            "daemon TCP port",
            "ok",
            `${where} requires a token${running.tokenFile ? ` (${running.tokenFile}, readable by you only)` : " (DEVICERAIL_TOKEN)"}`,
          ),
    );
  }
  if (process.platform === "win32") checks.push(check("daemon socket", "skip", "Windows: the daemon serves TCP only"));
  else if (peerCredentialsSupported())
    checks.push(
      check(
        "daemon socket",
        "ok",
        `the Unix socket admits your uid (${process.getuid?.()}) and root only: the peer's uid is checked on every connection, besides the 0600 socket in a 0700 folder`,
      ),
    );
  else
    checks.push(
      check(
        "daemon socket",
        "warn",
        `${process.platform} reports no peer credentials to devicerail: only the socket's file modes (0600 in a 0700 folder) keep other users out`,
        "keep the data directory 0700 and do not loosen the socket's mode",
      ),
    );
  return checks;
}
