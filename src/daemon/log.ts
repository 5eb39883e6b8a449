import pino from "pino";
import type { Logger } from "../rpc/rpc-error.ts";

/**
 * Logs go to stderr only (stdout is the protocol channel): JSON for machines, readable lines when a
 * person is watching a terminal. pino-pretty runs as a plain stream, not a worker transport, so it
 * also works inside a compiled single binary.
 */
export async function createLogger(level: string): Promise<Logger> {
  const opts = { level, base: { pid: process.pid }, redact: { paths: ["secret", "*.secret", "arguments.secret"], censor: "[redacted]" } };
  if (process.stderr.isTTY) {
    // Loaded only for a person at a terminal: it is the slowest import of the daemon.
    const { default: pretty } = await import("pino-pretty");
    return pino(opts, pretty({ destination: 2, sync: true, colorize: true })) as unknown as Logger;
  }
  return pino(opts, pino.destination({ fd: 2, sync: true })) as unknown as Logger;
}
