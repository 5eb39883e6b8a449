/** `devicerail <command>`: the commands, their options and the exit codes, on commander. */
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { VERSION } from "../version.ts";
import { type ActionRequest, actionCommand, keyRequest, launchRequest, openUrlRequest, swipeRequest, tapRequest, typeRequest } from "./actions.ts";
import { devicesCommand, screenshotCommand, uiCommand } from "./device-commands.ts";
import { doctorCommand } from "./doctor.ts";
import { reportFailure } from "./output.ts";
import { SERVE_HELP, serve } from "./serve.ts";
import { exportCommand, sessionsCommand } from "./sessions.ts";

export const HELP = `devicerail ${VERSION} — drive phones over DeviceRail protocol 1.5 (JSON-RPC 2.0)

Usage:
  devicerail serve [--stdio]   serve one client on stdin/stdout (NDJSON, the default; also what
                               devicerail with no arguments does when stdin is not a terminal)
  devicerail serve --listen HOST:PORT | --socket PATH
                               serve loopback TCP or Unix socket clients: NDJSON, the HTTP API and
                               JSON-RPC over WebSocket on one port (IPv6 as [::1]:PORT, port 0 = any)
  devicerail devices           list the devices (id, platform, name, OS, state, lease)
  devicerail screenshot [-d ID] [-o FILE]
                               save a PNG screenshot (default ./screenshot-<time>.png)
  devicerail ui [-d ID]        print the UI tree, indented, with bounds
  devicerail tap X Y | swipe X1 Y1 X2 Y2 [--duration MS] | type TEXT | key NAME
  devicerail launch PACKAGE | open-url URL
                               one action, recorded as a Session like any client's
  devicerail sessions          list the recorded Sessions
  devicerail export SESSION [-o DIR]
                               write a Session's events and evidence into a folder
  devicerail doctor [--smoke [-d ID] [-n N]]
                               check adb, devices, tools, data directory, listen port
  devicerail --version         print the version
  devicerail --help            print this help (devicerail COMMAND --help for a command)

Every command but serve takes --json for machine-readable output on stdout.
Device commands start the daemon in this process on the data directory, so they fail while
another daemon uses it (set DEVICERAIL_DATA_DIR for a separate one).

Environment:
  DEVICERAIL_SCREENSHOT_POLICY  capture (default) | omit
  DEVICERAIL_LOG_LEVEL          trace | debug | info (default; warn for device commands) | warn | error | silent
  DEVICERAIL_RPC_LISTEN         HOST:PORT of a loopback TCP listener instead of stdio (--listen wins)
  DEVICERAIL_RPC_SOCKET         path of a Unix socket listener (--socket wins)
  DEVICERAIL_TOKEN              token every socket connection must present (--token wins)
  DEVICERAIL_ALLOWED_ORIGINS    comma-separated browser Origins the HTTP API accepts (default none)
  DEVICERAIL_DATA_DIR           where Sessions and evidence are kept
  DEVICERAIL_ANDROID            auto (default) | off | required;  DEVICERAIL_ADB_PATH  adb to run
  ANDROID_ADB_SERVER_PORT       the adb server's port (default 5037)
  NO_COLOR                      no colour even on a terminal

Logs are written to stderr; stdout carries protocol frames (serve) or the command's output only.
Exit codes: 0 ok, 1 runtime failure (device or action error, busy data directory; doctor: a check
failed), 2 usage or configuration error.
`;

const EXIT_CODES = `
Exit codes: 0 ok, 1 runtime failure (the JSON-RPC error code and message are printed), 2 usage error.`;

/** Non-negative integer arguments (screen pixels, counts); anything else is a usage error. */
function integer(min: number, max = 2 ** 32 - 1) {
  return (text: string): number => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return Number(text);
  };
}
const coord = integer(0);

