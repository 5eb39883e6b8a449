/**
 * The helpers of one connected phone, as the consent mode allows (DEVICERAIL_ANDROID_HELPER):
 * which apps it has, the UiAutomator2 server's life (started at connect, restarted after a crash
 * with a growing back-off, stopped at disconnect), and `fast()`, which runs a step through the
 * server and falls back to the shell once when the server fails, logging and counting it.
 */
import type { CallContext, Logger } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { messageOf } from "../../../src/protocol/errors.ts";
import type { AdbkitPort } from "../adbkit-port.ts";
import type { AndroidShell } from "../android-shell.ts";
import { type HelperPackages, installHelpers, readHelperPackages } from "./helper-packages.ts";
import { SERVER_PACKAGE, SERVER_TEST_PACKAGE, SETTINGS_PACKAGE } from "./apks.ts";
import { Uia2Server, UIA2_START_MS } from "./uia2-server.ts";

export type HelperMode = "off" | "use" | "install";

/** Back-off before each restart of a server that died: 1 s doubling to 60 s. */
const RESTART_BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 60_000];

/** What an observation's metadata says about the helpers (`metadata.androidHelper`). */
export interface HelperReport {
  /** How this step went: through the server, or the shell (absent, off, or fallen back). */
  path: "uiautomator2" | "shell";
  /** Steps of this connection that fell back to the shell after a server failure. */
  fallbacks: number;
  /** Why this step fell back, when it did. */
  fallback?: string;
}

export class DeviceHelpers {
  packages: HelperPackages | null = null;
  private server: Uia2Server | null = null;
  private starting: Promise<void> | null = null;
  private failures = 0;
  private restartAt = 0;
  fallbacks = 0;
  private stopped = false;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly port: AdbkitPort,
    private readonly shell: AndroidShell,
    readonly serial: string,
    readonly mode: HelperMode,
    private readonly log: Logger,
    private readonly startMs = UIA2_START_MS,
  ) {}

  private installed(pkg: string): boolean {
    return this.packages?.apps.some((a) => a.packageName === pkg && a.installed !== null) ?? false;
  }

  get settingsApp(): boolean {
    return this.installed(SETTINGS_PACKAGE);
  }

  get unicodeIme(): boolean {
    return this.settingsApp && (this.packages?.unicodeIme ?? false);
  }

  get serverInstalled(): boolean {
    return this.installed(SERVER_PACKAGE) && this.installed(SERVER_TEST_PACKAGE);
  }

  /** The running server, or null; a dead one is noticed here and its restart scheduled. */
  get running(): Uia2Server | null {
    if (this.server && !this.server.alive) this.lost("its instrumentation ended");
    return this.server;
  }

  /** At connect: what is installed (installing first in `install` mode), then the server. */
  async connect(ctx: CallContext): Promise<void> {
    if (this.mode === "off") return;
    this.packages = await readHelperPackages(this.shell, this.serial, ctx);
    const missing = this.packages.apps.some((a) => a.installed === null);
    if (this.mode === "install" && missing) {
      const installed = await installHelpers(this.port, this.shell, this.serial, ctx);
      this.log.info({ serial: this.serial, installed }, "installed the Android helpers");
      this.packages = await readHelperPackages(this.shell, this.serial, ctx);
    }
    if (this.serverInstalled) await this.startServer(ctx).catch(() => {});
  }

  private async startServer(ctx: CallContext): Promise<void> {
    const server = new Uia2Server(this.port, this.shell, this.serial, this.log, this.startMs);
    try {
      await server.start(ctx);
      if (this.stopped) {
        await server.stop();
        return;
      }
      this.server = server;
      this.failures = 0;
    } catch (err) {
      if (err instanceof DriverError && err.driverCode === "driver_cancelled") throw err;
      this.failures++;
      this.restartAt =
        Date.now() + (RESTART_BACKOFF_MS[Math.min(this.failures, RESTART_BACKOFF_MS.length) - 1] ?? 60_000);
      this.log.warn(
        { serial: this.serial, err: failureText(err) },
        "the UiAutomator2 server did not start; the shell serves",
      );
      if (this.failures < RESTART_BACKOFF_MS.length) this.scheduleRestart();
      throw err;
    }
  }

  /** The server failed: forget it, and schedule its restart. */
  private lost(why: string): void {
    const server = this.server;
    this.server = null;
    this.failures++;
    this.restartAt =
      Date.now() + (RESTART_BACKOFF_MS[Math.min(this.failures, RESTART_BACKOFF_MS.length) - 1] ?? 60_000);
    this.log.warn(
      { serial: this.serial, why },
      "the UiAutomator2 server stopped serving; the shell serves until it restarts",
    );
    void server?.stop();
    this.scheduleRestart();
  }

  /** The restart once the back-off has passed, without waiting for a step to ask for it. */
  private scheduleRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => this.maybeRestart(), Math.max(0, this.restartAt - Date.now()) + 10);
    this.restartTimer.unref?.();
  }

  /** Starts the server again in the background once its back-off has passed. */
  private maybeRestart(): void {
    if (this.stopped || this.server || this.starting || !this.serverInstalled || Date.now() < this.restartAt) return;
    const ctx: CallContext = {
      signal: new AbortController().signal,
      deadline: Date.now() + this.startMs + 5_000,
      log: this.log,
    };
    this.starting = this.startServer(ctx)
      .catch(() => {})
      .finally(() => {
        this.starting = null;
      });
  }

  /**
   * One step through the server when it runs, else (or when it fails) through the shell. A tree
   * falls back only once the server is stopped: the phone has one UiAutomation, and
   * `uiautomator dump` would meet the server's.
   */
  async fast<T>(
    ctx: CallContext,
    what: "tree" | "input",
    viaServer: (server: Uia2Server) => Promise<T>,
    viaShell: () => Promise<T>,
  ): Promise<{ value: T; report: HelperReport | null }> {
    // A phone without the server has nothing to report: every step is the shell's, as ever.
    if (!this.serverInstalled) return { value: await viaShell(), report: null };
    const server = this.running;
    if (!server) {
      this.maybeRestart();
      if (what === "tree" && this.starting) await this.starting;
      const again = this.running;
      if (!again) return { value: await viaShell(), report: { path: "shell", fallbacks: this.fallbacks } };
      return this.fast(ctx, what, viaServer, viaShell);
    }
    try {
      return { value: await viaServer(server), report: { path: "uiautomator2", fallbacks: this.fallbacks } };
    } catch (err) {
      if (ctx.signal.aborted || (err instanceof DriverError && err.driverCode === "driver_cancelled")) throw err;
      const why = failureText(err);
      this.fallbacks++;
      this.log.warn(
        { serial: this.serial, what, err: why },
        "the UiAutomator2 server failed a step; falling back to the shell once",
      );
      if (what === "tree" || !server.alive) {
        this.lost(why);
        await server.stop(ctx);
      }
      return { value: await viaShell(), report: { path: "shell", fallbacks: this.fallbacks, fallback: why } };
    }
  }

  /** At disconnect and daemon shutdown: the server stopped, its forward removed. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.starting;
    const server = this.server;
    this.server = null;
    await server?.stop();
  }
}

/** A failure as a log line: the message, and a DriverError's log-only detail. */
export const failureText = (err: unknown): string =>
  err instanceof DriverError && err.detail ? `${messageOf(err)}: ${err.detail}` : messageOf(err);
