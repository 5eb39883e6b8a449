/** Activity and package commands of the simulated phone: am (start, force-stop, broadcast), pm, monkey and dumpsys (window, activity, battery). */
import type { CommandFn, CommandIo } from "./command-io.ts";
import { amInstrument } from "./commands-instrument.ts";
import { unsupported } from "./commands-shell.ts";
import { surfaceFlingerDisplayIds } from "./displays.ts";
import { dumpsysInput } from "./rotation.ts";
import type { FakePhone } from "./fake-phone.ts";
import { BROWSER } from "./system-apps.ts";
import { dumpsysPackage, packageCommand } from "./packages.ts";
import { dumpsysServices, locationServiceCommand, settingsBroadcast } from "./appium-settings.ts";

const LAUNCHER_CATEGORY = "android.intent.category.LAUNCHER";

interface Intent {
  action?: string;
  data?: string;
  categories: string[];
  component?: string;
  package?: string;
  /** `--es`/`-e` (and the other typed) extras, by name, as strings. */
  extras: Record<string, string>;
}

/** Uri.toSafeString: web URLs keep only scheme, host and port, as am's "Starting:" line shows them. */
function safeUri(uri: string): string {
  const m = /^(https?|ftp|rtsp):\/\/([^/:?#]*)(:\d+)?/i.exec(uri);
  return m ? `${m[1]}://${m[2]}${m[3] ?? ""}/...` : uri;
}

function shortString(i: Intent): string {
  const parts = [
    i.action && `act=${i.action}`,
    i.categories.length ? `cat=[${i.categories.join(",")}]` : undefined,
    i.data && `dat=${safeUri(i.data)}`,
    i.package && `pkg=${i.package}`,
    i.component && `cmp=${shortComponent(...splitComponent(i.component))}`,
    // Intent.toShortString with extras: true.
    Object.keys(i.extras).length ? "(has extras)" : undefined,
  ].filter(Boolean);
  return `Intent { ${parts.join(" ")} }`;
}

/** `pkg/.Act` or `pkg/full.Act` → [pkg, fully qualified activity]. */
function splitComponent(c: string): [string, string] {
  const [pkg, cls = ""] = c.split("/", 2) as [string, string?];
  return [pkg, cls.startsWith(".") ? `${pkg}${cls}` : cls];
}

/** ComponentName.toShortString: the activity loses its package prefix. */
export function shortComponent(pkg: string, activity: string): string {
  return `${pkg}/${activity.startsWith(`${pkg}.`) ? activity.slice(pkg.length) : activity}`;
}

/** Parses am's intent arguments; returns null (after reporting) for options the fake does not know. */
function parseIntent(
  phone: FakePhone,
  argv: readonly string[],
  args: string[],
  io: CommandIo,
): (Intent & { wait: boolean; stop: boolean }) | null {
  const intent: Intent & { wait: boolean; stop: boolean } = { categories: [], extras: {}, wait: false, stop: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = () => args[++i] ?? "";
    if (a === "-a") intent.action = next();
    else if (a === "-d") intent.data = next();
    else if (a === "-c") intent.categories.push(next());
    else if (a === "-n") intent.component = next();
    else if (a === "-p") intent.package = next();
    else if (a === "-W") intent.wait = true;
    else if (a === "-S") intent.stop = true;
    else if (a === "-f" || a === "--user") next();
    else if (/^--(es|ei|ez|el|ef|eu)$/.test(a) || a === "-e") {
      const name = next();
      intent.extras[name] = next();
    } else if (a.startsWith("--activity-") || a === "-D" || a === "-N") continue;
    else if (!a.startsWith("-") && a.includes("/")) intent.component = a;
    else if (!a.startsWith("-") && a.includes(":")) intent.data = a;
    else if (!a.startsWith("-")) intent.package = a;
    else return (unsupported(phone, argv, io), null);
  }
  return intent;
}

export function activityCommands(phone: FakePhone): [string, CommandFn][] {
  /** The installed app and activity an intent starts, or null when nothing resolves it. */
  const resolve = (i: Intent): { pkg: string; activity: string } | null => {
    if (i.component) {
      const [pkg, activity] = splitComponent(i.component);
      const app = phone.apps.get(pkg);
      const known =
        app &&
        (app.activity === activity ||
          Object.values(app.scenario.activities ?? {}).includes(activity) ||
          (app.scenario.extraLaunchers ?? []).includes(activity));
      return known ? { pkg, activity } : null;
    }
    if (i.action === "android.intent.action.VIEW" && i.data) {
      for (const app of phone.apps.values()) {
        if (i.package && app.package !== i.package) continue;
        if (app.scenario.onUrl?.(i.data, phone.runtime(app.package).context()))
          return { pkg: app.package, activity: phone.runtime(app.package).activity };
      }
      const browser = phone.apps.get(BROWSER.package);
      if (/^https?:/i.test(i.data) && browser && (!i.package || i.package === browser.package)) {
        browser.url = i.data;
        return { pkg: browser.package, activity: browser.activity };
      }
    }
    if (i.package && i.categories.includes(LAUNCHER_CATEGORY)) {
      const app = phone.apps.get(i.package);
      return app && app.launcher !== false ? { pkg: app.package, activity: app.activity } : null;
    }
    return null;
  };

  const amStart = (argv: readonly string[], args: string[], io: CommandIo): number => {
    const intent = parseIntent(phone, argv, args, io);
    if (!intent) return 1;
    io.out(`Starting: ${shortString(intent)}\n`);
    // With -W, am writes its warnings and errors to stdout, as part of the report.
    const report = intent.wait ? io.out : io.err;
    const target = resolve(intent);
    if (!target) {
      if (intent.component) {
        const [pkg, activity] = splitComponent(intent.component);
        report(`Error type 3\nError: Activity class {${pkg}/${activity}} does not exist.\n`);
      } else report(`Error: Activity not started, unable to resolve ${shortString(intent)}\n`);
      return 1;
    }
    if (intent.stop) phone.forceStop(target.pkg);
    const running = phone.apps.get(target.pkg)?.runtime !== null;
    const inFront = running && phone.foreground === target.pkg;
    // A running app's task is reused (intent data aside, which the app handles itself).
    if (running && !intent.data)
      report("Warning: Activity not started, its current task has been brought to the front\n");
    phone.launch(target.pkg);
    if (intent.wait)
      io.out(waitReport(shortComponent(target.pkg, target.activity), running ? (inFront ? null : "HOT") : "COLD"));
    return 0;
  };

  /**
   * The -W report: Android 10 added LaunchState and dropped ThisTime; TotalTime is left out when
   * nothing new was drawn (`state` null: the app was already in front).
   */
  const waitReport = (activity: string, state: "COLD" | "HOT" | null): string => {
    const timedOut = phone.faults.launchTimeouts > 0;
    if (timedOut) phone.faults.launchTimeouts--;
    const modern = Number(phone.props.get("ro.build.version.sdk") ?? 29) >= 29;
    const lines = [`Status: ${timedOut ? "timeout" : "ok"}`];
    if (modern) lines.push(`LaunchState: ${timedOut || !state ? "UNKNOWN (0)" : state}`);
    lines.push(`Activity: ${activity}`);
    if (!timedOut && state) lines.push(...(modern ? [] : ["ThisTime: 0"]), "TotalTime: 0");
    lines.push(`WaitTime: ${timedOut ? 10_000 : 0}`, "Complete");
    return `${lines.join("\n")}\n`;
  };

  /** `pm` (and `cmd package`): listing packages, their paths, and resolving an activity. */
  const pm: CommandFn = (argv, io) => {
    const installs = packageCommand(phone, argv, io);
    if (installs !== null) return installs;
    const [, verb, what, ...rest] = argv;
    if (verb === "list" && what === "packages") {
      const filter = rest.find((a) => !a.startsWith("-")) ?? "";
      io.out(
        [...phone.apps.keys()]
          .filter((p) => p.includes(filter))
          .sort()
          .map((p) => `package:${p}\n`)
          .join(""),
      );
      return 0;
    }
    if (verb === "list" && what === "features") return 0;
    if (verb === "path" && what) return phone.apps.has(what) ? (io.out(`package:/data/app/${what}/base.apk\n`), 0) : 1;
    if (verb === "resolve-activity") return resolveActivity(argv, argv.slice(2), io);
    if (verb === "query-activities") return queryActivities(argv, argv.slice(2), io);
    return unsupported(phone, argv, io);
  };

  /**
   * `resolve-activity --brief` for a component or a package's LAUNCHER activity: a ResolveInfo
   * summary line and the short component, or "No activity found"; exit 0 either way.
   */
  const resolveActivity = (argv: readonly string[], args: string[], io: CommandIo): number => {
    const intent = parseIntent(
      phone,
      argv,
      args.filter((a) => a !== "--brief"),
      io,
    );
    if (!intent) return 1;
    if (
      !args.includes("--brief") ||
      intent.data ||
      intent.wait ||
      intent.stop ||
      !(intent.component || intent.categories.includes(LAUNCHER_CATEGORY))
    )
      return unsupported(phone, argv, io);
    const target = resolve(intent);
    if (target && !intent.component && (phone.apps.get(target.pkg)?.scenario.extraLaunchers?.length ?? 0) > 0) {
      // Several LAUNCHER activities and no default: the package manager answers with its chooser,
      // whose ResolveInfo has priority, preferredOrder and match 0 (AOSP PackageManagerService
      // mResolveInfo) and the defaults specificIndex -1, isDefault false (ResolveInfo), printed by
      // PackageManagerShellCommand.printResolveInfo.
      io.out(
        "priority=0 preferredOrder=0 match=0x0 specificIndex=-1 isDefault=false\nandroid/com.android.internal.app.ResolverActivity\n",
      );
      return 0;
    }
    io.out(
      target
        ? `priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n${shortComponent(target.pkg, target.activity)}\n`
        : "No activity found\n",
    );
    return 0;
  };

  /**
   * `query-activities --components` for a package's LAUNCHER activities: one
   * ComponentName.flattenToShortString line per activity, or "No activities found"; exit 0 either
   * way (AOSP PackageManagerShellCommand.runQueryIntentActivities with mComponents). Without
   * --components real phones print a ResolveInfo dump the fake does not simulate.
   */
  const queryActivities = (argv: readonly string[], args: string[], io: CommandIo): number => {
    const intent = parseIntent(
      phone,
      argv,
      args.filter((a) => a !== "--brief" && a !== "--components"),
      io,
    );
    if (!intent) return 1;
    if (
      !args.includes("--components") ||
      !intent.package ||
      intent.component ||
      intent.data ||
      intent.wait ||
      intent.stop ||
      !intent.categories.includes(LAUNCHER_CATEGORY)
    )
      return unsupported(phone, argv, io);
    const app = phone.apps.get(intent.package);
    const activities = app && app.launcher !== false ? [app.activity, ...(app.scenario.extraLaunchers ?? [])] : [];
    io.out(
      activities.length
        ? activities.map((a) => `${shortComponent(intent.package as string, a)}\n`).join("")
        : "No activities found\n",
    );
    return 0;
  };

  const am: CommandFn = (argv, io) => {
    const [, verb, ...rest] = argv;
    if (verb === "start" || verb === "start-activity") return amStart(argv, rest, io);
    if (verb === "instrument") return amInstrument(phone, argv, io);
    if (verb === "force-stop" && rest[0]) {
      phone.forceStop(rest.at(-1) as string);
      return 0;
    }
    if (verb === "broadcast") {
      const intent = parseIntent(phone, argv, rest, io);
      if (!intent) return 1;
      io.out(`Broadcasting: ${shortString(intent)}\n`);
      const reply = settingsBroadcast(phone, intent);
      if (reply === "unsimulated") return unsupported(phone, argv, io);
      io.out(`Broadcast completed: result=${reply?.code ?? 0}${reply?.data != null ? `, data="${reply.data}"` : ""}\n`);
      return 0;
    }
    const service = { "start-foreground-service": "start", startservice: "start", "start-service": "start" }[
      verb ?? ""
    ];
    if (service || verb === "stopservice" || verb === "stop-service") {
      const intent = parseIntent(phone, argv, rest, io);
      if (!intent) return 1;
      const status = locationServiceCommand(phone, service ? "start" : "stop", intent, shortString(intent), io);
      if (status !== null) return status;
      if (intent.component && !phone.apps.has(splitComponent(intent.component)[0])) {
        io.out(`${service ? "Starting" : "Stopping"} service: ${shortString(intent)}\n`);
        if (service) return (io.err("Error: Not found; no service started.\n"), 255);
        return (io.err("Service not stopped: was not running.\n"), 255);
      }
      return unsupported(phone, argv, io);
    }
    return unsupported(phone, argv, io);
  };

  const monkey: CommandFn = (argv, io) => {
    const args = argv.slice(1);
    const pkg = args[args.indexOf("-p") + 1];
    const count = args.at(-1);
    if (!args.includes("-p") || !pkg || count !== "1") return unsupported(phone, argv, io);
    const data = args.flatMap((a, i) => (args[i - 1] === "-p" || args[i - 1] === "-c" ? [`data="${a}"\n`] : []));
    io.out(
      `${args.map((a) => `  bash arg: ${a}\n`).join("")}args: [${args.join(", ")}]\n${args.map((a) => ` arg: "${a}"\n`).join("")}${data.join("")}`,
    );
    const app = phone.apps.get(pkg);
    if (!app || app.launcher === false) {
      io.err("** No activities found to run, monkey aborted.\n");
      return 1;
    }
    phone.launch(pkg);
    io.out("Events injected: 1\n## Network stats: elapsed time=1ms (0ms mobile, 0ms wifi, 1ms not connected)\n");
    return 0;
  };

  /** Stable fake object hashes, so dumpsys output is reproducible. */
  const hash = (s: string) => (Bun.hash.crc32(s) >>> 0).toString(16).padStart(8, "0").slice(0, 7);

  const activityRecord = () => {
    const pkg = phone.foreground;
    const task = [...phone.apps.keys()].indexOf(pkg) + 10;
    return `ActivityRecord{${hash(`r${pkg}`)} u0 ${shortComponent(pkg, phone.focusedActivity)} t${task}}`;
  };

  /** `mCurrentFocus=` and `mFocusedApp=` lines of the app `pkg` showing `activity`. */
  const focusLines = (pkg: string, activity: string, record: string) => {
    const sdk = Number(phone.props.get("ro.build.version.sdk") ?? 29);
    // Android 11 dropped the AppWindowToken wrapper around the focused app's record.
    const focusedApp =
      sdk >= 30 ? record : `AppWindowToken{${hash(`a${pkg}`)} token=Token{${hash(`t${pkg}`)} ${record}}}`;
    return `  mCurrentFocus=Window{${hash(`w${pkg}`)} u0 ${pkg}/${activity}}\n  mFocusedApp=${focusedApp}\n`;
  };

  /**
   * The frozen state WindowManagerService saved at the last ANR (saveANRStateLocked), printed first
   * by a full `dumpsys window`. Lines as real phones print them: the header (WMS
   * dumpLastANRLocked, in decompiled services.jar smali of stored public code, index id
   * 38115606812); `ANR time:`, `Application at fault:` (ActivityRecord.stringName, which has no
   * closing brace) and `Display #0 currentFocus=… focusedApp=…` from a phone quoted in a public
   * note (index id 16463194085; its time string is reused as is); `Last ANR continued` followed by a
   * copy of the display contents with its own header and `mCurrentFocus=` / `mFocusedApp=`, as in a
   * bug report's dumpsys_window (index id 88347357) and an Android 14 measurement (index id
   * 70999472007). The frozen window list and the optional `Reason:` line are left out.
   */
  const lastAnrSection = (anr: { package: string; activity: string }) => {
    const task = [...phone.apps.keys()].indexOf(anr.package) + 10;
    const stringName = `ActivityRecord{${hash(`r${anr.package}`)} u0 ${shortComponent(anr.package, anr.activity)}`;
    const record = `${stringName} t${task}}`;
    const window = `Window{${hash(`w${anr.package}`)} u0 ${anr.package}/${anr.activity}}`;
    return [
      "WINDOW MANAGER LAST ANR (dumpsys window lastanr)",
      "  ANR time: 2025年4月7日 20:17:01",
      `  Application at fault: ${stringName}`,
      "",
      `  Display #0 currentFocus=${window} focusedApp=${record}`,
      "",
      "Last ANR continued",
      "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
      focusLines(anr.package, anr.activity, record),
    ].join("\n");
  };

  const dumpsys: CommandFn = (argv, io) => {
    const [, service, section] = argv;
    const sdk = Number(phone.props.get("ro.build.version.sdk") ?? 29);
    if (service === "window" && (section === undefined || section === "windows" || section === "w")) {
      const pkg = phone.foreground;
      // Only the full dump starts with the last ANR; a section argument prints that section alone.
      if (section === undefined && phone.lastAnr) io.out(`${lastAnrSection(phone.lastAnr)}\n`);
      io.out(
        `WINDOW MANAGER WINDOWS (dumpsys window windows)\n${focusLines(pkg, phone.focusedActivity, activityRecord())}`,
      );
      return 0;
    }
    if (service === "window" && (section === "displays" || section === "d")) {
      // Android 10 moved mCurrentFocus / mFocusedApp into the display contents (appium-adb
      // lib/tools/app-commands.ts dumpWindows: "With version 29, Android changed the dumpsys syntax").
      io.out(
        `WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n${sdk >= 29 ? focusLines(phone.foreground, phone.focusedActivity, activityRecord()) : ""}`,
      );
      return 0;
    }
    if (service === "input" && section === undefined) {
      const panel = phone.displays[0];
      io.out(
        dumpsysInput(sdk, phone.rotation, {
          width: phone.physical.width,
          height: phone.physical.height,
          displayId: panel?.physicalId ?? "0",
          port: panel?.port ?? 0,
        }),
      );
      return 0;
    }
    if (service === "SurfaceFlinger" && section === "--display-id") {
      io.out(surfaceFlingerDisplayIds(phone.displays));
      return 0;
    }
    if (service === "battery" && section === undefined) {
      // The battery service's AOSP lines, as in the real samples of fixtures/platform/android/dumpsys-battery (fewer of them).
      io.out(
        `Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  status: 2\n  health: 2\n  present: true\n  level: ${phone.battery}\n  scale: 100\n  technology: Li-ion\n`,
      );
      return 0;
    }
    if (service === "package" && section && argv.length === 3) return dumpsysPackage(phone, section, io);
    if (service === "activity" && (section === "services" || section === "s") && argv.length <= 4)
      return dumpsysServices(phone, argv[3], io);
    if (service === "activity" && (section === "activities" || section === "a")) {
      io.out(`ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n    mResumedActivity: ${activityRecord()}\n`);
      return 0;
    }
    return unsupported(phone, argv, io);
  };

  return [
    ["am", am],
    ["pm", pm],
    ["monkey", monkey],
    ["dumpsys", dumpsys],
  ];
}
