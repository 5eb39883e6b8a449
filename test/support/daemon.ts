import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "../..");

/**
 * The command that starts the daemon under test. DEVICERAIL_TEST_BIN points the same suite at a
 * compiled binary; by default the source runs under the current Bun.
 */
export function daemonCommand(args: string[] = ["serve"]): string[] {
  const bin = process.env.DEVICERAIL_TEST_BIN;
  return bin ? [bin, ...args] : [process.execPath, join(ROOT, "src/daemon/main.ts"), ...args];
}

const created: string[] = [];

/** Removes every directory tempDataDir made; run once after the whole test run (test/support/preload.ts). */
export function removeTempDataDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh private data directory (the store admits one daemon per directory), removed at exit. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-data-"));
  created.push(dir);
  return dir;
}

/** Environment for a daemon under test: quiet logs and its own data directory unless given. */
export function daemonEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...(process.env as Record<string, string>), DEVICERAIL_LOG_LEVEL: "warn", DEVICERAIL_DATA_DIR: extra.DEVICERAIL_DATA_DIR ?? tempDataDir(), ...extra };
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export interface RpcResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: any;
  error?: { code: number; message: string; data: { code: string; message: string; retryable: boolean; details: any } };
}

export const ALL_FEATURES = [
  "events.snapshot.v1",
  "request.control.v1",
  "device.routing.v1",
  "action.protected.v1",
  "events.stream.v1",
  "media.stream.v1",
  "session.export.page.v1",
  "observation.uiSnapshot.v1",
  "device.semanticActions.v1",
  "verdict.record.v1",
];

export function helloParams(opts: { min?: number; max?: number; required?: string[]; optional?: string[] } = {}) {
  return {
    client: { name: "devicerail-tests", version: "1.0.0" },
    protocol: { ranges: [{ major: 1, minMinor: opts.min ?? 0, maxMinor: opts.max ?? 5 }] },
    features: { required: opts.required ?? [], optional: opts.optional ?? ALL_FEATURES },
  };
}

/** A real daemon process on stdio: write lines, read response lines, observe exit and stderr. */
export class DaemonProcess {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private buffered = "";
  private lines: string[] = [];
  private waiters: ((line: string | null) => void)[] = [];
  private ended = false;
  private nextId = 1;
  stderr = "";
  readonly exited: Promise<number>;
  /** The daemon's data directory (created for it unless the caller passed DEVICERAIL_DATA_DIR). */
  readonly dataDir: string;
  private readonly ownsDataDir: boolean;

  constructor(opts: { env?: Record<string, string>; args?: string[] } = {}) {
    this.ownsDataDir = !opts.env?.DEVICERAIL_DATA_DIR;
    const env = daemonEnv(opts.env);
    this.dataDir = env.DEVICERAIL_DATA_DIR as string;
    const proc = Bun.spawn(daemonCommand(opts.args), { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe", env });
    this.proc = proc;
    this.exited = proc.exited;
    void this.pump();
    void (async () => {
      for await (const chunk of proc.stderr) this.stderr += new TextDecoder().decode(chunk);
    })();
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      this.buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = this.buffered.indexOf("\n")) >= 0) {
        this.push(this.buffered.slice(0, nl));
        this.buffered = this.buffered.slice(nl + 1);
      }
    }
    this.ended = true;
    for (const w of this.waiters.splice(0)) w(null);
  }

  private push(line: string): void {
    const w = this.waiters.shift();
    if (w) w(line);
    else this.lines.push(line);
  }

  /** Next raw stdout line, or null at EOF. */
  nextLine(timeoutMs = 10_000): Promise<string | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no stdout line within ${timeoutMs} ms; stderr:\n${this.stderr}`)), timeoutMs);
      this.waiters.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  async next(timeoutMs?: number): Promise<RpcResponse> {
    const line = await this.nextLine(timeoutMs);
    if (line === null) throw new Error(`daemon stdout ended; stderr:\n${this.stderr}`);
    return JSON.parse(line) as RpcResponse;
  }

  writeRaw(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    this.proc.stdin.flush();
  }

  send(message: unknown): void {
    this.writeRaw(`${JSON.stringify(message)}\n`);
  }

  /** Sends one request with a fresh numeric id (unless given) and returns its response. */
  async call(method: string, params?: unknown, extra: Record<string, unknown> = {}): Promise<RpcResponse> {
    const id = (extra.id as number | string | undefined) ?? this.nextId++;
    const msg: Record<string, unknown> = { jsonrpc: "2.0", id, method, ...extra };
    if (params !== undefined) msg.params = params;
    this.send(msg);
    return this.next();
  }

  async hello(opts?: Parameters<typeof helloParams>[0]): Promise<RpcResponse> {
    const r = await this.call("system.hello", helloParams(opts));
    if (!r.result) throw new Error(`hello failed: ${JSON.stringify(r)}`);
    return r;
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
