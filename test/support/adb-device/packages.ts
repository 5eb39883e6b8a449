/**
 * The simulated package manager for APKs pushed from the host: `pm install` (a file on the phone,
 * or streamed on stdin with `-S <size>` as `adb install` sends it), `pm uninstall`, `pm grant` /
 * `revoke`, `dumpsys package <pkg>`, `appops set` and `cmd notification allow_listener`. An APK is
 * known by the SHA-256 of its bytes (apk-catalog.ts); tests may register more with `registerApk`.
 * Texts are those of AOSP frameworks/base services/core/java/com/android/server/pm/
 * PackageManagerShellCommand.java unless a comment says otherwise.
 */
import { type ApkInfo, PINNED_APKS, sha256Hex } from "./apk-catalog.ts";
import { type CommandIo, concat } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import type { FakePhone } from "./fake-phone.ts";
import { plainAppScenario } from "./system-apps.ts";

export interface InstalledPackage {
  apk: ApkInfo;
  /** Permissions granted now (runtime ones by `-g` or `pm grant`, development ones by `pm grant`). */
  granted: Set<string>;
}

/** The package manager's state, as `phone.packages`. */
export class PackageState {
  /** Packages installed through `pm install` (the stock apps of the phone are not here). */
  readonly installed = new Map<string, InstalledPackage>();
  /** APK SHA-256 → what it installs. */
  readonly known = new Map<string, ApkInfo>(Object.entries(PINNED_APKS));
  /** Package → app op (e.g. `android:mock_location`) → mode (`allow`, `deny`, …) set through `appops set`. */
  readonly appops = new Map<string, Map<string, string>>();
  /** FakePhoneOptions.installRefused: every install fails as on MIUI without "Install via USB". */
  installRefused = false;
  /** PackageInstaller session ids, which name the staging directory in parse errors. */
  private nextSession = 1013252374;

  /** Makes the package manager recognise an APK (its bytes, or their SHA-256). */
  registerApk(apk: Uint8Array | string, info: ApkInfo): void {
    this.known.set(typeof apk === "string" ? apk.toLowerCase() : sha256Hex(apk), info);
  }

  session(): number {
    return this.nextSession++;
  }

  appop(pkg: string, op: string): string | undefined {
    return this.appops.get(pkg)?.get(op);
  }
}

/** `Exception occurred while executing '<cmd>':` and the exception line (its stack frames are left out), exit 255. */
function shellException(io: CommandIo, cmd: string, exception: string): number {
  // BasicShellCommandHandler.exec prints this header and the stack trace, and returns -1.
  io.err(`Exception occurred while executing '${cmd}':\n${exception}\n`);
  return 255;
}

/** `size` bytes from stdin, or null when it ends first. */
async function readExactly(io: CommandIo, size: number): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let got = 0;
  while (got < size) {
    const chunk = await io.stdin.read();
    if (!chunk) return null;
    parts.push(chunk);
    got += chunk.length;
  }
  return got === size ? concat(parts) : concat(parts).subarray(0, size);
}

const INSTALL_FLAGS = new Set([
  "-r",
  "-g",
  "-t",
  "-d",
  "-f",
  "--dont-kill",
  "--force-queryable",
  "--bypass-low-target-sdk-block",
]);

/** `pm install [flags] [<path>]`: the APK from the phone's files or, with `-S <size>`, from stdin. */
async function install(phone: FakePhone, argv: readonly string[], args: string[], io: CommandIo): Promise<number> {
  const pm = phone.packages;
  let size: number | null = null;
  let grant = false;
  let path: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-S") size = Number(args[++i]);
    else if (a === "--user" || a === "-i" || a === "--install-reason") i++;
    else if (a === "-g") grant = true;
    else if (INSTALL_FLAGS.has(a)) continue;
    else if (!a.startsWith("-") || a === "-") path = a;
    else return unsupported(phone, argv, io);
  }
  let bytes: Uint8Array | null;
  if (size !== null && (path === undefined || path === "-")) {
    // Streamed install: exactly <size> bytes arrive on stdin (adb's install_app_streamed), and
    // the host keeps the stream open for the answer, so reading stops at <size>, not at end of input.
    bytes = await readExactly(io, size);
  } else if (path !== undefined) {
    bytes = phone.files.get(path);
    if (!bytes) {
      // PackageManagerShellCommand (setParamsSize/doWriteSplit): the error line, then an IllegalArgumentException.
      io.err(`Error: Can't open file: ${path}\n`);
      return shellException(io, "install", `java.lang.IllegalArgumentException: Error: Can't open file: ${path}`);
    }
  } else return unsupported(phone, argv, io);
  // PackageManagerShellCommand.doCommitSession: `Failure [<status message>]` on stdout, exit 1.
  const failure = (message: string) => (io.out(`Failure [${message}]\n`), 1);
  if (pm.installRefused)
    // MIUI/HyperOS with "Install via USB" off: rom1v/sndcpy#64, RikkaApps/Shizuku#252 (`pm install-commit`, exit code 1).
    return failure("INSTALL_FAILED_USER_RESTRICTED: Install canceled by user");
  const apk = bytes && pm.known.get(sha256Hex(bytes));
  if (!apk) {
    // Not an APK the fake knows (or a short stream): the parse error of a file that is no zip
    // (satishpatnayak/AndroGoat#4 on API 35, welfvh/daylight-mirror#7, iamjosephmj/flinger#31 on Android 11).
    const base = `/data/app/vmdl${pm.session()}.tmp/base.apk`;
    return failure(`INSTALL_PARSE_FAILED_NOT_APK: Failed to parse ${base}: Failed to load asset path ${base}`);
  }
  installApk(phone, apk, grant);
  io.out("Success\n");
  return 0;
}

