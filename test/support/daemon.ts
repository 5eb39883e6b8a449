import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { isAlive } from "../../src/server/daemon-record.ts";
import { LineClient } from "./line-client.ts";

export const ROOT = join(import.meta.dir, "../..");

/**
 * The command that starts the daemon under test. DEVICERAIL_TEST_BIN points the same suite at a
 * compiled binary; by default the source runs under the current Bun.
 */
export function daemonCommand(args: string[] = ["serve"]): string[] {
  const bin = process.env.DEVICERAIL_TEST_BIN;
  return bin ? [bin, ...args] : [process.execPath, join(ROOT, "src/main.ts"), ...args];
}

const created: string[] = [];

/** Removes every directory tempDataDir made; run once after the whole test run (test/support/preload.ts). */
export async function removeTempDataDirs(): Promise<void> {
  await stopBackgroundDaemons();
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * CLI commands start a daemon in the background on their data directory and leave it running
 * (that is the point); after each test, those of the test's temporary directories are stopped
 * (test/support/preload.ts), so they neither pile up nor outlive the run. Only daemons a command
 * started (they log to daemon.log): a daemon a test file spawned itself may serve several tests.
 */
export async function stopBackgroundDaemons(): Promise<void> {
  const pids: number[] = [];
  for (const dir of created) {
    if (!existsSync(join(dir, "daemon.log"))) continue;
    let pid: number | undefined;
    try {
      pid = (JSON.parse(readFileSync(join(dir, "listen.json"), "utf8")) as { pid?: number }).pid;
    } catch {}
    if (pid === undefined || pid === process.pid) continue;
    try {
      process.kill(pid, "SIGTERM");
      pids.push(pid);
    } catch {}
  }
  const deadline = Date.now() + 5_000;
  while (pids.some(isAlive) && Date.now() < deadline) await Bun.sleep(10);
  for (const pid of pids.filter(isAlive)) process.kill(pid, "SIGKILL");
}

/** A fresh private data directory (the store admits one daemon per directory), removed at exit. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-data-"));
  created.push(dir);
  return dir;
}

/**
 * Environment for a daemon under test: quiet logs, its own data directory, and no Android or
 * iOS driver unless given (a test daemon must never reach, or start, the machine's adb server on
 * 5037, nor drive the developer's Simulators; platform tests pass their own fakes' settings).
 */
export function daemonEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    DEVICERAIL_LOG_LEVEL: "warn",
    DEVICERAIL_ANDROID: "off",
    DEVICERAIL_IOS: "off",
    DEVICERAIL_DATA_DIR: extra.DEVICERAIL_DATA_DIR ?? tempDataDir(),
    ...extra,
  };
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export interface RpcResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: any;
  error?: { code: number; message: string; data: { code: string; message: string; retryable: boolean; details: any } };
}

export { ALL_FEATURES, helloParams } from "./hello.ts";

/** A real daemon process on stdio: write lines, read response lines, observe exit and stderr. */
export class DaemonProcess extends LineClient {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  stderr = "";
  readonly exited: Promise<number>;
  /** The daemon's data directory (created for it unless the caller passed DEVICERAIL_DATA_DIR). */
  readonly dataDir: string;
  private readonly ownsDataDir: boolean;

  constructor(opts: { env?: Record<string, string>; args?: string[] } = {}) {
    super();
    this.ownsDataDir = !opts.env?.DEVICERAIL_DATA_DIR;
    const env = daemonEnv(opts.env);
    this.dataDir = env.DEVICERAIL_DATA_DIR as string;
    const proc = Bun.spawn(daemonCommand(opts.args), { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe", env });
    this.proc = proc;
    this.exited = proc.exited;
    void (async () => {
      for await (const chunk of proc.stdout) this.receive(chunk);
      this.endOfInput();
    })();
    void (async () => {
      for await (const chunk of proc.stderr) this.stderr += new TextDecoder().decode(chunk);
    })();
  }

  protected override context(): string {
    return `; daemon stderr:\n${this.stderr}`;
  }

  writeRaw(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    this.proc.stdin.flush();
  }

  /** Closes stdin (EOF) and waits for the exit code. */
  async close(): Promise<number> {
    try {
      this.proc.stdin.end();
    } catch {}
    return this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.proc.exitCode === null && !this.proc.killed) {
      try {
        this.proc.stdin.end();
      } catch {}
      const t = setTimeout(() => this.proc.kill("SIGKILL"), 3_000);
      await this.exited;
      clearTimeout(t);
    }
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export function spawnDaemon(opts?: ConstructorParameters<typeof DaemonProcess>[0]): DaemonProcess {
  return new DaemonProcess(opts);
}

/** Replaces values that differ on every run (random ids, clocks) so whole responses can be compared. */
export function normalizeVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeVolatile);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "connectionId" && typeof v === "string") out[k] = "<uuid>";
      else if (/AtMs$/.test(k) && typeof v === "number") out[k] = "<ms>";
      else out[k] = normalizeVolatile(v);
    }
    return out;
  }
  return value;
}
