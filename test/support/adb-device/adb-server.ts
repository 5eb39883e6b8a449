/**
 * A private real adb server for tests: its own free port (never 5037), its own temporary HOME (so
 * its RSA key and state never touch ~/.android) and TMPDIR, run as our child (`fork-server server`,
 * which does not fork) so a test can also kill it hard. Talks to it through the adb CLI and
 * directly over its smart-socket protocol (host:version, host:devices, host:track-devices).
 */
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { type AdbDeviceEntry, parseDevices } from "../../../src/cli/adb-host.ts";

/** The adb the tests run: DEVICERAIL_TEST_ADB, else the one on PATH, else Debian's. */
export const ADB_PATH = process.env.DEVICERAIL_TEST_ADB ?? Bun.which("adb") ?? "/usr/bin/adb";
const START_TIMEOUT_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export interface AdbResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout as bytes, for binary output such as `exec-out screencap -p`. */
  bytes: Uint8Array;
}

/** A line of host:devices and host:track-devices, parsed as the daemon's doctor parses it. */
export type DeviceEntry = AdbDeviceEntry;

/** A port the OS just handed out; closed again so the adb server can bind it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = a && typeof a === "object" ? a.port : 0;
      s.close(() =>
        port === 5037 || (port >= 5554 && port <= 5585) ? freePort().then(resolve, reject) : resolve(port),
      );
    });
  });
}

const live = new Set<Subprocess>();
// Last resort if a test file dies without its afterAll: no adb server outlives the test process.
process.on("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

function withTimeout<T>(promise: Promise<T>, ms: number, what: string, cleanup: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}: no answer within ${ms} ms`));
    }, ms);
    promise.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

export class AdbServer implements AsyncDisposable {
  private proc: Subprocess | null = null;
  private stopped = false;

  private constructor(
    readonly bin: string,
    readonly port: number,
    readonly home: string,
  ) {}

  static async start(options: { bin?: string; port?: number } = {}): Promise<AdbServer> {
    const home = mkdtempSync(join(tmpdir(), "devicerail-adb-"));
    const server = new AdbServer(options.bin ?? ADB_PATH, options.port ?? (await freePort()), home);
    try {
      await server.spawn();
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  /** The environment for anything that must use this server: the adb CLI, product code under test. */
  get env(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: this.home,
      TMPDIR: this.home,
      ANDROID_ADB_SERVER_PORT: String(this.port),
    };
  }

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The server's own log (stdout and stderr), for failure messages. */
  log(): string {
    const path = join(this.home, "server.log");
    return existsSync(path) ? readFileSync(path, "utf8") : "";
  }

  private async spawn(): Promise<void> {
    const log = join(this.home, "server.log");
    const fd = openSync(log, "a");
    let proc: Subprocess<"ignore", number, number>;
    try {
      // How the adb client starts a server, without its fork: `fork-server` logs to
      // ANDROID_ADB_LOG_PATH and writes "OK" to the reply fd once it accepts connections.
      proc = Bun.spawn([this.bin, "-P", String(this.port), "fork-server", "server", "--reply-fd", "3"], {
        env: { ...this.env, ANDROID_ADB_LOG_PATH: log },
        stdio: ["ignore", fd, fd, "pipe"],
      });
    } finally {
      closeSync(fd);
    }
    this.proc = proc;
    live.add(proc);
    void proc.exited.then(() => live.delete(proc));
    // Reading stdio[3] makes its fd ours to close.
    const replyFd = proc.stdio[3] as unknown as number;
    let reply: string;
    try {
      reply = await withTimeout(
        new Response(Bun.file(replyFd).stream()).text(),
        START_TIMEOUT_MS,
        `adb server on port ${this.port}`,
        () => proc.kill("SIGKILL"),
      );
    } finally {
      closeSync(replyFd);
    }
    // The reply fd ends empty when the server exits first (a port in use, say).
    if (reply !== "OK\n") throw new Error(`adb server did not start on port ${this.port}:\n${this.log()}`);
  }

  /** Starts the adb CLI against this server and returns the process (for tests that kill it mid-command). */
  spawnAdb(
    args: readonly string[],
    options: { stdin?: string | Uint8Array; timeoutMs?: number } = {},
  ): Subprocess<"pipe" | "ignore", "pipe", "pipe"> {
    return Bun.spawn([this.bin, "-P", String(this.port), ...args], {
      env: this.env,
      stdin: options.stdin === undefined ? "ignore" : "pipe",
      stdout: "pipe",
      stderr: "pipe",
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
  }

  /** Runs the adb CLI against this server. Never blocks the event loop (an in-process fake must keep serving). */
  async adb(
    args: readonly string[],
    options: { stdin?: string | Uint8Array; timeoutMs?: number } = {},
  ): Promise<AdbResult> {
    const proc = this.spawnAdb(args, options);
    if (options.stdin !== undefined && proc.stdin) {
      proc.stdin.write(options.stdin);
      await proc.stdin.end();
    }
    const [out, err, exitCode] = await Promise.all([
      new Response(proc.stdout).arrayBuffer(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const bytes = new Uint8Array(out);
    if (proc.signalCode) throw new Error(`adb ${args.join(" ")} was killed (${proc.signalCode}); stderr: ${err}`);
    return { exitCode, stdout: new TextDecoder().decode(bytes), stderr: err, bytes };
  }

  /** Opens a smart-socket connection and sends one host request; resolves with the socket after OKAY. */
  private request(service: string): Promise<{ socket: Socket; rest: Buffer }> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.port, "127.0.0.1");
      let buf = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length < 4) return;
        const status = buf.subarray(0, 4).toString();
        if (status === "OKAY") {
          socket.off("data", onData);
          return resolve({ socket, rest: buf.subarray(4) });
        }
        if (buf.length < 8) return;
        const len = parseInt(buf.subarray(4, 8).toString(), 16);
        if (buf.length < 8 + len) return;
        socket.destroy();
        reject(new Error(`adb server: ${service}: ${status} ${buf.subarray(8, 8 + len).toString()}`));
      };
      socket.on("data", onData);
      socket.once("error", reject);
      socket.once("connect", () => socket.write(`${service.length.toString(16).padStart(4, "0")}${service}`));
    });
  }

  /** Reads length-prefixed messages from a host socket, calling `each` until it returns true. */
  private async messages(service: string, each: (body: string) => boolean, timeoutMs: number): Promise<void> {
    const { socket, rest } = await this.request(service);
    let buf = rest;
    const done = new Promise<void>((resolve, reject) => {
      const drain = () => {
        while (buf.length >= 4) {
          const len = parseInt(buf.subarray(0, 4).toString(), 16);
          if (buf.length < 4 + len) return;
          const body = buf.subarray(4, 4 + len).toString();
          buf = buf.subarray(4 + len);
          if (each(body)) {
            socket.destroy();
            return resolve();
          }
        }
      };
      socket.on("data", (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        drain();
      });
      socket.once("close", () => reject(new Error(`adb server closed ${service}`)));
      drain();
    });
    return withTimeout(done, timeoutMs, `adb server ${service}`, () => socket.destroy());
  }

  /** The server's protocol version (41 for 29.0.6); also the health check. */
  async hostVersion(): Promise<number> {
    let version = 0;
    await this.messages("host:version", (b) => ((version = parseInt(b, 16)), true), 2000);
    return version;
  }

  async devices(): Promise<DeviceEntry[]> {
    let list: DeviceEntry[] = [];
    await this.messages("host:devices", (b) => ((list = parseDevices(b)), true), DEFAULT_TIMEOUT_MS);
    return list;
  }

  /**
   * Resolves with the device list once `until` accepts it, watching host:track-devices (no
   * polling). The tracker never reports a TCP device that just vanished (it stays listed for
   * about 60 s), so `poll: true` asks host:devices instead for that case, again as soon as each
   * answer arrives.
   */
  async waitForDevices(
    until: (list: DeviceEntry[]) => boolean,
    options: { timeoutMs?: number; poll?: boolean } = {},
  ): Promise<DeviceEntry[]> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let last: DeviceEntry[] = [];
    if (options.poll) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        last = await this.devices();
        if (until(last)) return last;
        if (Date.now() > deadline) throw new Error(`adb devices never matched; last: ${JSON.stringify(last)}`);
      }
    }
    try {
      await this.messages("host:track-devices", (b) => until((last = parseDevices(b))), timeoutMs);
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : e}; last device list: ${JSON.stringify(last)}`);
    }
    return last;
  }

  /** Waits until `serial` is listed in `state`, or (state null) is not listed at all. */
  waitForState(
    serial: string,
    state: string | null,
    options: { timeoutMs?: number; poll?: boolean } = {},
  ): Promise<DeviceEntry[]> {
    return this.waitForDevices((list) => {
      const e = list.find((d) => d.serial === serial);
      return state === null ? !e : e?.state === state;
    }, options);
  }

  /** Kills the server hard (SIGKILL), as a crash would; `restart()` brings it back on the same port. */
  async crash(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    p.kill("SIGKILL");
    await p.exited;
  }

  async restart(): Promise<void> {
    if (this.running) await this.crash();
    await this.spawn();
  }

  /** `kill-server`, then makes sure no server is left on the port, then removes HOME. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // kill-server also stops a server the CLI may have auto-started on this port after a crash.
    await this.adb(["kill-server"], { timeoutMs: 5000 }).catch(() => undefined);
    if (this.proc) {
      if (this.running) this.proc.kill("SIGKILL");
      await this.proc.exited;
      live.delete(this.proc);
    }
    rmSync(this.home, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

export const startAdbServer = (options?: { bin?: string; port?: number }): Promise<AdbServer> =>
  AdbServer.start(options);
