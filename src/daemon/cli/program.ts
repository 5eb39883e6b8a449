/** `devicerail <command>`: the commands, their options and the exit codes, on commander. */
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { environmentHelp } from "../environment.ts";
import { VERSION } from "../version.ts";
import type { ActionRequest } from "./actions.ts";
import { DEFAULT_TIMEOUT_MS, age, coord, duration, integer, point } from "./arguments.ts";
import { CliError, EXIT, printJsonError, reportFailure } from "./output.ts";
import { addSelectorOptions } from "./selector-flags.ts";
import { SERVE_HELP } from "./serve-help.ts";
import { stdout, stderr } from "./std-streams.ts";

// Each command's module is imported when that command runs, so `--version`, `--help` and a client
// command do not load the daemon, MCP, report or farm code (the compiled binary is split into
// chunks at these imports: scripts/build.ts; startup measured by scripts/bench/startup.ts).
const commands = {
  actions: () => import("./actions.ts"),
  daemon: () => import("./daemon-command.ts"),
  device: () => import("./device-commands.ts"),
  devices: () => import("./devices-command.ts"),
  doctor: () => import("./doctor.ts"),
  element: () => import("./element-commands.ts"),
  farm: () => import("./farm-command.ts"),
  farmAdmin: () => import("./farm-admin-command.ts"),
  follow: () => import("./follow.ts"),
  mcp: () => import("./mcp-command.ts"),
  report: () => import("./report-command.ts"),
  serve: () => import("./serve.ts"),
  sessions: () => import("./sessions.ts"),
};

export const HELP = `devicerail ${VERSION} — drive phones over DeviceRail protocol 1.5 (JSON-RPC 2.0)

Usage:
  devicerail serve [--stdio]   serve one client on stdin/stdout (NDJSON, the default; also what
                               devicerail with no arguments does when stdin is not a terminal)
  devicerail serve --listen HOST:PORT | --socket PATH
                               serve loopback TCP or Unix socket clients: NDJSON, the HTTP API and
                               JSON-RPC over WebSocket on one port (IPv6 as [::1]:PORT, port 0 = any)
  devicerail daemon start|stop|status
                               the background daemon every command below talks to
  devicerail devices           list the devices (id, platform, name, OS, state, lease)
  devicerail screenshot [-o FILE]
                               save a PNG screenshot (default ./screenshot-<time>.png)
  devicerail ui                print the UI tree, indented, with bounds, states and refs
  devicerail tap X Y | swipe X1 Y1 X2 Y2 [--duration MS] | type TEXT | key NAME
  devicerail launch PACKAGE | open-url URL
                               one action, recorded as a Session like any client's
  devicerail tap ELEMENT | type TEXT --into ELEMENT | find ELEMENT
  devicerail wait-for ELEMENT [--gone]
                               act on an element: ELEMENT is --text TEXT [--contains|--regex]
                               [--ignore-case], --id ID, --role ROLE, --name NAME (combinable),
                               or --ref @eN from the last ui listing; wait-for waits --timeout
                               (default 10s) and exits 1 when nothing matched
  devicerail sessions [--limit N] [--follow [SESSION]] | sessions prune --older-than AGE | --keep N
                               list the recorded Sessions, follow one live, delete old ones
  devicerail sessions --open SESSION
                               open a Session's live report (the daemon's page) in the browser
  devicerail report SESSION [-o FILE] [--full-images] [--open]
                               write a Session as one HTML page that opens offline in a browser
  devicerail report SESSION... | --since AGE --junit FILE
                               write Sessions as JUnit XML for CI, screenshots attached
  devicerail export SESSION [-o DIR]
                               write a Session's events and evidence into a folder
  devicerail farm hosts | devices | sessions
                               the farm's hosts, devices and Sessions (DEVICERAIL_FARM_URL)
  devicerail farm acquire [--platform P] [--os RANGE] [--model M] [--wait 10m] [--json]
                               a free matching device: its host, id and a credential
  devicerail farm release ALLOCATION | DEVICE --force --reason TEXT
  devicerail farm block DEVICE --reason TEXT | farm unblock DEVICE
                               operators: free, block, clear a device (recorded)
  devicerail mcp               an MCP server on stdio for AI agents (Claude Code, Cursor, VS Code);
                               the daemon serves the same one at /mcp on its port
  devicerail doctor [--smoke [-n N] [--tap X,Y]]
                               check adb, devices, tools, data directory, listen port
  devicerail --version         print the version
  devicerail --help            print this help (devicerail COMMAND --help for a command)

Device commands take -d ID (before or after the command; default $ANDROID_SERIAL, else the only
device present) and --timeout DURATION (default 30s). Every command but serve takes --json for
machine-readable output on stdout; tables appear only on a terminal (tab-separated rows on a pipe).
Commands talk to the daemon of the data directory and start it in the background when none runs
(like adb); its state (the app on a device, its Sessions) lives on between commands.

Environment:
${environmentHelp()}

Logs are written to stderr; stdout carries protocol frames (serve) or the command's output only.
Exit codes: 0 ok, 1 runtime failure (device or action error; doctor: a check failed), 2 usage or
configuration error, 3 daemon status: not running, 130 interrupted (Ctrl-C).
`;

