import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, daemonCommand, daemonEnv } from "./daemon.ts";

export const HELLO_LINE =
  '{"jsonrpc":"2.0","id":0,"method":"system.hello","params":{"client":{"name":"a","version":"b"},"protocol":{"ranges":[{"major":1,"minMinor":0,"maxMinor":5}]}}}\n';

/**
 * A daemon whose stdout is a FIFO this process holds open but does not read, so the daemon's
 * output really fills up (a piped Bun.spawn stdout is drained eagerly by the parent and never
 * pushes back). Input comes from a file, so the test never writes into a pipe the daemon stopped
 * reading. `lines` are sent after a hello.
 */
export function daemonOnUnreadFifo(lines: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-fifo-"));
  const fifo = join(dir, "out");
  if (Bun.spawnSync(["mkfifo", fifo]).exitCode !== 0) throw new Error("mkfifo failed");
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(fifo, "w");
  const input = join(dir, "in.ndjson");
  writeFileSync(input, HELLO_LINE + lines);
  const proc = Bun.spawn(daemonCommand(), {
    cwd: ROOT,
    stdin: Bun.file(input),
    stdout: writeFd,
    stderr: "pipe",
    env: daemonEnv({ DEVICERAIL_LOG_LEVEL: "info", DEVICERAIL_DATA_DIR: join(dir, "data"), ...env }),
  });
  closeSync(writeFd);
  let readerOpen = true;
  let rest = "";
  const buf = Buffer.alloc(1 << 16);
  return {
    proc,
    /** Resolves once the daemon logged that it serves (its signal handlers are installed by then). */
    async serving(): Promise<void> {
      const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("devicerail serving")) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the daemon exited before serving: ${seen}`);
        seen += new TextDecoder().decode(value);
      }
      reader.releaseLock();
    },
    /** Closes the read end: the daemon's next write fails with EPIPE. */
    closeReader() {
      closeSync(readFd);
      readerOpen = false;
    },
    /** Reads whatever complete lines are available now (non-blocking). */
    readAvailable(): string[] {
      const lines: string[] = [];
      for (;;) {
        let got = 0;
        try {
          got = readSync(readFd, buf);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EAGAIN") break;
          throw err;
        }
        if (got === 0) break;
        rest += buf.toString("utf8", 0, got);
      }
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        lines.push(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
      }
      return lines;
    },
    cleanup() {
      proc.kill("SIGKILL");
      if (readerOpen) closeSync(readFd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
