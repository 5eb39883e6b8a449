/**
 * Every `devicerail` command as data: its words, arguments, options and what it runs. program.ts
 * turns the list into commander commands; nothing here parses argv or writes to a terminal. Each
 * `run` imports its command's module when the command runs, so a command loads only its own code
 * (the compiled binary is split into chunks at these imports: scripts/build.ts).
 * Over 300 lines because it is data: one entry per command.
 */
import { InvalidArgumentError } from "commander";
import type { ActionRequest } from "./actions.ts";
import { age, coord, duration, integer, point } from "./arguments.ts";
import { CliError, EXIT } from "./output.ts";
import { SERVE_HELP } from "./serve-help.ts";

type Parse = (text: string) => unknown;

export interface ArgSpec {
  spec: string;
  description: string;
  parse?: Parse;
}

export interface OptionSpec {
  flags: string;
  description: string;
  parse?: Parse;
  default?: unknown;
}

/** What a command runs with: its parsed arguments and options, and whether it prints JSON. */
export interface CommandContext {
  args: unknown[];
  // Commander's option bag: each command's module declares the shape it reads.
  // biome-ignore lint/suspicious/noExplicitAny: option values are typed by the command that reads them
  opts: Record<string, any>;
  json: boolean;
}

export interface CommandSpec {
  /** The words that name it: `["tap"]`, `["farm", "hosts"]`, `["sessions", "prune"]`. */
  path: string[];
  summary: string;
  args?: ArgSpec[];
  options?: OptionSpec[];
  /** Takes -d (also before the command, default $ANDROID_SERIAL) and --timeout. */
  device?: boolean;
  /** Has a --device of its own that the program's -d fills when it is not given (farm acquire). */
  programDevice?: boolean;
  /** Takes the element selector options (tap, type, find, wait-for); `ref`: also --ref. */
  selector?: { ref: boolean };
  /** Has --json (default true). */
  json?: boolean;
  /** Text after the options in its --help. */
  after?: string;
  /** Its whole --help, instead of commander's. */
  help?: () => string;
  run(ctx: CommandContext): Promise<number>;
}

/** Commands that only group others (`farm`, `daemon`): their descriptions. */
export const GROUPS: Record<string, string> = {
  farm: "the farm this host's daemons join (DEVICERAIL_FARM_URL): its hosts, devices and Sessions, allocation, and operators' controls",
  daemon: "the background daemon of the data directory: start, stop, status",
  android: "Android phones: the on-device helpers devicerail can use",
  "android helper": "Appium's io.appium.settings and UiAutomator2 server on a phone: install, status, remove",
};

const load = {
  actions: () => import("./actions.ts"),
  daemon: () => import("./daemon-command.ts"),
  device: () => import("./device-commands.ts"),
  devices: () => import("./devices-command.ts"),
  doctor: () => import("./doctor.ts"),
  androidHelper: () => import("./android-helper.ts"),
  element: () => import("./element-commands.ts"),
  farm: () => import("./farm-command.ts"),
  farmAdmin: () => import("./farm-admin-command.ts"),
  follow: () => import("./follow.ts"),
  mcp: () => import("./mcp-command.ts"),
  report: () => import("./report-command.ts"),
  serve: () => import("./serve-command.ts"),
  sessions: () => import("./sessions.ts"),
};

type Builders = Awaited<ReturnType<typeof load.actions>>;

/** A one-shot action: its positional arguments (parsed, or a usage error) become one ActionRequest. */
function action(
  path: string,
  summary: string,
  args: ArgSpec[],
  build: (m: Builders, ctx: CommandContext) => ActionRequest,
  options: OptionSpec[] = [],
): CommandSpec {
  return {
    path: [path],
    summary,
    args,
    options,
    device: true,
    async run(ctx) {
      const m = await load.actions();
      return m.actionCommand(build(m, ctx), ctx.opts);
    },
  };
}

const priority = (t: string) => {
  if (!/^-?\d+$/.test(t) || Math.abs(Number(t)) > 100)
    throw new InvalidArgumentError("expected an integer from -100 to 100");
  return Number(t);
};

const farmBlock = (word: "block" | "unblock", summary: string, reason: string): CommandSpec => ({
  path: ["farm", word],
  summary,
  args: [{ spec: "<device>", description: "DEVICE or HOST/DEVICE" }],
  options: [{ flags: "--reason <text>", description: reason }],
  run: async (c) => (await load.farmAdmin()).farmBlockCommand(c.args[0] as string, c.opts, word === "block"),
});

