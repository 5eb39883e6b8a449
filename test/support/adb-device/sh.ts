/**
 * The subset of Android's /system/bin/sh that adb clients send: words with single quotes, double
 * quotes and backslashes; `;`, newlines, `&&`, `||`; redirections `>f`, `>>f`, `<f`, `N>f`, `N>&M`;
 * `$NAME`, `${NAME}`, `$?` and `$$` (the shell's pid); assignments; the builtins `read`, `exit`,
 * `exec` (the command replaces the shell: same pid, and the shell ends with it) and `:`. Pipes, background
 * jobs, subshells and command substitution are refused with ShellSyntaxError, so a test notices.
 */
import { bytes, type CommandIo, concat, StdinBuffer, type StdinReader } from "./command-io.ts";

export type Part = { kind: "text"; value: string; quoted: boolean } | { kind: "var"; name: string; quoted: boolean };
export type Word = Part[];
export type RedirectOp = ">" | ">>" | "<" | ">&";
export interface Redirect {
  fd: number;
  op: RedirectOp;
  /** A file name, or the fd number for `>&`. */
  target: Word | number;
}
export interface SimpleCommand {
  assignments: { name: string; value: Word }[];
  words: Word[];
  redirects: Redirect[];
}
/** How an entry joins the one before it (the first entry's is `;`). */
export type Connector = ";" | "&&" | "||";
export type Script = { command: SimpleCommand; connector: Connector }[];