const EXIT_CODES = `
Exit codes: 0 ok, 1 runtime failure (what failed and what to fix are printed), 2 usage error, 130 interrupted.`;

type DeviceOpts = { device?: string; json?: boolean; timeout?: number };

export async function runCli(argv: string[]): Promise<number> {
  // A harness that spawns a DeviceRail daemon executable with no arguments speaks NDJSON on its
  // stdin, as with the reference daemon; a person at a terminal gets the usage text instead.
  if (argv.length === 0 && !process.stdin.isTTY) argv = ["serve"];
  let code = 0;
  let json = false;
  // Each action records its exit code; failures print once, in the command's own format.
  const run = (work: () => Promise<number>) => async () => {
    try {
      code = await work();
    } catch (e) {
      code = reportFailure(e, json);
    }
  };
  const program = new Command("devicerail")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => stdout.write(s),
      writeErr: (s) => stderr.write(s),
      outputError: (s, write) => write(`devicerail: ${s.replace(/^error: /, "")}`),
    })
    .showHelpAfterError("(run devicerail --help for usage)")
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "print this help");
  program.helpInformation = () => HELP;

  // -d may come before the command as adb users write it (`devicerail -d emulator-5554 tap 1 2`), or after it.
  program.option("-d, --device <id>", "the device to use (default: $ANDROID_SERIAL, else the only one present)");
  const cmd = (name: string, summary: string, opts: { device?: boolean } = {}) => {
    const c = program.command(name).description(summary).option("--json", "machine-readable output on stdout").addHelpText("after", EXIT_CODES);
    if (opts.device)
      c.option("-d, --device <id>", "the device to use (default: $ANDROID_SERIAL, else the only one present)").option(
        "--timeout <duration>",
        `how long one device call may take, e.g. 10s, 500ms, 2m (default ${DEFAULT_TIMEOUT_MS / 1000}s)`,
        duration,
      );
    c.hook("preAction", (self) => {
      json = self.opts().json === true;
      if (opts.device) {
        const o = self.opts<DeviceOpts>();
        const device = o.device ?? program.opts<DeviceOpts>().device ?? (process.env.ANDROID_SERIAL || undefined);
        self.setOptionValue("device", device);
      }
    });
    return c;
  };

  const farm = program.command("farm").description("the farm this host's daemons join (DEVICERAIL_FARM_URL): its hosts, devices and Sessions, allocation, and operators' controls");
  const farmCmd = (name: string, summary: string, work: (o: { json?: boolean }) => Promise<number>) => {
    const c = farm.command(name).description(summary).option("--json", "machine-readable output on stdout").addHelpText("after", EXIT_CODES);
    c.action(run(() => work(c.opts())));
  };
  farmCmd("hosts", "every host that joined: endpoint, state (up, gone, left), epoch, devices, last heartbeat", async (o) => (await commands.farm()).farmHostsCommand(o));
  farmCmd("devices", "every device with its host, state (available, allocated, busy, blocked, quarantined, absent, gone), holder, since and health", async (o) =>
    (await commands.farm()).farmDevicesCommand(o),
  );
  const farmSub = (name: string, summary: string) => farm.command(name).description(summary).option("--json", "machine-readable output on stdout").addHelpText("after", EXIT_CODES);
  const sessionsSub = farmSub("sessions", "the Sessions run on every host: host, device, holder, outcome and a link to the owning host's report")
    .option("--host <host>", "only this host (id, name or endpoint)")
    .option("--device <id>", "only this device")
    .option("--limit <n>", "how many, newest first (default 50)", integer(1, 10_000));
  sessionsSub.action(run(async () => (await commands.farm()).farmSessionsCommand(sessionsSub.opts())));
  const acquireSub = farmSub("acquire", "ask the farm for a device: prints its host's endpoint, its id and a short-lived credential")
    .option("--platform <name>", "android, ios, mock …")
    .option("--model <pattern>", "the device's name or id, * for any run of characters (case ignored)")
    .option("--os <range>", "OS major version: 14, >=14, >13, <=15, <16 or 14-15")
    .option("--host <host>", "a host's id, name or endpoint")
    .option("--capability <action>", "an action the device must support, e.g. swipe")
    .option("--device <id>", "one particular device")
    .option("--priority <n>", "higher is served first (default 0; -100 to 100)", (t) => {
      if (!/^-?\d+$/.test(t) || Math.abs(Number(t)) > 100) throw new InvalidArgumentError("expected an integer from -100 to 100");
      return Number(t);
    })
    .option("--wait <duration>", "how long to wait for a matching device to become free, e.g. 10m (default: do not wait)", (t) => (t === "0" ? 0 : duration(t)))
    .option("--holder <name>", "who is asking, shown to operators (default $DEVICERAIL_FARM_HOLDER, else user@host)");
  // The program's own -d/--device takes the value when it is written after the command too.
  acquireSub.action(run(async () => (await commands.farmAdmin()).farmAcquireCommand({ ...acquireSub.opts(), device: acquireSub.opts().device ?? program.opts<DeviceOpts>().device })));
  const releaseSub = farmSub("release", "give back an allocation (its id), or take a device from its holder (--force --reason, recorded)")
    .argument("<allocation|device>", "an allocation id, or DEVICE / HOST/DEVICE with --force")
    .option("--force", "take the device from whoever holds it")
    .option("--reason <text>", "why (recorded; required with --force)");
  releaseSub.action(run(async () => (await commands.farmAdmin()).farmReleaseCommand(releaseSub.args[0] as string, releaseSub.opts())));
  const blockSub = farmSub("block", "keep a device out of allocation until unblocked (recorded)").argument("<device>", "DEVICE or HOST/DEVICE").option("--reason <text>", "why (required)");
  blockSub.action(run(async () => (await commands.farmAdmin()).farmBlockCommand(blockSub.args[0] as string, blockSub.opts(), true)));
  const unblockSub = farmSub("unblock", "allocate a blocked or quarantined device again (recorded)").argument("<device>", "DEVICE or HOST/DEVICE").option("--reason <text>", "why");
  unblockSub.action(run(async () => (await commands.farmAdmin()).farmBlockCommand(unblockSub.args[0] as string, unblockSub.opts(), false)));

  program
    .command("mcp")
    .description("an MCP server on stdio for AI agents, served by the daemon of the data directory")
    .action(run(async () => (await commands.mcp()).mcpCommand()));

  const serveCmd = program
    .command("serve")
    .description("serve JSON-RPC clients")
    .option("--stdio", "one client on stdin/stdout (the default)")
    .option("--listen <host:port>", "loopback TCP clients")
    .option("--socket <path>", "Unix socket clients")
    .option("--token <token>", "every connection must authenticate with this token (prefer DEVICERAIL_TOKEN)")
    .option("--local-token", "TCP requires a token made at start and kept in <data dir>/daemon.token")
    .action(run(async () => (await commands.serve()).serve(serveCmd.opts())));
  serveCmd.helpInformation = () => SERVE_HELP;

  cmd("devices", "list the devices: id, platform, name, OS, state, leased by").action(run(async () => (await commands.devices()).devicesCommand({ json })));
  const shot = cmd("screenshot", "save a screenshot of a device as PNG", { device: true })
    .option("-o, --output <file>", "where to write the PNG (default ./screenshot-<yyyymmdd-hhmmss>.png)")
    .action(run(async () => (await commands.device()).screenshotCommand(shot.opts())));
  const ui = cmd("ui", "print a device's UI tree: @ref role \"text\" #identifier [x,y,width,height] [states], indented by depth; saves the refs for --ref", { device: true }).action(
    run(async () => (await commands.device()).uiCommand(ui.opts())),
  );

  // A one-shot action: its positional arguments (parsed, or a usage error) become one ActionRequest.
  type ArgSpec = [spec: string, description: string, parse?: (text: string) => unknown];
  // The request builders come from actions.ts, loaded with the command.
  type Builders = Awaited<ReturnType<typeof commands.actions>>;
  const act = <A extends unknown[]>(name: string, summary: string, args: ArgSpec[], build: (m: Builders, c: Command, ...a: A) => ActionRequest) => {
    const c = cmd(name, summary, { device: true });
    for (const [spec, desc, parse] of args) parse ? c.argument(spec, desc, parse) : c.argument(spec, desc);
    c.action((...a: unknown[]) =>
      run(async () => {
        const actions = await commands.actions();
        return actions.actionCommand(build(actions, c, ...(a.slice(0, args.length) as A)), c.opts<DeviceOpts>());
      })(),
    );
    return c;
  };
  // tap and type also act on elements (element-commands.ts): their coordinates and text stay positional.
  const tap = addSelectorOptions(cmd("tap", "tap one point (screenshot pixels), or one element (tapElement)", { device: true }), { ref: true })
    .argument("[x]", "x in screenshot pixels", coord)
    .argument("[y]", "y in screenshot pixels", coord)
    .action((x?: number, y?: number) => run(async () => (await commands.element()).tapCommand(x, y, tap.opts()))());
  act<[number, number, number, number]>(
    "swipe",
    "swipe from one point to another",
    [["<x1>", "start x", coord], ["<y1>", "start y", coord], ["<x2>", "end x", coord], ["<y2>", "end y", coord]],
    (m, c, x1, y1, x2, y2) => m.swipeRequest(x1, y1, x2, y2, c.opts<{ duration: number }>().duration),
  ).option("--duration <ms>", "how long the swipe takes", integer(1, 60_000), 300);
  const type = addSelectorOptions(cmd("type", "type text into the focused field, or --into an element (tapElement, then inputText)", { device: true }), { ref: true })
    .argument("[text]", "the text (not with --secret)")
    .option("--into", "first tap the element the selector options name")
    .option("--secret", "type a secret read from stdin, or at a prompt that does not echo (inputSecret: never recorded, logged or shown)")
    .action((text: string | undefined) => run(async () => (await commands.element()).typeCommand(text, type.opts()))());
  act<[string]>("key", "press a key: enter, tab, escape, delete, space, arrowUp/Down/Left/Right, back, home, recentApps", [["<name>", "the key"]], (m, _c, key) =>
    m.keyRequest(key),
  );
  act<[string]>("launch", "launch an app by its package name", [["<package>", "e.g. com.android.settings"]], (m, c, p) => m.launchRequest(p, c.opts<{ activity?: string }>().activity)).option(
    "--activity <name>",
    "the activity to start (Android: .MainActivity or fully qualified), for an app with several launcher activities",
  );
  act<[string]>("open-url", "open a URL or deep link", [["<url>", "e.g. https://example.com"]], (m, _c, u) => m.openUrlRequest(u));
  const waitFor = addSelectorOptions(cmd("wait-for", "wait until an element is there, or --gone (waitForElement); exit 1 when it is not", { device: true }), { ref: false })
    .option("--gone", "wait until no element matches")
    .addHelpText("after", "--timeout is how long to wait (default: the daemon's 10 s).")
    .action(run(async () => (await commands.element()).waitForCommand(waitFor.opts())));
  const find = addSelectorOptions(cmd("find", "print the one element the selector names (findElement)", { device: true }), { ref: false }).action(
    run(async () => (await commands.element()).findCommand(find.opts())),
  );

  const sessions = cmd("sessions", "list the recorded Sessions, newest first: device, start, duration, actions, errors, outcome or verdict")
    .option("-f, --follow [session]", "print a Session's events as they happen (default: the newest active one, or the next to start)")
    .option("--open <session>", "open the Session's live report in the browser (it follows an active Session)")
    .option("--limit <n>", "list only the newest N (default: all)", integer(1, 1000))
    .addHelpText("after", "\nA SESSION argument of any command may be an unambiguous prefix of the id (4 or more characters), as git takes commits.")
    .action(run(async () => {
      const o = sessions.opts<{ follow?: string | boolean; open?: string; limit?: number }>();
      if (o.limit !== undefined && (o.open !== undefined || o.follow !== undefined)) throw new CliError("--limit belongs to the listing, not to --follow or --open", EXIT.usage);
      if (o.open !== undefined) return (await commands.report()).openLiveReport(o.open, { json });
      if (o.follow !== undefined) return (await commands.follow()).followCommand(typeof o.follow === "string" ? o.follow : undefined, { json });
      return (await commands.sessions()).sessionsCommand({ json, limit: o.limit });
    }));
  const prune = sessions
    .command("prune")
    .description("delete ended Sessions and the evidence only they reference")
    .option("--older-than <age>", "those that ended longer ago than this: 7d, 12h, 30m", age)
    .option("--keep <n>", "all but the newest N", integer(0, 1_000_000))
    .option("--dry-run", "only say how many would be deleted")
    .option("--json", "machine-readable output on stdout")
    // --json may land on `sessions` (commander reads a parent's options anywhere), whose hook runs first.
    .hook("preAction", (self) => {
      json ||= self.opts().json === true;
    })
    .action(run(async () => (await commands.sessions()).pruneCommand({ ...prune.opts(), json })));
  const daemon = program.command("daemon").description("the background daemon of the data directory: start, stop, status");
  for (const [action, summary] of [
    ["start", "start the daemon unless it runs, and print its status"],
    ["stop", "stop the daemon (its open Sessions end as shutdown)"],
    ["status", "pid, version, uptime, listeners, devices and open Sessions (exit 3 when it is not running)"],
  ] as const) {
    const sub = daemon.command(action).description(summary).option("--json", "machine-readable output on stdout");
    sub.hook("preAction", (self) => {
      json = self.opts().json === true;
    });
    sub.action(run(async () => (await commands.daemon()).daemonCommand(action, { json })));
  }
  const rep = cmd("report", "write a Session as one self-contained HTML page (timeline, screenshots with tap markers, UI trees and their diffs), or Sessions as JUnit XML")
    .argument("[sessions...]", "the Session id(s) (see devicerail sessions)")
    .option("-o, --output <file>", "where to write the HTML (a file, or a folder for the default name)")
    .option("--full-images", "embed every screenshot at full size too (larger file)")
    .option("--open", "open the HTML report in the browser")
    .option("--junit <file>", "write JUnit XML for the Sessions (screenshots go beside it)")
    .option("--since <age>", "with --junit: also every Session started within AGE, e.g. 2h", age)
    .action((ids: string[]) => run(async () => (await commands.report()).reportCommand(ids, rep.opts()))());

  const exp = cmd("export", "write a Session as a self-contained folder: events.ndjson, evidence/<sha256>.<png|json>, manifest.json")
    .argument("<session>", "the Session id (see devicerail sessions)")
    .option("-o, --output <dir>", "the folder to create (default ./devicerail-session-<id>)")
    .action((id: string) => run(async () => (await commands.sessions()).exportCommand(id, exp.opts()))());
  const doc = cmd("doctor", "check adb, devices, iOS tools, the data directory and the listen port, each with its fix", { device: true })
    .option("--smoke", "also run observe cycles on a device and print p50/p95 per operation (it taps nothing unless --tap)")
    .option("-n, --cycles <n>", "how many cycles --smoke runs (default 10)", integer(1, 10_000))
    .option("--tap <x,y>", "with --smoke: also tap at X,Y (screen pixels) in each cycle and time it", point)
    .addHelpText("after", "doctor exits 1 when any check failed.")
    .action(run(async () => (await commands.doctor()).doctorCommand(doc.opts())));

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    // Scripts that asked for --json get the usage error as JSON too (the text still goes to stderr).
    if (e.exitCode !== 0 && argv.includes("--json")) printJsonError(new CliError(e.message.replace(/^error: /, ""), EXIT.usage));
    // --help and --version exit 0; every parse error, and a missing command, is a usage error.
    return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return code;
}
