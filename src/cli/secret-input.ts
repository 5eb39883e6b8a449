/**
 * The value for `type --secret`: typed at a prompt with echo off when stdin is a terminal, else all
 * of stdin (one trailing newline dropped, so `printf '%s\n' "$PW" |` and a file both work). Never
 * a command-line argument: other users of the machine can read argv (ps, /proc/<pid>/cmdline).
 */
import { CliError, EXIT } from "./output.ts";

interface TtyIn {
  isTTY?: boolean;
  setRawMode(raw: boolean): unknown;
  on(event: "data", f: (chunk: Buffer | string) => void): unknown;
  off(event: "data", f: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export async function readSecret(
  stdin: TtyIn = process.stdin as TtyIn,
  prompt: { write(s: string): unknown } = process.stderr,
): Promise<string> {
  const value = stdin.isTTY ? await fromPrompt(stdin, prompt) : dropNewline(await Bun.stdin.text());
  if (value === "")
    throw new CliError(stdin.isTTY ? "no secret was typed" : "type --secret read nothing from stdin", EXIT.usage);
  return value;
}

const dropNewline = (s: string) => s.replace(/\r?\n$/, "");

/**
 * Raw mode, so the terminal shows nothing of what is typed. Enter (or Ctrl-D) ends it, Ctrl-C
 * interrupts, Backspace deletes one character and Ctrl-U all of them.
 */
function fromPrompt(stdin: TtyIn, prompt: { write(s: string): unknown }): Promise<string> {
  // Echo goes off before the prompt shows, so nothing typed after it can be echoed.
  stdin.setRawMode(true);
  stdin.resume();
  prompt.write("secret (not shown): ");
  return new Promise((resolve, reject) => {
    let chars: string[] = [];
    // An arrow or function key sends ESC [ … letter: none of it is part of the secret.
    let escape: "no" | "esc" | "csi" = "no";
    const finish = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      prompt.write("\n");
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (escape === "esc") {
          escape = ch === "[" || ch === "O" ? "csi" : "no";
          continue;
        }
        if (escape === "csi") {
          if (/[@-~]/.test(ch) && ch !== "[") escape = "no";
          continue;
        }
        if (ch === "\u001b") {
          escape = "esc";
          continue;
        }
        if (ch === "\r" || ch === "\n" || ch === "\u0004") {
          finish();
          resolve(chars.join(""));
          return;
        }
        if (ch === "\u0003") {
          finish();
          reject(new CliError("interrupted", EXIT.interrupted));
          return;
        }
        if (ch === "\u007f" || ch === "\b") chars = chars.slice(0, -1);
        else if (ch === "\u0015") chars = [];
        else if (ch >= " ") chars.push(ch);
      }
    };
    stdin.on("data", onData);
  });
}
