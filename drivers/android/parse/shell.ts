/** Building device shell command lines: quoting, `input text` arguments and exit-status trailers. */
import { randomBytes } from "node:crypto";

/**
 * POSIX single-quote quoting: everything but `'` is literal inside '…', and `'` is written as
 * `'\''`. NUL cannot travel in an argv string at all, so it is refused rather than truncated.
 */
export function quote(arg: string): string {
  if (arg.includes("\u0000")) throw new RangeError("a shell argument cannot contain NUL");
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Printable ASCII only: `input text` maps characters through the virtual keyboard's key map. */
export function isAsciiTypable(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/** Well under the binder and command-line limits, and short enough for slow IMEs to keep up. */
export const MAX_INPUT_TEXT_CHUNK = 200;

/**
 * Arguments for successive `input text <arg>` calls that type `text` exactly. `input` turns every
 * "%s" into a space (and cannot take a real space through adb's argv join), so spaces are sent as
 * "%s", and a literal "%" followed by "s" is split across two calls so it never forms one. A "%s"
 * is never cut in two. Each argument still has to go through `quote`.
 */
export function inputTextChunks(text: string): string[] {
  if (!isAsciiTypable(text)) throw new RangeError("input text takes printable ASCII (0x20-0x7e) only");
  const chunks: string[] = [];
  let chunk = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const piece = c === " " ? "%s" : c;
    const splitHere = chunk.length + piece.length > MAX_INPUT_TEXT_CHUNK || (c === "s" && text[i - 1] === "%");
    if (splitHere && chunk) {
      chunks.push(chunk);
      chunk = "";
    }
    chunk += piece;
  }
  if (chunk) chunks.push(chunk);
  return chunks;
}

const MARKER = /^[A-Za-z0-9_]{8,64}$/;

/** A fresh marker for one command: random, so command output cannot fake the trailer. */
export function exitMarker(): string {
  return `__DR_${randomBytes(9).toString("hex")}`;
}

/**
 * The suffix that reports the command's status on stdout. The newline inside the quotes puts the
 * marker on a line of its own even when the output has no final newline, and one `echo` keeps
 * `$?` the command's status (a second command would report its own).
 */
export function exitTrailer(marker: string): string {
  if (!MARKER.test(marker)) throw new RangeError("an exit marker is 8..64 characters of [A-Za-z0-9_]");
  return `; echo "\n${marker}$?"`;
}

/**
 * Splits stdout of `command + exitTrailer(marker)` into the command's own output and its status.
 * Null when the trailer is missing or is not the last thing printed: the device went away (or
 * the shell died) before the command finished, so the body may be partial.
 */
export function splitExit(output: string, marker: string): { body: string; exitCode: number } | null {
  const at = output.lastIndexOf(`\n${marker}`);
  if (at < 0) return null;
  // A pty (legacy `shell:` on old devices) turns every \n into \r\n, the trailer's included.
  const m = /^(\d{1,3})\r?\n?$/.exec(output.slice(at + 1 + marker.length));
  const exitCode = Number(m?.[1]);
  if (!m || exitCode > 255) return null;
  const cut = m[0].includes("\r") && output[at - 1] === "\r" ? at - 1 : at;
  return { body: output.slice(0, cut), exitCode };
}