const daemonAction = (word: "start" | "stop" | "status", summary: string, after?: string): CommandSpec => ({
  path: ["daemon", word],
  summary,
  after,
  run: async (c) => (await load.daemon()).daemonCommand(word, { json: c.json }),
});

export const COMMANDS: CommandSpec[] = [
  {
    path: ["farm", "hosts"],
    summary: "every host that joined: endpoint, state (up, gone, left), epoch, devices, last heartbeat",
    run: async (c) => (await load.farm()).farmHostsCommand(c.opts),
  },
  {
    path: ["farm", "devices"],
    summary:
      "every device with its host, state (available, allocated, busy, blocked, quarantined, absent, gone), holder, since and health",
    run: async (c) => (await load.farm()).farmDevicesCommand(c.opts),
  },
  {
    path: ["farm", "sessions"],
    summary: "the Sessions run on every host: host, device, holder, outcome and a link to the owning host's report",
    options: [
      { flags: "--host <host>", description: "only this host (id, name or endpoint)" },
      { flags: "--device <id>", description: "only this device" },
      { flags: "--limit <n>", description: "how many, newest first (default 50)", parse: integer(1, 10_000) },
    ],
    run: async (c) => (await load.farm()).farmSessionsCommand(c.opts),
  },
  {
    path: ["farm", "acquire"],
    summary: "ask the farm for a device: prints its host's endpoint, its id and a short-lived credential",
    options: [
      { flags: "--platform <name>", description: "android, ios, mock …" },
      {
        flags: "--model <pattern>",
        description: "the device's name or id, * for any run of characters (case ignored)",
      },
      { flags: "--os <range>", description: "OS major version: 14, >=14, >13, <=15, <16 or 14-15" },
      { flags: "--host <host>", description: "a host's id, name or endpoint" },
      { flags: "--capability <action>", description: "an action the device must support, e.g. swipe" },
      { flags: "--device <id>", description: "one particular device" },
      { flags: "--priority <n>", description: "higher is served first (default 0; -100 to 100)", parse: priority },
      {
        flags: "--wait <duration>",
        description: "how long to wait for a matching device to become free, e.g. 10m (default: do not wait)",
        parse: (t) => (t === "0" ? 0 : duration(t)),
      },
      {
        flags: "--holder <name>",
        description: "who is asking, shown to operators (default $DEVICERAIL_FARM_HOLDER, else user@host)",
      },
    ],
    programDevice: true,
    run: async (c) => (await load.farmAdmin()).farmAcquireCommand(c.opts),
  },
  {
    path: ["farm", "release"],
    summary: "give back an allocation (its id), or take a device from its holder (--force --reason, recorded)",
    args: [{ spec: "<allocation|device>", description: "an allocation id, or DEVICE / HOST/DEVICE with --force" }],
    options: [
      { flags: "--force", description: "take the device from whoever holds it" },
      { flags: "--reason <text>", description: "why (recorded; required with --force)" },
    ],
    run: async (c) => (await load.farmAdmin()).farmReleaseCommand(c.args[0] as string, c.opts),
  },
  farmBlock("block", "keep a device out of allocation until unblocked (recorded)", "why (required)"),
  farmBlock("unblock", "allocate a blocked or quarantined device again (recorded)", "why"),
  {
    path: ["mcp"],
    summary: "an MCP server on stdio for AI agents, served by the daemon of the data directory",
    json: false,
    run: async () => (await load.mcp()).mcpCommand(),
  },
  {
    path: ["serve"],
    summary: "serve JSON-RPC clients",
    json: false,
    options: [
      { flags: "--stdio", description: "one client on stdin/stdout (the default)" },
      { flags: "--listen <host:port>", description: "loopback TCP clients" },
      { flags: "--socket <path>", description: "Unix socket clients" },
      {
        flags: "--token <token>",
        description: "every connection must authenticate with this token (prefer DEVICERAIL_TOKEN)",
      },
      { flags: "--local-token", description: "TCP requires a token made at start and kept in <data dir>/daemon.token" },
    ],
    help: () => SERVE_HELP,
    run: async (c) => (await load.serve()).serve(c.opts),
  },
  {
    path: ["devices"],
    summary: "list the devices: id, platform, name, OS, state, leased by",
    run: async (c) => (await load.devices()).devicesCommand({ json: c.json }),
  },
  {
    path: ["screenshot"],
    summary: "save a screenshot of a device as PNG",
    device: true,
    options: [
      {
        flags: "-o, --output <file>",
        description: "where to write the PNG (default ./screenshot-<yyyymmdd-hhmmss>.png)",
      },
    ],
    run: async (c) => (await load.device()).screenshotCommand(c.opts),
  },
  {
    path: ["ui"],
    summary:
      'print a device\'s UI tree: @ref role "text" #identifier [x,y,width,height] [states], indented by depth; saves the refs for --ref',
    device: true,
    run: async (c) => (await load.device()).uiCommand(c.opts),
  },
  // tap and type also act on elements (element-commands.ts): their coordinates and text stay positional.
  {
    path: ["tap"],
    summary: "tap one point (screenshot pixels), or one element (tapElement)",
    device: true,
    selector: { ref: true },
    args: [
      { spec: "[x]", description: "x in screenshot pixels", parse: coord },
      { spec: "[y]", description: "y in screenshot pixels", parse: coord },
    ],
    run: async (c) =>
      (await load.element()).tapCommand(c.args[0] as number | undefined, c.args[1] as number | undefined, c.opts),
  },
  action(
    "swipe",
    "swipe from one point to another",
    [
      { spec: "<x1>", description: "start x", parse: coord },
      { spec: "<y1>", description: "start y", parse: coord },
      { spec: "<x2>", description: "end x", parse: coord },
      { spec: "<y2>", description: "end y", parse: coord },
    ],
    (m, c) => m.swipeRequest(...(c.args as [number, number, number, number]), c.opts.duration),
    [{ flags: "--duration <ms>", description: "how long the swipe takes", parse: integer(1, 60_000), default: 300 }],
  ),
  {
    path: ["type"],
    summary: "type text into the focused field, or --into an element (tapElement, then inputText)",
    device: true,
    selector: { ref: true },
    args: [{ spec: "[text]", description: "the text (not with --secret)" }],
    options: [
      { flags: "--into", description: "first tap the element the selector options name" },
      {
        flags: "--secret",
        description:
          "type a secret read from stdin, or at a prompt that does not echo (inputSecret: never recorded, logged or shown)",
      },
    ],
    run: async (c) => (await load.element()).typeCommand(c.args[0] as string | undefined, c.opts),
  },
  action(
    "key",
    "press a key: enter, tab, escape, delete, space, arrowUp/Down/Left/Right, back, home, recentApps",
    [{ spec: "<name>", description: "the key" }],
    (m, c) => m.keyRequest(c.args[0] as string),
  ),
  action(
    "launch",
    "launch an app by its package name",
    [{ spec: "<package>", description: "e.g. com.android.settings" }],
    (m, c) => m.launchRequest(c.args[0] as string, c.opts.activity),
    [
      {
        flags: "--activity <name>",
        description:
          "the activity to start (Android: .MainActivity or fully qualified), for an app with several launcher activities",
      },
    ],
  ),
  action("open-url", "open a URL or deep link", [{ spec: "<url>", description: "e.g. https://example.com" }], (m, c) =>
    m.openUrlRequest(c.args[0] as string),
  ),
  {
    path: ["wait-for"],
    summary: "wait until an element is there, or --gone (waitForElement); exit 1 when it is not",
    device: true,
    selector: { ref: false },
    options: [{ flags: "--gone", description: "wait until no element matches" }],
    after: "--timeout is how long to wait (default: the daemon's 10 s).",
    run: async (c) => (await load.element()).waitForCommand(c.opts),
  },
  {
    path: ["find"],
    summary: "print the one element the selector names (findElement)",
    device: true,
    selector: { ref: false },
    run: async (c) => (await load.element()).findCommand(c.opts),
  },
  {
    path: ["sessions"],
    summary: "list the recorded Sessions, newest first: device, start, duration, actions, errors, outcome or verdict",
    options: [
      {
        flags: "-f, --follow [session]",
        description: "print a Session's events as they happen (default: the newest active one, or the next to start)",
      },
      {
        flags: "--open <session>",
        description: "open the Session's live report in the browser (it follows an active Session)",
      },
      { flags: "--limit <n>", description: "list only the newest N (default: all)", parse: integer(1, 1000) },
    ],
    after:
      "\nA SESSION argument of any command may be an unambiguous prefix of the id (4 or more characters), as git takes commits.",
    async run({ opts: o, json }) {
      if (o.limit !== undefined && (o.open !== undefined || o.follow !== undefined))
        throw new CliError("--limit belongs to the listing, not to --follow or --open", EXIT.usage);
      if (o.open !== undefined) return (await load.report()).openLiveReport(o.open, { json });
      if (o.follow !== undefined)
        return (await load.follow()).followCommand(typeof o.follow === "string" ? o.follow : undefined, { json });
      return (await load.sessions()).sessionsCommand({ json, limit: o.limit });
    },
  },
  {
    path: ["sessions", "prune"],
    summary: "delete ended Sessions and the evidence only they reference",
    options: [
      { flags: "--older-than <age>", description: "those that ended longer ago than this: 7d, 12h, 30m", parse: age },
      { flags: "--keep <n>", description: "all but the newest N", parse: integer(0, 1_000_000) },
      { flags: "--dry-run", description: "only say how many would be deleted" },
    ],
    run: async (c) => (await load.sessions()).pruneCommand({ ...c.opts, json: c.json }),
  },
  daemonAction("start", "start the daemon unless it runs, and print its status"),
  daemonAction("stop", "stop the daemon (its open Sessions end as shutdown)"),
  daemonAction(
    "status",
    "pid, version, uptime, listeners, devices and open Sessions (exit 3 when it is not running)",
    "daemon status exits 3 when no daemon runs.",
  ),
  {
    path: ["report"],
    summary:
      "write a Session as one self-contained HTML page (timeline, screenshots with tap markers, UI trees and their diffs), or Sessions as JUnit XML",
    args: [{ spec: "[sessions...]", description: "the Session id(s) (see devicerail sessions)" }],
    options: [
      {
        flags: "-o, --output <file>",
        description: "where to write the HTML (a file, or a folder for the default name)",
      },
      { flags: "--full-images", description: "embed every screenshot at full size too (larger file)" },
      { flags: "--open", description: "open the HTML report in the browser" },
      { flags: "--junit <file>", description: "write JUnit XML for the Sessions (screenshots go beside it)" },
      {
        flags: "--since <age>",
        description: "with --junit: also every Session started within AGE, e.g. 2h",
        parse: age,
      },
    ],
    run: async (c) => (await load.report()).reportCommand(c.args[0] as string[], c.opts),
  },
  {
    path: ["export"],
    summary: "write a Session as a self-contained folder: events.ndjson, evidence/<sha256>.<png|json>, manifest.json",
    args: [{ spec: "<session>", description: "the Session id (see devicerail sessions)" }],
    options: [{ flags: "-o, --output <dir>", description: "the folder to create (default ./devicerail-session-<id>)" }],
    run: async (c) => (await load.sessions()).exportCommand(c.args[0] as string, c.opts),
  },
  ...(["install", "status", "remove"] as const).map(
    (verb): CommandSpec => ({
      path: ["android", "helper", verb],
      summary: {
        install: "install Appium's io.appium.settings and UiAutomator2 server on a phone (checked by SHA-256)",
        status:
          "show the helpers' versions on a phone, whether the Unicode IME and the UiAutomator2 server are usable, and what the phone blocks",
        remove: "uninstall the helpers from a phone",
      }[verb],
      programDevice: true,
      options: [
        {
          flags: "-d, --device <serial>",
          description: "the phone (default $ANDROID_SERIAL, else the only one attached)",
        },
      ],
      json: true,
      run: async (c) => (await load.androidHelper()).androidHelperCommand(verb, c.opts),
    }),
  ),
  {
    path: ["doctor"],
    summary: "check adb, devices, iOS tools, the data directory and the listen port, each with its fix",
    device: true,
    options: [
      {
        flags: "--smoke",
        description:
          "also run observe cycles on a device and print p50/p95 per operation (it taps nothing unless --tap)",
      },
      {
        flags: "-n, --cycles <n>",
        description: "how many cycles --smoke runs (default 10)",
        parse: integer(1, 10_000),
      },
      {
        flags: "--tap <x,y>",
        description: "with --smoke: also tap at X,Y (screen pixels) in each cycle and time it",
        parse: point,
      },
    ],
    after: "doctor exits 1 when any check failed.",
    run: async (c) => (await load.doctor()).doctorCommand(c.opts),
  },
];
