/**
 * The only file that imports adbkit. Bluebird promises, Node streams and adbkit's error strings
 * stop here: every call takes a CallContext, is bounded by its deadline (and a hard ceiling),
 * closes its socket when aborted, and fails with a DriverError.
 *
 * The named import matters: the default export breaks inside `bun build --compile`.
 * Over 300 lines because the port is the only adbkit import by design (the fences enforce it).
 */
import { Adb } from "@devicefarmer/adbkit";
import * as connectionModule from "@devicefarmer/adbkit/dist/src/adb/connection.js";
import { type Duplex, Readable } from "node:stream";
import { type CallContext, budgetMs } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { parseAdbClientVersion } from "./parse/adb-version.ts";

/**
 * adbkit's connection class. Its module is CommonJS: the class is `default` under Bun's interop,
 * and `default.default` in a compiled binary.
 */
const Connection = (() => {
  let c: unknown = connectionModule;
  while (typeof c !== "function" && c !== null && typeof c === "object" && "default" in c)
    c = (c as { default: unknown }).default;
  return c as typeof connectionModule.default;
})();

/** The reference's ceiling for one adb command, long enough for a 60 s swipe. */
export const COMMAND_CEILING_MS = 65_000;
/** Screenshots and dumps above this are refused rather than buffered (a 1440×3200 PNG is ~3 MB). */
export const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

export interface AdbEntry {
  serial: string;
  state: string;
}

export interface TrackHandlers {
  /** A device appeared or changed state. */
  onState(entry: AdbEntry): void;
  onRemove(serial: string): void;
  /** The tracking connection ended (server killed or restarted); the port does not retry itself. */
  onEnd(err: unknown): void;
}

export const platformError = (platformCode: string, retryable: boolean, detail?: string) =>
  new DriverError("platform_error", { platformCode, retryable, ...(detail ? { detail } : {}) });

/** adbkit reports transport problems as `Failure: '<adb message>'`; these become typed codes. */
function mapAdbError(err: unknown, serial: string | null): DriverError {
  if (err instanceof DriverError) return err;
  const text = String((err as Error)?.message ?? err);
  if (/ECONNREFUSED|ECONNRESET|EPIPE|connect ENOENT/.test(text))
    return platformError("android_adb_process_failed", true, text);
  if (/not found/.test(text) && serial) return platformError("android_device_missing", true, text);
  if (/unauthorized/.test(text)) return platformError("android_device_unauthorized", true, text);
  if (/offline/.test(text)) return platformError("android_device_offline", true, text);
  if (/no permissions/.test(text)) return platformError("android_device_permission_denied", false, text);
  return platformError("android_adb_read_failed", true, text);
}

/**
 * Runs `start` under the context: rejects with driver_cancelled on abort and driver_timed_out at
 * the earlier of the deadline and `ceilingMs`, calling `cleanup` either way (and after success).
 */
function bounded<T>(
  ctx: CallContext,
  ceilingMs: number,
  start: () => Promise<T>,
  cleanup: () => void = () => {},
): Promise<T> {
  if (ctx.signal.aborted) return Promise.reject(new DriverError("driver_cancelled"));
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
      cleanup();
      fn();
    };
    const onAbort = () => finish(() => reject(new DriverError("driver_cancelled")));
    const budget = budgetMs(ctx, ceilingMs);
    const timer = setTimeout(() => finish(() => reject(new DriverError("driver_timed_out"))), budget);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    start().then(
      (v) => finish(() => resolve(v)),
      (err) => finish(() => reject(err)),
    );
  });
}

/**
 * Opens a stream with `open`, consumes it with `consume`, and guarantees that the stream is
 * destroyed when the call is aborted or runs past its deadline (which closes the adb socket, so
 * the adb server closes the device-side stream too).
 */