export class ShellSyntaxError extends Error {
  override name = "ShellSyntaxError";
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;

export function parseScript(src: string): Script {
  const script: Script = [];
  let cmd: SimpleCommand = { assignments: [], words: [], redirects: [] };
  let word: Word | null = null;
  let connector: Connector = ";";
  let redirect: { fd: number; op: RedirectOp } | null = null;
  // After && or || the list continues on the next line.
  let needCommand = false;
  let i = 0;

  const add = (value: string, quoted: boolean) => {
    word ??= [];
    const last = word.at(-1);
    if (last?.kind === "text" && last.quoted === quoted) last.value += value;
    else word.push({ kind: "text", value, quoted });
  };
  const endWord = () => {
    if (!word) return;
    const w = word;
    word = null;
    if (redirect) {
      cmd.redirects.push({ ...redirect, target: w });
      redirect = null;
      return;
    }
    const first = w[0];
    const m =
      cmd.words.length === 0 && first?.kind === "text" && !first.quoted
        ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(first.value)
        : null;
    if (m && first?.kind === "text") {
      const rest = first.value.slice(m[0].length);
      cmd.assignments.push({
        name: m[1] as string,
        value: [...(rest ? [{ ...first, value: rest }] : []), ...w.slice(1)],
      });
    } else cmd.words.push(w);
  };
  const endCommand = (next: Connector, newline = false) => {
    endWord();
    if (redirect) throw new ShellSyntaxError("redirection without a target");
    const empty = cmd.words.length === 0 && cmd.assignments.length === 0 && cmd.redirects.length === 0;
    if (empty && needCommand && newline) return; // `a &&\n b`
    if (empty && (next !== ";" || needCommand)) throw new ShellSyntaxError(`unexpected ${next}`);
    if (!empty) script.push({ command: cmd, connector });
    cmd = { assignments: [], words: [], redirects: [] };
    connector = empty ? connector : next;
    needCommand = next !== ";";
  };
  const dollar = (quoted: boolean) => {
    const c = src[i];
    if (c === "{") {
      const close = src.indexOf("}", i);
      const name = src.slice(i + 1, close);
      if (close < 0 || !/^([A-Za-z_][A-Za-z0-9_]*|\?|\$)$/.test(name))
        throw new ShellSyntaxError("unsupported parameter expansion ${");
      i = close + 1;
      return pushVar(name, quoted);
    }
    NAME.lastIndex = i;
    const m = NAME.exec(src);
    if (m) {
      i += m[0].length;
      return pushVar(m[0], quoted);
    }
    if (c === "?" || c === "$") {
      i++;
      return pushVar(c, quoted);
    }
    if (c !== undefined && "(#@*!$-0123456789".includes(c)) throw new ShellSyntaxError(`unsupported expansion $${c}`);
    add("$", quoted);
  };
  const pushVar = (name: string, quoted: boolean) => {
    word ??= [];
    word.push({ kind: "var", name, quoted });
  };

  while (i < src.length) {
    const c = src[i++] as string;
    if (c === "'") {
      const close = src.indexOf("'", i);
      if (close < 0) throw new ShellSyntaxError("unterminated '");
      add(src.slice(i, close), true);
      i = close + 1;
    } else if (c === '"') {
      add("", true);
      for (;;) {
        if (i >= src.length) throw new ShellSyntaxError('unterminated "');
        const d = src[i++] as string;
        if (d === '"') break;
        if (d === "\\" && i < src.length && '$`"\\\n'.includes(src[i] as string)) {
          const e = src[i++] as string;
          if (e !== "\n") add(e, true);
        } else if (d === "$") dollar(true);
        else if (d === "`") throw new ShellSyntaxError("unsupported command substitution `");
        else add(d, true);
      }
    } else if (c === "\\") {
      if (i >= src.length) add("\\", false);
      else if (src[i] === "\n") i++;
      else add(src[i++] as string, true);
    } else if (c === "$") dollar(false);
    else if (c === " " || c === "\t") endWord();
    else if (c === "\n") endCommand(";", true);
    else if (c === ";") endCommand(";");
    else if (c === "&" || c === "|") {
      if (src[i] !== c) throw new ShellSyntaxError(c === "|" ? "unsupported pipe |" : "unsupported background job &");
      i++;
      endCommand(c === "&" ? "&&" : "||");
    } else if (c === ">" || c === "<") {
      const w = word as Word | null;
      const p = w?.length === 1 ? w[0] : undefined;
      let fd = c === "<" ? 0 : 1;
      if (p?.kind === "text" && !p.quoted && /^\d$/.test(p.value)) {
        fd = Number(p.value);
        word = null;
      } else endWord();
      if (redirect) throw new ShellSyntaxError("redirection without a target");
      let op: RedirectOp = c;
      if (c === ">" && src[i] === ">") (op = ">>"), i++;
      else if (c === ">" && src[i] === "&") {
        i++;
        const m = /^[12]/.exec(src.slice(i));
        if (!m || fd > 2) throw new ShellSyntaxError("unsupported redirection >&");
        i += 1;
        cmd.redirects.push({ fd, op: ">&", target: Number(m[0]) });
        continue;
      } else if (src[i] === "&" || src[i] === "(" || src[i] === "|")
        throw new ShellSyntaxError(`unsupported redirection ${c}${src[i]}`);
      if (fd > 2) throw new ShellSyntaxError(`unsupported file descriptor ${fd}`);
      redirect = { fd, op };
    } else if (c === "(" || c === ")" || c === "`")
      throw new ShellSyntaxError(`unsupported ${c === "`" ? "command substitution" : "subshell"} ${c}`);
    else if (c === "#" && word === null) {
      const nl = src.indexOf("\n", i);
      i = nl < 0 ? src.length : nl;
    } else add(c, false);
  }
  endCommand(";", true);
  if (needCommand) throw new ShellSyntaxError("unexpected end of script after && or ||");
  return script;
}

/** Expands one word to fields: unquoted variables are split on blanks, everything else is literal. */
export function expandWord(word: Word, lookup: (name: string) => string | undefined): string[] {
  const fields: string[] = [];
  let cur = "";
  let have = false;
  for (const p of word) {
    const value = p.kind === "text" ? p.value : (lookup(p.name) ?? "");
    if (p.kind === "text" || p.quoted) {
      cur += value;
      have = true;
      continue;
    }
    value.split(/[ \t\n]+/).forEach((piece, k) => {
      if (k > 0 && have) {
        fields.push(cur);
        cur = "";
        have = false;
      }
      if (piece) (cur += piece), (have = true);
    });
  }
  if (have) fields.push(cur);
  return fields;
}

/** What the interpreter needs from the device. */
export interface ShellHost {
  /** Runs a command; with `replace` it takes over the shell's process (the `exec` builtin). */
  exec(argv: string[], io: CommandIo, replace?: boolean): Promise<number>;
  readFile(path: string): Uint8Array | null;
  writeFile(path: string, data: Uint8Array, append: boolean): void;
}

export interface ShellEnv {
  vars: Map<string, string>;
  status: number;
}

class ExitSignal {
  constructor(readonly status: number) {}
}

/** Runs a parsed script; returns the status of the last command run (or of `exit`). */
export async function runScript(
  script: Script,
  io: CommandIo,
  host: ShellHost,
  env: ShellEnv = { vars: new Map(), status: 0 },
): Promise<number> {
  try {
    for (const { command, connector } of script) {
      if (io.signal.aborted) break;
      if ((connector === "&&" && env.status !== 0) || (connector === "||" && env.status === 0)) continue;
      env.status = await runSimple(command, io, host, env);
    }
  } catch (e) {
    if (!(e instanceof ExitSignal)) throw e;
    env.status = e.status;
  }
  return env.status;
}

async function runSimple(cmd: SimpleCommand, io: CommandIo, host: ShellHost, env: ShellEnv): Promise<number> {
  const lookup = (name: string) =>
    name === "?" ? String(env.status) : name === "$" ? String(io.pid ?? 0) : env.vars.get(name);
  const argv = cmd.words.flatMap((w) => expandWord(w, lookup));
  const assigned = cmd.assignments.map((a) => [a.name, expandWord(a.value, lookup).join(" ")] as const);
  type Sink = CommandIo["out"];
  const sinks: Record<number, Sink> = { 1: io.out, 2: io.err };
  let stdin: StdinReader = io.stdin;
  const files: { path: string; parts: Uint8Array[]; append: boolean }[] = [];
  for (const r of cmd.redirects) {
    if (r.op === ">&") {
      sinks[r.fd] = sinks[r.target as number] as Sink;
      continue;
    }
    const path = expandWord(r.target as Word, lookup).join(" ");
    if (r.op === "<") {
      const data = host.readFile(path);
      if (!data) {
        io.err(`/system/bin/sh: can't open '${path}': No such file or directory\n`);
        return 1;
      }
      stdin = readerOf(data);
    } else if (path === "/dev/null") sinks[r.fd] = () => {};
    else {
      const file = { path, parts: [] as Uint8Array[], append: r.op === ">>" };
      host.writeFile(path, new Uint8Array(0), file.append);
      files.push(file);
      sinks[r.fd] = (d) => file.parts.push(bytes(d));
    }
  }
  const sub: CommandIo = {
    stdin,
    out: sinks[1] as Sink,
    err: sinks[2] as Sink,
    signal: io.signal,
    unplug: io.unplug,
    ...(io.pid !== undefined ? { pid: io.pid } : {}),
  };
  try {
    if (argv.length === 0) {
      for (const [k, v] of assigned) env.vars.set(k, v);
      return 0;
    }
    const [name, ...args] = argv as [string, ...string[]];
    if (name === ":") return 0;
    if (name === "exit") throw new ExitSignal(args[0] === undefined ? env.status : Number(args[0]) & 0xff);
    if (name === "exec") {
      if (args.length === 0) {
        io.err("fake sh: exec without a command is not simulated\n");
        throw new ExitSignal(2);
      }
      throw new ExitSignal(await host.exec(args, sub, true));
    }
    if (name === "read")
      return await readBuiltin(
        args,
        sub,
        env,
        assigned.some(([k, v]) => k === "IFS" && v === ""),
      );
    // Assignments before a command would only reach its environment, which no fake command reads.
    return await host.exec(argv, sub);
  } finally {
    for (const f of files) host.writeFile(f.path, concat(f.parts), true);
  }
}

function readerOf(data: Uint8Array): StdinReader {
  const b = new StdinBuffer();
  b.push(data);
  b.end();
  return b;
}

/** `read [-r] NAME…`: one line of stdin, split over the names; status 1 at end of input. */
async function readBuiltin(args: string[], io: CommandIo, env: ShellEnv, keepBlanks: boolean): Promise<number> {
  const raw = args[0] === "-r";
  const names = raw ? args.slice(1) : args;
  let line = await io.stdin.readLine();
  if (line === null) {
    for (const n of names) env.vars.set(n, "");
    return 1;
  }
  if (!raw) line = line.replace(/\\(.)/g, "$1");
  if (!keepBlanks) line = line.replace(/^[ \t]+|[ \t]+$/g, "");
  const targets = names.length ? names : ["REPLY"];
  const fields = keepBlanks || targets.length === 1 ? [line] : line.split(/[ \t]+/);
  targets.forEach((n, k) => env.vars.set(n, k === targets.length - 1 ? fields.slice(k).join(" ") : (fields[k] ?? "")));
  return 0;
}