/** Installs (or replaces, keeping grants as an update does) the package an APK holds. */
export function installApk(phone: FakePhone, apk: ApkInfo, grantRuntime: boolean): void {
  const old = phone.packages.installed.get(apk.package);
  if (old) phone.forceStop(apk.package);
  const granted = new Set(old?.granted);
  if (grantRuntime) for (const p of apk.runtimePermissions) granted.add(p);
  phone.packages.installed.set(apk.package, { apk, granted });
  const info = {
    package: apk.package,
    activity: apk.launcher ?? `${apk.package}.NoActivity`,
    label: apk.label,
    launcher: apk.launcher !== undefined,
  };
  const scenario = { ...plainAppScenario(info), extraLaunchers: apk.extraLaunchers };
  phone.install(scenario, info);
}

/** `pm uninstall [-k] [--user <id>] <pkg>`. */
function uninstall(phone: FakePhone, argv: readonly string[], args: string[], io: CommandIo): number {
  let user: string | null = null;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--user") user = args[++i] ?? "";
    else if (a === "-k") continue;
    else if (a.startsWith("-")) return unsupported(phone, argv, io);
    else rest.push(a);
  }
  const [pkg] = rest;
  if (!pkg || rest.length > 1) return unsupported(phone, argv, io);
  if (!phone.packages.installed.has(pkg)) {
    // With --user the package must be installed for that user; without it the uninstall goes to
    // every user and the installer's status is DELETE_FAILED_INTERNAL_ERROR, also for a stock app
    // (runUninstall; Universal-Debloater-Alliance/uad-ng#263, Tom4tot/Galaxy-S24-Debloat-Script#4).
    io.out(user !== null ? `Failure [not installed for ${user}]\n` : "Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
    return 1;
  }
  phone.forceStop(pkg);
  phone.packages.installed.delete(pkg);
  phone.packages.appops.delete(pkg);
  setListeners(
    phone,
    listeners(phone).filter((c) => !c.startsWith(`${pkg}/`)),
  );
  phone.apps.delete(pkg);
  if (phone.foreground === pkg) phone.foreground = "com.android.launcher3";
  phone.ime.packageRemoved(pkg);
  io.out("Success\n");
  return 0;
}

/** `pm grant|revoke <pkg> <perm>`: silent on success. */
function grantOrRevoke(phone: FakePhone, argv: readonly string[], args: string[], io: CommandIo): number {
  const verb = argv[1] as string;
  const [pkg, perm] = args.filter((a, i) => !a.startsWith("--user") && args[i - 1] !== "--user");
  if (!pkg || !perm) return unsupported(phone, argv, io);
  const installed = phone.packages.installed.get(pkg);
  if (!installed) {
    if (phone.apps.has(pkg)) return unsupported(phone, argv, io);
    return shellException(io, verb, `java.lang.IllegalArgumentException: Unknown package: ${pkg}`);
  }
  const { apk } = installed;
  if (![...apk.runtimePermissions, ...apk.developmentPermissions, ...apk.otherPermissions].includes(perm))
    // PermissionManagerService (AOSP, stored public copy index id 3179826) throws these; `pm` prints
    // them on stderr with exit status 255, as public adb helpers expect (stored code index id 1245127271).
    // The "not a changeable permission type" text is quoted from public test fixtures (index id
    // 58308387657) and AOSP PermissionManagerService; "Unknown package:" likewise (same fixture).
    return shellException(io, verb, `java.lang.SecurityException: Package ${pkg} has not requested permission ${perm}`);
  if (!apk.runtimePermissions.includes(perm) && !apk.developmentPermissions.includes(perm))
    return shellException(
      io,
      verb,
      `java.lang.SecurityException: Permission ${perm} requested by ${pkg} is not a changeable permission type`,
    );
  if (verb === "grant") installed.granted.add(perm);
  else installed.granted.delete(perm);
  return 0;
}