function guarded<T>(
  ctx: CallContext,
  serial: string | null,
  open: () => PromiseLike<Duplex>,
  consume: (s: Duplex) => Promise<T>,
  ceilingMs = COMMAND_CEILING_MS,
): Promise<T> {
  let stream: Duplex | null = null;
  let done = false;
  return bounded(
    ctx,
    ceilingMs,
    async () => {
      let s: Duplex;
      try {
        s = await open();
      } catch (err) {
        throw mapAdbError(err, serial);
      }
      // Opened after the call ended: nobody will read it.
      if (done) {
        s.destroy();
        return undefined as T;
      }
      stream = s;
      // A stream error after it was opened (socket reset) must not be an unhandled event.
      s.on("error", () => {});
      try {
        return await consume(s);
      } catch (err) {
        throw mapAdbError(err, serial);
      }
    },
    () => {
      done = true;
      stream?.destroy();
    },
  );
}

/** Reads a stream to its end, refusing more than `max` bytes. */
function readAll(s: Duplex, max = MAX_OUTPUT_BYTES): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    s.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        s.destroy();
        reject(platformError("android_adb_output_too_large", false, `more than ${max} bytes`));
      } else chunks.push(c);
    });
    s.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    s.on("close", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    s.on("error", (err) => reject(err));
  });
}

export interface RunningShell {
  output(): string;
  ended: Promise<void>;
  close(): void;
}

export interface AdbPortOptions {
  host?: string;
  port: number;
  /** The adb executable, for starting a server that is not running. */
  bin: string;
}

export class AdbkitPort {
  private readonly client: ReturnType<typeof Adb.createClient>;

  constructor(readonly opts: AdbPortOptions) {
    const client = Adb.createClient({ host: opts.host ?? "127.0.0.1", port: opts.port, bin: opts.bin });
    // adbkit runs `<bin> -P <port> start-server` by itself whenever a connection is refused, and
    // start-server replaces a running server of another version: servers start only through
    // startServer, so each connection is made as one that already tried.
    if (typeof Connection === "function")
      client.connection = () => {
        const connection = new Connection(client.options);
        (connection as unknown as { triedStarting: boolean }).triedStarting = true;
        connection.on("error", (err: unknown) => client.emit("error", err));
        return connection.connect();
      };
    this.client = client;
  }

  /** The server's protocol version; fails when no server answers. */
  version(ctx: CallContext): Promise<number> {
    return withDeadline<number>(ctx, () => this.client.version(), 5_000);
  }

  listDevices(ctx: CallContext): Promise<AdbEntry[]> {
    return withDeadline<{ id: string; type: string }[]>(ctx, () => this.client.listDevices(), 5_000).then((list) =>
      list.map((d) => ({ serial: d.id, state: d.type })),
    );
  }

  /** Follows host:track-devices until stop() or until the server goes away (then onEnd). */
  async track(handlers: TrackHandlers, ctx: CallContext): Promise<{ stop(): void }> {
    const tracker = await withDeadline<import("node:events").EventEmitter & { end(): void }>(
      ctx,
      () => this.client.trackDevices(),
      5_000,
    );
    let ended = false;
    const end = (err: unknown) => {
      if (ended) return;
      ended = true;
      handlers.onEnd(err);
    };
    tracker.on("add", (d: { id: string; type: string }) => handlers.onState({ serial: d.id, state: d.type }));
    tracker.on("change", (d: { id: string; type: string }) => handlers.onState({ serial: d.id, state: d.type }));
    tracker.on("remove", (d: { id: string }) => handlers.onRemove(d.id));
    tracker.on("end", () => end(null));
    tracker.on("error", (err: unknown) => end(err));
    return {
      stop: () => {
        ended = true;
        tracker.end();
      },
    };
  }

  /** Runs one shell command and returns its output (stdout and stderr merged, as legacy shell gives). */
  shell(
    serial: string,
    command: string,
    ctx: CallContext,
    opts: { stdin?: string; ceilingMs?: number } = {},
  ): Promise<Uint8Array> {
    return guarded(
      ctx,
      serial,
      () => this.client.getDevice(serial).shell(command),
      (s) => {
        if (opts.stdin !== undefined) s.write(opts.stdin);
        return readAll(s);
      },
      opts.ceilingMs,
    );
  }

