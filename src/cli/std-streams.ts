/**
 * The CLI's stdout and stderr: synchronous writes to descriptors 1 and 2, and whether each is a
 * terminal. Not process.stdout/process.stderr: in a compiled Bun binary the first touch of either
 * builds Node's stream and tty machinery, about 8 MiB of a client command's 45 (measured with
 * scripts/bench/startup.ts), and a command writes a few lines then exits.
 *
 * A write is whole and in order: a short write continues, a descriptor left non-blocking by the
 * parent (EAGAIN) is retried after a millisecond, and a reader that went away (EPIPE, as with
 * `devicerail sessions | head -1`) silences that stream rather than failing the command.
 */
import { fstatSync, statSync, writeSync } from "node:fs";

export interface StdStream {
  write(text: string): void;
  /** A terminal: colour, tables, spinners and prompts are for it only. */
  readonly isTTY: boolean;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

let devNull: number | bigint | null | undefined;
function isTerminal(fd: 1 | 2): boolean {
  // Windows consoles are not character devices in fstat's sense; there the stream's own answer is cheap enough.
  if (process.platform === "win32") return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return false;
    // /dev/null is a character device too, and no terminal.
    if (devNull === undefined)
      devNull = (() => {
        try {
          return statSync("/dev/null").rdev;
        } catch {
          return null;
        }
      })();
    return st.rdev !== devNull;
  } catch {
    return false;
  }
}

/** Where an in-process run (tests) sends what a command writes; it is no terminal. */
export interface Sinks {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}
const redirected: { 1?: (text: string) => void; 2?: (text: string) => void } = {};

/** Sends stdout and stderr to `sinks` until the returned function is called. */
export function redirect(sinks: Sinks): () => void {
  const before = { ...redirected };
  redirected[1] = sinks.stdout ?? (() => {});
  redirected[2] = sinks.stderr ?? (() => {});
  return () => {
    redirected[1] = before[1];
    redirected[2] = before[2];
  };
}

function stream(fd: 1 | 2): StdStream {
  let closed = false;
  let tty: boolean | undefined;
  return {
    write(text: string) {
      const sink = redirected[fd];
      if (sink) return sink(text);
      if (closed || text === "") return;
      const bytes = Buffer.from(text);
      let at = 0;
      while (at < bytes.length) {
        try {
          at += writeSync(fd, bytes, at, bytes.length - at);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "EAGAIN") Atomics.wait(pause, 0, 0, 1);
          else if (code === "EPIPE" || code === "EBADF") {
            closed = true;
            return;
          } else throw e;
        }
      }
    },
    get isTTY() {
      if (redirected[fd]) return false;
      tty ??= isTerminal(fd);
      return tty;
    },
  };
}

export const stdout: StdStream = stream(1);
export const stderr: StdStream = stream(2);
