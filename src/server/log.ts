import { copyFileSync, existsSync, fstatSync, ftruncateSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import type { Logger } from "../protocol/rpc-error.ts";

/** daemon.log is kept under this size, with this many older files beside it (daemon.log.1 is the newest). */
export const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
export const LOG_ROTATE_KEEP = 3;

/**
 * A sink writing to descriptor `fd`, which is `path` opened for appending, that rotates the file by
 * size: past `maxBytes`, older files shift (path.1 → path.2 …, the oldest dropped), the current
 * content is copied to path.1 and the file truncated in place. Truncating keeps the descriptor, so
 * whatever else writes to it (the process's own stderr) lands in the fresh file too.
 */
export function rotatingSink(
  fd: number,
  path: string,
  maxBytes = LOG_ROTATE_BYTES,
  keep = LOG_ROTATE_KEEP,
): { write(line: string): void } {
  let size = fstatSync(fd).size;
  const rotate = () => {
    for (let i = keep - 1; i >= 1; i--) if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
    copyFileSync(path, `${path}.1`);
    ftruncateSync(fd, 0);
    size = 0;
  };
  return {
    write(line: string) {
      const bytes = Buffer.from(line);
      writeSync(fd, bytes);
      size += bytes.length;
      if (size < maxBytes) return;
      try {
        rotate();
      } catch {
        // A full disk or a removed file: keep logging where we are rather than stop the daemon.
        size = 0;
      }
    },
  };
}

/**
 * The data directory's daemon.log when stderr is that file (the CLI's background daemon writes
 * there, see src/cli/daemon-control.ts); null for a terminal, a pipe or any other file.
 */
function stderrLogFile(): string | null {
  const dir = process.env.DEVICERAIL_DATA_DIR;
  if (!dir) return null;
  const path = join(dir, "daemon.log");
  try {
    const fd = fstatSync(2);
    const file = statSync(path);
    return fd.isFile() && fd.ino === file.ino && fd.dev === file.dev ? path : null;
  } catch {
    return null;
  }
}

/**
 * Logs go to stderr only (stdout is the protocol channel): JSON for machines, readable lines when a
 * person is watching a terminal. pino-pretty runs as a plain stream, not a worker transport, so it
 * also works inside a compiled single binary. When stderr is the data directory's daemon.log, the
 * file is rotated by size (LOG_ROTATE_BYTES, LOG_ROTATE_KEEP older files).
 */
export async function createLogger(level: string): Promise<Logger> {
  const opts = {
    level,
    base: { pid: process.pid },
    redact: { paths: ["secret", "*.secret", "arguments.secret"], censor: "[redacted]" },
  };
  if (process.stderr.isTTY) {
    // Loaded only for a person at a terminal: it is the slowest import of the daemon.
    const { default: pretty } = await import("pino-pretty");
    return pino(opts, pretty({ destination: 2, sync: true, colorize: true })) as unknown as Logger;
  }
  const file = stderrLogFile();
  if (file) return pino(opts, rotatingSink(2, file)) as unknown as Logger;
  return pino(opts, pino.destination({ fd: 2, sync: true })) as unknown as Logger;
}