  /**
   * Runs `command` through the `exec:` service (what `adb exec-out` uses): raw bytes, no pty and
   * no CRLF translation, so a PNG arrives as the device wrote it. adbkit has no call for it, so
   * the request goes over the device transport it opens.
   */
  exec(serial: string, command: string, ctx: CallContext): Promise<Uint8Array> {
    return guarded(
      ctx,
      serial,
      async () => {
        const transport = await this.client.getDevice(serial).transport();
        const request = Buffer.from(`exec:${command}`, "utf8");
        transport.write(Buffer.concat([Buffer.from(request.length.toString(16).padStart(4, "0"), "ascii"), request]));
        const reply = await transport.parser.readAscii(4);
        if (reply !== "OKAY") {
          await transport.parser.readError().catch((err: unknown) => {
            transport.end();
            throw err;
          });
        }
        return transport.parser.raw();
      },
      (s) => readAll(s),
    );
  }

  /**
   * `exec-out screencap -p`, of the physical display `displayId` when given. exec: merges stderr
   * into the stream (adbd's ShellService runs `sh -c <command>` with stderr dup'ed onto the
   * socket), so stderr goes to /dev/null: screencap's warnings (several displays, linker
   * messages) would otherwise land in front of the PNG.
   */
  screencap(serial: string, ctx: CallContext, displayId: string | null = null): Promise<Uint8Array> {
    if (displayId !== null && !/^\d{1,20}$/.test(displayId))
      return Promise.reject(
        platformError("android_adb_malformed_observation", false, `not a display id: ${displayId}`),
      );
    return this.exec(serial, `screencap -p${displayId === null ? "" : ` -d ${displayId}`} 2>/dev/null`, ctx);
  }

  /**
   * A shell command that keeps running (`am instrument -w`): its output so far (the last 64 KiB),
   * a promise that settles when its stream ends (the command exited, or the phone went away), and
   * close(), which ends the stream.
   */
  async spawnShell(serial: string, command: string, ctx: CallContext): Promise<RunningShell> {
    const stream = await withDeadline<Duplex>(ctx, () => this.client.getDevice(serial).shell(command), 10_000);
    let output = "";
    const decoder = new TextDecoder();
    stream.on("data", (c: Buffer) => {
      output = (output + decoder.decode(c, { stream: true })).slice(-65_536);
    });
    const ended = new Promise<void>((resolve) => {
      stream.on("end", () => resolve());
      stream.on("close", () => resolve());
      stream.on("error", () => resolve());
    });
    return { output: () => output, ended, close: () => stream.destroy() };
  }

  /** Writes `bytes` to `remotePath` on the phone over sync (`adb push`), with mode 0644. */
  push(serial: string, bytes: Uint8Array, remotePath: string, ctx: CallContext): Promise<void> {
    return bounded(ctx, 300_000, async () => {
      try {
        // In pieces of sync's largest DATA record (64 KiB): adbkit sends what one read gives, and
        // adbd refuses a larger record.
        const pieces = function* () {
          for (let i = 0; i < bytes.length; i += 65_536) yield Buffer.from(bytes.subarray(i, i + 65_536));
        };
        const transfer = await this.client.getDevice(serial).push(Readable.from(pieces()), remotePath, 0o644);
        await new Promise<void>((resolve, reject) => {
          transfer.on("end", () => resolve());
          transfer.on("error", (err: unknown) => reject(err));
          ctx.signal.addEventListener("abort", () => transfer.cancel(), { once: true });
        });
      } catch (err) {
        throw mapAdbError(err, serial);
      }
    });
  }