type DeviceOpts = { device?: string; json?: boolean };

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
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(`devicerail: ${s.replace(/^error: /, "")}`),
    })
    .showHelpAfterError("(run devicerail --help for usage)")
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "print this help");
  program.helpInformation = () => HELP;

  const cmd = (name: string, summary: string, opts: { device?: boolean } = {}) => {
    const c = program.command(name).description(summary).option("--json", "machine-readable output on stdout").addHelpText("after", EXIT_CODES);
    if (opts.device) c.option("-d, --device <id>", "the device to use (default: the only one present)");
    c.hook("preAction", (self) => {
      json = self.opts().json === true;
    });
    return c;
  };

  const serveCmd = program
    .command("serve")
    .description("serve JSON-RPC clients")
    .option("--stdio", "one client on stdin/stdout (the default)")
    .option("--listen <host:port>", "loopback TCP clients")
    .option("--socket <path>", "Unix socket clients")
    .option("--token <token>", "every connection must authenticate with this token (prefer DEVICERAIL_TOKEN)")
    .action(run(() => serve(serveCmd.opts())));
  serveCmd.helpInformation = () => SERVE_HELP;

  cmd("devices", "list the devices: id, platform, name, OS, state, leased by").action(run(() => devicesCommand({ json })));
  const shot = cmd("screenshot", "save a screenshot of a device as PNG", { device: true })
    .option("-o, --output <file>", "where to write the PNG (default ./screenshot-<yyyymmdd-hhmmss>.png)")
    .action(run(() => screenshotCommand(shot.opts())));
  const ui = cmd("ui", "print a device's UI tree: role \"text\" #identifier [x,y,width,height], indented by depth", { device: true }).action(
    run(() => uiCommand(ui.opts())),
  );

  // A one-shot action: its positional arguments (parsed, or a usage error) become one ActionRequest.
  type ArgSpec = [spec: string, description: string, parse?: (text: string) => unknown];
  const act = <A extends unknown[]>(name: string, summary: string, args: ArgSpec[], build: (c: Command, ...a: A) => ActionRequest) => {
    const c = cmd(name, summary, { device: true });
    for (const [spec, desc, parse] of args) parse ? c.argument(spec, desc, parse) : c.argument(spec, desc);
    c.action((...a: unknown[]) => run(() => actionCommand(build(c, ...(a.slice(0, args.length) as A)), c.opts<DeviceOpts>()))());
    return c;
  };
  act<[number, number]>("tap", "tap one point (screenshot pixels)", [["<x>", "x in screenshot pixels", coord], ["<y>", "y in screenshot pixels", coord]], (_c, x, y) => tapRequest(x, y));
  act<[number, number, number, number]>(
    "swipe",
    "swipe from one point to another",
    [["<x1>", "start x", coord], ["<y1>", "start y", coord], ["<x2>", "end x", coord], ["<y2>", "end y", coord]],
    (c, x1, y1, x2, y2) => swipeRequest(x1, y1, x2, y2, c.opts<{ duration: number }>().duration),
  ).option("--duration <ms>", "how long the swipe takes", integer(1, 60_000), 300);
  act<[string]>("type", "type text into the focused field", [["<text>", "the text"]], (_c, text) => typeRequest(text));
  act<[string]>("key", "press a key: enter, tab, escape, delete, space, arrowUp/Down/Left/Right, back, home, recentApps", [["<name>", "the key"]], (_c, key) =>
    keyRequest(key),
  );
  act<[string]>("launch", "launch an app by its package name", [["<package>", "e.g. com.android.settings"]], (_c, p) => launchRequest(p));
  act<[string]>("open-url", "open a URL or deep link", [["<url>", "e.g. https://example.com"]], (_c, u) => openUrlRequest(u));

  cmd("sessions", "list the recorded Sessions: id, state, started, events").action(run(() => sessionsCommand({ json })));
  const exp = cmd("export", "write a Session as a self-contained folder: events.ndjson, evidence/<sha256>.<png|json>, manifest.json")
    .argument("<session>", "the Session id (see devicerail sessions)")
    .option("-o, --output <dir>", "the folder to create (default ./devicerail-session-<id>)")
    .action((id: string) => run(() => exportCommand(id, exp.opts()))());
  const doc = cmd("doctor", "check adb, devices, iOS tools, the data directory and the listen port, each with its fix", { device: true })
    .option("--smoke", "also run observe + tap cycles on a device and print p50/p95 per operation")
    .option("-n, --cycles <n>", "how many cycles --smoke runs (default 10)", integer(1, 10_000))
    .addHelpText("after", "doctor exits 1 when any check failed.")
    .action(run(() => doctorCommand(doc.opts())));

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    // --help and --version exit 0; every parse error, and a missing command, is a usage error.
    return e.exitCode === 0 ? 0 : 2;
  }
  return code;
}