/** The `pm` verbs this file simulates, or null for the others (commands-activity.ts handles those). */
export function packageCommand(
  phone: FakePhone,
  argv: readonly string[],
  io: CommandIo,
): Promise<number> | number | null {
  const [, verb, ...args] = argv;
  if (verb === "install") return install(phone, argv, args, io);
  if (verb === "uninstall") return uninstall(phone, argv, args, io);
  if (verb === "grant" || verb === "revoke") return grantOrRevoke(phone, argv, args, io);
  return null;
}

/**
 * `dumpsys package <pkg>`: the `Packages:` section's lines appium-adb reads (getPackageInfo:
 * `Package [<pkg>] (…):`, `versionCode=`, `versionName=`), in the layout of AOSP
 * Settings.dumpPackageLPr: `versionCode=<n> minSdk=<n> targetSdk=<n>` (Android 11 added
 * ` minExtensionVersions=[]` to that line), then `versionName=`. The many other lines are left out.
 * A package the fake does not install through `pm` prints nothing (a real phone prints the other
 * sections, without any `Package [` line).
 */
export function dumpsysPackage(phone: FakePhone, pkg: string, io: CommandIo): number {
  const p = phone.packages.installed.get(pkg);
  if (!p) return 0;
  const sdk = Number(phone.props.get("ro.build.version.sdk") ?? 29);
  const hash = (Bun.hash.crc32(`ps${pkg}`) >>> 0).toString(16).padStart(8, "0").slice(0, 7);
  const ext = sdk >= 30 ? " minExtensionVersions=[]" : "";
  const runtime = [...p.granted].sort().map((perm) => `        ${perm}: granted=true\n`);
  io.out(
    `Packages:\n  Package [${pkg}] (${hash}):\n    codePath=/data/app/${pkg}-1\n` +
      `    versionCode=${p.apk.versionCode} minSdk=${p.apk.minSdk} targetSdk=${p.apk.targetSdk}${ext}\n` +
      `    versionName=${p.apk.versionName ?? "null"}\n` +
      `    User 0: installed=true\n      runtime permissions:\n${runtime.join("")}`,
  );
  return 0;
}

/** `appops set <pkg> <op> <mode>` (silent, exit 0), as README:206-208 of io.appium.settings runs it. */
export function appopsCommand(phone: FakePhone, argv: readonly string[], io: CommandIo): number {
  const args = argv.slice(1).filter((a, i, all) => a !== "--user" && all[i - 1] !== "--user");
  const [verb, pkg, op, mode] = args;
  if (verb !== "set" || !pkg || !op || !mode || args.length !== 4) return unsupported(phone, argv, io);
  if (!phone.apps.has(pkg))
    return shellException(io, "set", `java.lang.IllegalArgumentException: Unknown package: ${pkg}`);
  const ops = phone.packages.appops.get(pkg) ?? new Map<string, string>();
  ops.set(op, mode);
  phone.packages.appops.set(pkg, ops);
  return 0;
}

const LISTENERS = "secure/enabled_notification_listeners";
const listeners = (phone: FakePhone) => (phone.settings.get(LISTENERS) ?? "").split(":").filter(Boolean);
const setListeners = (phone: FakePhone, list: string[]) => phone.settings.set(LISTENERS, list.join(":"));

/**
 * `cmd notification allow_listener|disallow_listener <component>`: silent, exit 0 (NotificationManagerService's
 * shell command, run by io.appium.settings build/lib/commands/notifications.js adjustNotificationsPermissions).
 * The allowed components are kept, flattened (`pkg/pkg.Cls`), in the secure setting
 * `enabled_notification_listeners` that the app's NotificationsReceiver reads.
 */
export function notificationCommand(phone: FakePhone, argv: readonly string[], io: CommandIo): number {
  const [, , verb, component] = argv;
  if ((verb !== "allow_listener" && verb !== "disallow_listener") || !component?.includes("/") || argv.length > 4)
    return unsupported(phone, argv, io);
  const [pkg, cls = ""] = component.split("/", 2) as [string, string?];
  const flat = `${pkg}/${cls.startsWith(".") ? `${pkg}${cls}` : cls}`;
  const others = listeners(phone).filter((c) => c !== flat);
  setListeners(phone, verb === "allow_listener" ? [...others, flat] : others);
  return 0;
}