  /**
   * `adb forward tcp:0 <remote>`: the adb server picks a free local port and answers it, so a busy
   * port never fails the forward. adbkit's forward does not read that answer, so the request goes
   * over a connection of its own.
   */
  async forward(serial: string, remote: string, ctx: CallContext): Promise<number> {
    const reply = await this.hostRequest(`host-serial:${serial}:forward:tcp:0;${remote}`, ctx, true);
    const port = Number(reply);
    if (!Number.isInteger(port) || port <= 0 || port > 65_535)
      throw platformError("android_adb_read_failed", true, `adb forward answered ${JSON.stringify(reply)}`);
    return port;
  }

  /** `adb forward --remove tcp:<port>`. */
  async removeForward(serial: string, localPort: number, ctx: CallContext): Promise<void> {
    await this.hostRequest(`host-serial:${serial}:killforward:tcp:${localPort}`, ctx, false);
  }

  /** One host request that answers OKAY, then OKAY (and a value when `value`) or FAIL with a message. */
  private hostRequest(request: string, ctx: CallContext, value: boolean): Promise<string> {
    return withDeadline(
      ctx,
      async () => {
        const c = await this.client.connection();
        try {
          const body = Buffer.from(request, "utf8");
          c.write(Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, "0"), "ascii"), body]));
          for (let i = 0; i < 2; i++) {
            const reply = await c.parser.readAscii(4);
            if (reply === "FAIL") await c.parser.readError();
            if (reply !== "OKAY") throw new Error(`adb answered ${reply} to ${request.split(":")[2]}`);
          }
          return value ? (await c.parser.readValue()).toString("utf8") : "";
        } finally {
          c.end();
        }
      },
      5_000,
    );
  }

  /** `getprop` as a map; run as a guarded shell so that an abort closes its socket. */
  async properties(serial: string, ctx: CallContext): Promise<Record<string, string>> {
    const out = new TextDecoder().decode(await this.shell(serial, "getprop", ctx, { ceilingMs: 10_000 }));
    const props: Record<string, string> = {};
    for (const m of out.matchAll(/^\[([^\]]+)\]: \[(.*)\]\r?$/gm)) props[m[1] as string] = m[2] as string;
    return props;
  }

  /**
   * Starts a server with `<adb> -P <port> server`: unlike `start-server`, it never asks a running
   * server its version, so it never kills one (of another version, which `start-server` does);
   * when the port is taken it fails to bind and exits non-zero. The child is killed when the call aborts.
   */
  async startServer(ctx: CallContext): Promise<void> {
    let proc: ReturnType<typeof Bun.spawn>;
    try {
      proc = Bun.spawn([this.opts.bin, "-P", String(this.opts.port), "server"], {
        stdout: "ignore",
        stderr: "pipe",
        stdin: "ignore",
        signal: ctx.signal,
      });
    } catch (err) {
      throw platformError("android_adb_not_found", false, `${this.opts.bin}: ${(err as Error).message}`);
    }
    const timer = setTimeout(() => proc.kill(), 10_000);
    const code = await proc.exited.finally(() => clearTimeout(timer));
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    if (code !== 0)
      throw platformError(
        "android_adb_spawn_failed",
        true,
        `${this.opts.bin} server exited ${code}: ${await new Response(proc.stderr as ReadableStream).text()}`,
      );
  }

  /** The server version of the adb executable itself (`adb version`, which starts no server); null when it cannot tell. */
  async clientVersion(ctx: CallContext): Promise<number | null> {
    try {
      const proc = Bun.spawn([this.opts.bin, "version"], {
        stdout: "pipe",
        stderr: "ignore",
        stdin: "ignore",
        signal: ctx.signal,
      });
      const timer = setTimeout(() => proc.kill(), 5_000);
      const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited]).finally(() =>
        clearTimeout(timer),
      );
      return parseAdbClientVersion(out);
    } catch {
      return null;
    }
  }
}

/** A non-stream adbkit call under the context's deadline (its socket closes with the process). */
function withDeadline<T>(ctx: CallContext, run: () => PromiseLike<T>, ceilingMs: number): Promise<T> {
  return bounded(ctx, ceilingMs, async () => {
    try {
      return await run();
    } catch (err) {
      throw mapAdbError(err, null);
    }
  });
}
