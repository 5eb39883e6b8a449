/** `devicerail <command>`: the usage text, the exit codes, and the commands of command-specs.ts on commander. */
import { Command, CommanderError } from "commander";
import { environmentHelp } from "../server/environment.ts";
import { VERSION } from "../server/version.ts";
import { DEFAULT_TIMEOUT_MS, duration } from "./arguments.ts";
import { COMMANDS, type CommandSpec, GROUPS } from "./command-specs.ts";
import { CliError, EXIT, printJsonError, reportFailure } from "./output.ts";
import { addSelectorOptions } from "./selector-flags.ts";
import { type Sinks, redirect, stderr, stdout } from "./std-streams.ts";

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
  devicerail android helper install | status | remove [-d SERIAL]
                               Appium's on-device helpers: any Unicode text, fast trees and taps
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

const DEVICE_OPTION = "the device to use (default: $ANDROID_SERIAL, else the only one present)";

/**
 * Runs one command line and returns its exit code. With `io`, what the command writes goes there
 * instead of stdout and stderr (tests run commands in-process this way).
 */
export async function runCli(argv: string[], io?: Sinks): Promise<number> {
  // A harness that spawns a DeviceRail daemon executable with no arguments speaks NDJSON on its
  // stdin, as with the reference daemon; a person at a terminal gets the usage text instead.
  if (argv.length === 0 && !process.stdin.isTTY) argv = ["serve"];
  const restore = io ? redirect(io) : null;
  try {
    return await parse(argv);
  } finally {
    restore?.();
  }
}

async function parse(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  let json = false;
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
  program.option("-d, --device <id>", DEVICE_OPTION);

  const defined = new Map<string, Command>([["", program]]);
  const parentOf = (words: string[]): Command => {
    const key = words.join(" ");
    const known = defined.get(key);
    if (known) return known;
    const group = parentOf(words.slice(0, -1))
      .command(words.at(-1) as string)
      .description(GROUPS[key] ?? "");
    defined.set(key, group);
    return group;
  };
  // Only the commands the line names are declared (all of them when it names none, for --help and
  // "unknown command"): declaring every command costs each start a few milliseconds.
  const words = new Set(argv);
  const named = COMMANDS.filter((s) => words.has(s.path[0] as string));
  for (const spec of named.length ? named : COMMANDS) {
    const c = parentOf(spec.path.slice(0, -1))
      .command(spec.path.at(-1) as string)
      .description(spec.summary);
    defined.set(spec.path.join(" "), c);
    declare(c, spec);
    // Hooks of a parent run too (`sessions --json prune`): --json anywhere on the line counts.
    c.hook("preAction", (self) => {
      json ||= self.opts().json === true;
    });
    c.action(async (...given: unknown[]) => {
      const opts = c.opts();
      // The program's own -d names the device when the command's does not; device commands fall back to $ANDROID_SERIAL.
      if (spec.device || spec.programDevice)
        opts.device ??=
          program.opts<{ device?: string }>().device ??
          (spec.device ? process.env.ANDROID_SERIAL || undefined : undefined);
      try {
        code = await spec.run({ args: given.slice(0, spec.args?.length ?? 0), opts, json });
      } catch (e) {
        code = reportFailure(e, json);
      }
    });
  }

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    // Scripts that asked for --json get the usage error as JSON too (the text still goes to stderr).
    if (e.exitCode !== 0 && argv.includes("--json"))
      printJsonError(new CliError(e.message.replace(/^error: /, ""), EXIT.usage));
    // --help and --version exit 0; every parse error, and a missing command, is a usage error.
    return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return code;
}

/** The spec's options and arguments on its commander command, in the order --help lists them. */
function declare(c: Command, spec: CommandSpec): void {
  if (spec.json !== false) c.option("--json", "machine-readable output on stdout").addHelpText("after", EXIT_CODES);
  if (spec.device)
    c.option("-d, --device <id>", DEVICE_OPTION).option(
      "--timeout <duration>",
      `how long one device call may take, e.g. 10s, 500ms, 2m (default ${DEFAULT_TIMEOUT_MS / 1000}s)`,
      duration,
    );
  if (spec.selector) addSelectorOptions(c, spec.selector);
  for (const a of spec.args ?? []) {
    if (a.parse) c.argument(a.spec, a.description, a.parse);
    else c.argument(a.spec, a.description);
  }
  for (const o of spec.options ?? []) {
    if (o.parse) c.option(o.flags, o.description, o.parse, o.default);
    else if (o.default !== undefined) c.option(o.flags, o.description, o.default as string);
    else c.option(o.flags, o.description);
  }
  if (spec.after) c.addHelpText("after", spec.after);
  if (spec.help) c.helpInformation = spec.help;
}
