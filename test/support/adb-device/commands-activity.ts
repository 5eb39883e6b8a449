/** Activity commands of the simulated phone: am (start, force-stop, broadcast), monkey and dumpsys. */
import type { CommandFn, CommandIo } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import type { FakePhone } from "./fake-phone.ts";
import { BROWSER } from "./system-apps.ts";

interface Intent {
  action?: string;
  data?: string;
  categories: string[];
  component?: string;
  package?: string;
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
function parseIntent(phone: FakePhone, argv: readonly string[], args: string[], io: CommandIo): (Intent & { wait: boolean; stop: boolean }) | null {
  const intent: Intent & { wait: boolean; stop: boolean } = { categories: [], wait: false, stop: false };
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
    else if (/^--(es|ei|ez|el|ef|eu)$/.test(a) || a === "-e") (next(), next());
    else if (a.startsWith("--activity-") || a === "-D" || a === "-N") continue;
    else if (!a.startsWith("-") && a.includes("/")) intent.component = a;
    else if (!a.startsWith("-") && a.includes(":")) intent.data = a;
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
      const known = app && (app.activity === activity || Object.values(app.scenario.activities ?? {}).includes(activity));
      return known ? { pkg, activity } : null;
    }
    if (i.action === "android.intent.action.VIEW" && i.data) {
      for (const app of phone.apps.values()) {
        if (i.package && app.package !== i.package) continue;
        if (app.scenario.onUrl?.(i.data, phone.runtime(app.package).context())) return { pkg: app.package, activity: phone.runtime(app.package).activity };
      }
      const browser = phone.apps.get(BROWSER.package);
      if (/^https?:/i.test(i.data) && browser && (!i.package || i.package === browser.package)) {
        browser.url = i.data;
        return { pkg: browser.package, activity: browser.activity };
      }
    }
    if (i.package && i.categories.includes("android.intent.category.LAUNCHER")) {
      const app = phone.apps.get(i.package);
      return app ? { pkg: app.package, activity: app.activity } : null;
    }
    return null;
  };

  const amStart = (argv: readonly string[], args: string[], io: CommandIo): number => {
    const intent = parseIntent(phone, argv, args, io);
    if (!intent) return 1;
    io.out(`Starting: ${shortString(intent)}\n`);
    const target = resolve(intent);
    if (!target) {
      if (intent.component) {
        const [pkg, activity] = splitComponent(intent.component);
        io.err(`Error type 3\nError: Activity class {${pkg}/${activity}} does not exist.\n`);
      } else io.err(`Error: Activity not started, unable to resolve ${shortString(intent)}\n`);
      return 1;
    }
    if (intent.stop) phone.forceStop(target.pkg);
    const coldStart = phone.apps.get(target.pkg)?.runtime === null;
    phone.launch(target.pkg);
    if (intent.wait) {
      io.out(`Status: ok\nLaunchState: ${coldStart ? "COLD" : "WARM"}\nActivity: ${shortComponent(target.pkg, target.activity)}\nTotalTime: 0\nWaitTime: 0\nComplete\n`);
    }
    return 0;
  };

  const am: CommandFn = (argv, io) => {
    const [, verb, ...rest] = argv;
    if (verb === "start" || verb === "start-activity") return amStart(argv, rest, io);
    if (verb === "force-stop" && rest[0]) {
      phone.forceStop(rest.at(-1) as string);
      return 0;
    }
    if (verb === "broadcast") {
      const intent = parseIntent(phone, argv, rest, io);
      if (!intent) return 1;
      io.out(`Broadcasting: ${shortString(intent)}\nBroadcast completed: result=0\n`);
      return 0;
    }
    return unsupported(phone, argv, io);
  };

  const monkey: CommandFn = (argv, io) => {
    const args = argv.slice(1);
    const pkg = args[args.indexOf("-p") + 1];
    const count = args.at(-1);
    if (!args.includes("-p") || !pkg || count !== "1") return unsupported(phone, argv, io);
    const data = args.flatMap((a, i) => (args[i - 1] === "-p" || args[i - 1] === "-c" ? [`data="${a}"\n`] : []));
    io.out(`${args.map((a) => `  bash arg: ${a}\n`).join("")}args: [${args.join(", ")}]\n${args.map((a) => ` arg: "${a}"\n`).join("")}${data.join("")}`);
    if (!phone.apps.has(pkg)) {
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

  const dumpsys: CommandFn = (argv, io) => {
    const [, service, section] = argv;
    const sdk = Number(phone.props.get("ro.build.version.sdk") ?? 29);
    if (service === "window" && (section === undefined || section === "windows" || section === "w")) {
      const pkg = phone.foreground;
      // Android 11 dropped the AppWindowToken wrapper around the focused app's record.
      const focusedApp = sdk >= 30 ? activityRecord() : `AppWindowToken{${hash(`a${pkg}`)} token=Token{${hash(`t${pkg}`)} ${activityRecord()}}}`;
      io.out(`WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{${hash(`w${pkg}`)} u0 ${pkg}/${phone.focusedActivity}}\n  mFocusedApp=${focusedApp}\n`);
      return 0;
    }
    if (service === "activity" && (section === "activities" || section === "a")) {
      io.out(`ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n    mResumedActivity: ${activityRecord()}\n`);
      return 0;
    }
    return unsupported(phone, argv, io);
  };

  return [
    ["am", am],
    ["monkey", monkey],
    ["dumpsys", dumpsys],
  ];
}
