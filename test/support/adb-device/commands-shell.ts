/** Plain shell commands of the simulated phone: echo, true, false, sh, cat, rm, ls, getprop, setprop, settings, sleep, cmd. */
import { type CommandFn, type CommandIo, delay, text } from "./command-io.ts";
import { displayCommand } from "./displays.ts";
import type { FakePhone } from "./fake-phone.ts";
import { rotationAfter, settingsDenied } from "./rotation.ts";
import { notificationCommand } from "./packages.ts";

/** A known command called in a way the fake does not simulate: recorded so strict tests fail on it. */
export function unsupported(phone: FakePhone, argv: readonly string[], io: CommandIo): number {
  phone.problems.push(`unsupported arguments: ${argv.join(" ")}`);
  io.err(`fake ${argv[0]}: unsupported arguments: ${argv.slice(1).join(" ")}\n`);
  return 1;
}

function echo(argv: readonly string[], io: CommandIo): number {
  let args = argv.slice(1);
  let newline = true;
  let escapes = false;
  while (args[0] && /^-[neE]+$/.test(args[0])) {
    for (const f of args[0].slice(1)) f === "n" ? (newline = false) : (escapes = f === "e");
    args = args.slice(1);
  }
  let out = args.join(" ");
  if (escapes) out = out.replace(/\\([nt\\])/g, (_m, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : "\\"));
  io.out(newline ? `${out}\n` : out);
  return 0;
}

export function shellCommands(phone: FakePhone): [string, CommandFn][] {
  const notFound = (cmd: string, path: string, io: CommandIo) => (
    io.err(`${cmd}: ${path}: No such file or directory\n`), 1
  );

  const sh: CommandFn = async (argv, io) => {
    const [, first, second] = argv;
    if (first === "-c")
      return second === undefined
        ? (io.err("sh: -c: option requires an argument\n"), 2)
        : phone.runScriptText(second, io, "command-line");
    if (first !== undefined && first !== "-s") {
      const script = phone.files.text(first);
      return script === null
        ? (io.err(`sh: ${first}: No such file or directory\n`), 127)
        : phone.runScriptText(script, io, "file");
    }
    // The script arrives on stdin, so nothing of it appears in any command line.
    return phone.runScriptText(text(await io.stdin.readAll()), io, "stdin");
  };

  const cat: CommandFn = async (argv, io) => {
    const paths = argv.slice(1);
    if (paths.length === 0 || (paths.length === 1 && paths[0] === "-")) {
      for (let c = await io.stdin.read(); c; c = await io.stdin.read()) io.out(c);
      return 0;
    }
    let status = 0;
    for (const p of paths) {
      const data = phone.files.get(p);
      if (data) io.out(data);
      else if (phone.files.isDir(p)) io.err(`cat: ${p}: Is a directory\n`), (status = 1);
      else status = notFound("cat", p, io);
    }
    return status;
  };

  const rm: CommandFn = (argv, io) => {
    const flags = argv
      .slice(1)
      .filter((a) => a.startsWith("-"))
      .join("");
    let status = 0;
    for (const p of argv.slice(1).filter((a) => !a.startsWith("-")))
      if (!phone.files.remove(p) && !flags.includes("f")) status = notFound("rm", p, io);
    return status;
  };

  const ls: CommandFn = (argv, io) => {
    let status = 0;
    for (const p of argv.length > 1 ? argv.slice(1) : ["/"]) {
      const entries = phone.files.list(p);
      if (entries) io.out(entries.map((e) => `${e.name}\n`).join(""));
      else if (phone.files.has(p)) io.out(`${p}\n`);
      else status = notFound("ls", p, io);
    }
    return status;
  };

  const getprop: CommandFn = (argv, io) => {
    const [, key, fallback] = argv;
    if (key === undefined) {
      io.out(
        [...phone.props.entries()]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, v]) => `[${k}]: [${v}]\n`)
          .join(""),
      );
    } else io.out(`${phone.props.get(key) ?? fallback ?? ""}\n`);
    return 0;
  };

  const setprop: CommandFn = (argv, io) => {
    const [, key, value] = argv;
    if (key === undefined || value === undefined) return (io.err("usage: setprop NAME VALUE\n"), 1);
    phone.props.set(key, value);
    return 0;
  };

  const settings: CommandFn = (argv, io) => {
    const args = argv.slice(1);
    if (args[0] === "--user") args.splice(0, 2);
    const [verb, ns, key, ...value] = args;
    if (!ns || !["system", "secure", "global"].includes(ns)) return unsupported(phone, argv, io);
    const k = `${ns}/${key}`;
    if ((verb === "put" || verb === "delete") && key && phone.settingsDenied) return settingsDenied(verb, io);
    if (verb === "get" && key) io.out(`${phone.settings.get(k) ?? "null"}\n`);
    else if (verb === "put" && key && value.length) phone.settings.set(k, value.join(" "));
    else if (verb === "delete" && key) io.out(`Deleted ${phone.settings.delete(k) ? 1 : 0} rows\n`);
    else if (verb === "list") {
      const rows = [...phone.settings]
        .filter(([name]) => name.startsWith(`${ns}/`))
        .map(([name, v]) => `${name.slice(ns.length + 1)}=${v}\n`);
      io.out(rows.sort().join(""));
    } else return unsupported(phone, argv, io);
    if (verb !== "get" && verb !== "list")
      phone.rotation = rotationAfter(phone.settings, phone.allowedRotations, phone.rotation);
    return 0;
  };

  const sleep: CommandFn = async (argv, io) => {
    const seconds = Number(argv[1]);
    if (!Number.isFinite(seconds)) return unsupported(phone, argv, io);
    await delay(seconds * 1000, io.signal);
    return 0;
  };

  /**
   * `cmd <service> …` for the clipboard and the package manager. `cmd clipboard set text <text>`
   * takes exactly one text argument (so an unquoted space shows up as a problem) and prints
   * nothing. `cmd package …` is what `pm` runs on Android 7 and later, so both share one
   * implementation (the registered `pm`, which names itself in its problems).
   */
  const cmd: CommandFn = (argv, io) => {
    const [, service, ...args] = argv;
    const pm = phone.commands.get("pm");
    if (service === "package" && pm) return pm(["pm", ...args], io);
    if (service === "display") return displayCommand(phone.displays, args, io) ?? unsupported(phone, argv, io);
    if (service === "notification") return notificationCommand(phone, argv, io);
    if (service !== "clipboard") return unsupported(phone, argv, io);
    // Binder's default onShellCommand: the message on stderr, result 0 (callstack/agent-device PR #2676).
    if (!phone.clipboardShell) return (io.err("No shell command implementation.\n"), 0);
    if (args.length !== 3 || args[0] !== "set" || args[1] !== "text") return unsupported(phone, argv, io);
    phone.clipboard = args[2] as string;
    return 0;
  };

  return [
    ["echo", echo],
    ["true", () => 0],
    ["false", () => 1],
    ["sh", sh],
    ["cat", cat],
    ["rm", rm],
    ["ls", ls],
    ["getprop", getprop],
    ["setprop", setprop],
    ["settings", settings],
    ["sleep", sleep],
    ["cmd", cmd],
  ];
}
