/** Process commands of the simulated phone: `ps -A` and `kill` over its ProcessTable. */
import type { CommandFn } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import type { FakePhone } from "./fake-phone.ts";
import type { PhoneProcess, Signal } from "./processes.ts";

const ZYGOTE_PID = 562;

/**
 * The process of `faults.uiautomationHolder`, started in the table on first need: an app's
 * instrumentation (Appium's server, ATX, Maestro) runs as the app's user under zygote; monkey is
 * started from a shell. Killing it clears the switch: the bridge is free again.
 */
export function uiAutomationHolder(phone: FakePhone): PhoneProcess | null {
  const name = phone.faults.uiautomationHolder;
  if (name === null) return null;
  const found = phone.processes.byName(name).find((p) => p.resident);
  if (found) return found;
  const shellTool = name.startsWith("com.android.commands.");
  const p = phone.processes.spawn(name, shellTool ? 3187 : ZYGOTE_PID, {
    user: shellTool ? "shell" : "u0_a190",
    resident: true,
  });
  p.controller.signal.addEventListener("abort", () => {
    if (phone.faults.uiautomationHolder === name) phone.faults.uiautomationHolder = null;
  });
  return p;
}

const SIGNALS: Readonly<Record<string, Signal>> = {
  "-9": "SIGKILL",
  "-KILL": "SIGKILL",
  "-15": "SIGTERM",
  "-TERM": "SIGTERM",
  "-1": "SIGHUP",
  "-HUP": "SIGHUP",
};

export function processCommands(phone: FakePhone): [string, CommandFn][] {
  const ps: CommandFn = (argv, io) => {
    if (argv.length !== 2 || argv[1] !== "-A") return unsupported(phone, argv, io);
    uiAutomationHolder(phone);
    io.out(phone.processes.ps(io.pid ?? null));
    return 0;
  };

  /**
   * `kill [-SIG] pid…`. A pid that is not running makes it exit 1; what it then prints on a phone
   * (mksh's builtin or toybox) is not quoted in any source we have, so this fake prints nothing.
   */
  const kill: CommandFn = (argv, io) => {
    let args = argv.slice(1);
    let signal: Signal = "SIGTERM";
    if (args[0]?.startsWith("-")) {
      const s = SIGNALS[args[0]];
      if (!s) return unsupported(phone, argv, io);
      signal = s;
      args = args.slice(1);
    }
    if (args.length === 0 || args.some((a) => !/^\d+$/.test(a))) return unsupported(phone, argv, io);
    let status = 0;
    for (const a of args) if (!phone.processes.kill(Number(a), signal)) status = 1;
    return status;
  };

  return [
    ["ps", ps],
    ["kill", kill],
  ];
}
