/**
 * Appium's UiAutomator2 server on one phone (docs/android-helpers.md): started with
 * `am instrument -w` (the instrumentation keeps running while the server serves), reached through
 * `adb forward tcp:0 tcp:6790`, ready once `GET /status` answers, with one session. Every request
 * is bounded by the call's deadline; a connection that fails while the instrumentation has ended
 * is the server's death, reported as such.
 */
import { budgetMs, type CallContext, type Logger } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { type AdbkitPort, platformError, type RunningShell } from "../adbkit-port.ts";
import type { AndroidShell } from "../android-shell.ts";
import { SERVER_PACKAGE, SERVER_TEST_PACKAGE } from "./apks.ts";

/** The server's port on the phone (its ServerConfig default). */
export const UIA2_DEVICE_PORT = 6790;
const INSTRUMENT = `am instrument -w -e disableAnalytics true ${SERVER_TEST_PACKAGE}/androidx.test.runner.AndroidJUnitRunner`;
/** How long the server gets to answer /status after `am instrument` (Appium's default launch timeout). */
export const UIA2_START_MS = 30_000;
const STATUS_POLL_MS = 150;
/** One request's ceiling beside the call's deadline: a page source of a busy screen takes seconds. */
const REQUEST_CEILING_MS = 20_000;
/**
 * Settings for every session: a short idle wait (the default 10 s is what makes animated screens
 * fail) and no shutdown when the phone's power is unplugged (the server's default stops it).
 */
const SESSION_SETTINGS = { waitForIdleTimeout: 500, shutdownOnPowerDisconnect: false };

const startFailed = (why: string) =>
  new DriverError("platform_error", {
    platformCode: "android_helper_server_start_failed",
    retryable: true,
    message: `the UiAutomator2 server did not start: ${why}; \`devicerail android helper status\` shows what the phone has, \`devicerail android helper install\` reinstalls it`,
  });

export const serverDied = (output: string) =>
  new DriverError("platform_error", {
    platformCode: "android_helper_server_died",
    retryable: true,
    message: `the UiAutomator2 server's instrumentation ended (${output.trim().split("\n").at(-2) ?? "no output"}); devicerail falls back to the shell and restarts it`,
  });

export class Uia2Server {
  private instrument: RunningShell | null = null;
  private localPort = 0;
  private sessionId = "";
  private exited = false;

  constructor(
    private readonly port: AdbkitPort,
    private readonly shell: AndroidShell,
    readonly serial: string,
    private readonly log: Logger,
    private readonly startMs = UIA2_START_MS,
  ) {}

  /** Whether the instrumentation still runs (the server may serve). */
  get alive(): boolean {
    return this.instrument !== null && !this.exited;
  }

  async start(ctx: CallContext): Promise<void> {
    // A server left by an earlier daemon or by Appium holds the phone's one UiAutomation.
    await this.shell.exec(this.serial, `am force-stop ${SERVER_PACKAGE}; am force-stop ${SERVER_TEST_PACKAGE}`, ctx);
    const instrument = await this.port.spawnShell(this.serial, INSTRUMENT, ctx);
    this.instrument = instrument;
    this.exited = false;
    void instrument.ended.then(() => {
      if (this.instrument === instrument) this.exited = true;
    });
    try {
      this.localPort = await this.port.forward(this.serial, `tcp:${UIA2_DEVICE_PORT}`, ctx);
      const until = Date.now() + budgetMs(ctx, this.startMs);
      for (;;) {
        if (this.exited)
          throw startFailed(`its instrumentation ended: ${instrument.output().trim().slice(-300) || "no output"}`);
        const ready = await this.fetchJson("GET", "/status", undefined, ctx, 2_000).then(
          (r) => (r.value as { ready?: boolean } | null)?.ready === true,
          () => false,
        );
        if (ready) break;
        if (Date.now() + STATUS_POLL_MS > until) throw startFailed(`no answer on /status within ${this.startMs} ms`);
        await Bun.sleep(STATUS_POLL_MS);
        if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
      }
      const created = await this.fetchJson(
        "POST",
        "/session",
        { capabilities: { firstMatch: [{}], alwaysMatch: {} } },
        ctx,
      );
      const id = (created.value as { sessionId?: unknown } | null)?.sessionId;
      if (typeof id !== "string" || !id) throw startFailed("POST /session gave no session id");
      this.sessionId = id;
      await this.call("POST", "/appium/settings", { settings: SESSION_SETTINGS }, ctx);
    } catch (err) {
      await this.stop(ctx.signal.aborted ? undefined : ctx);
      throw err;
    }
  }

  /** A request of the session; its `value`, or a typed error for the server's error answer or its death. */
  async call(method: "GET" | "POST" | "DELETE", path: string, body: unknown, ctx: CallContext): Promise<unknown> {
    if (!this.alive) throw serverDied(this.instrument?.output() ?? "");
    const answer = await this.fetchJson(method, `/session/${this.sessionId}${path}`, body, ctx).catch(async (err) => {
      if (err instanceof DriverError) throw err;
      // A refused or cut connection: give the instrumentation's stream a moment to report an exit.
      await Promise.race([this.instrument?.ended, Bun.sleep(100)]);
      if (this.exited) throw serverDied(this.instrument?.output() ?? "");
      throw platformError("android_helper_server_failed", true, `${method} ${path}: ${String(err)}`);
    });
    const value = answer.value as { error?: unknown; message?: unknown } | null;
    if (answer.status >= 400 || (value && typeof value === "object" && typeof value.error === "string"))
      throw platformError(
        "android_helper_server_failed",
        answer.status >= 500,
        `${method} ${path}: HTTP ${answer.status} ${String(value?.error ?? "")}: ${String(value?.message ?? "").slice(0, 300)}`,
      );
    return answer.value;
  }

  private async fetchJson(
    method: string,
    path: string,
    body: unknown,
    ctx: CallContext,
    ceilingMs = REQUEST_CEILING_MS,
  ): Promise<{ status: number; value: unknown }> {
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    const budget = budgetMs(ctx, ceilingMs);
    let response: Response;
    try {
      response = await fetch(`http://127.0.0.1:${this.localPort}${path}`, {
        method,
        headers: { "content-type": "application/json; charset=utf-8", accept: "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(budget)]),
      });
    } catch (err) {
      if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
      if ((err as Error).name === "TimeoutError") throw new DriverError("driver_timed_out");
      throw err;
    }
    const text = await response.text();
    try {
      return { status: response.status, value: (JSON.parse(text) as { value?: unknown }).value ?? null };
    } catch {
      throw platformError(
        "android_helper_server_failed",
        true,
        `${method} ${path}: not JSON (HTTP ${response.status})`,
      );
    }
  }

  /**
   * Ends the session (the server then stops itself and its instrumentation ends), then makes sure:
   * force-stop, the forward removed. Never throws; `ctx` absent: a short context of its own.
   */
  async stop(outer?: CallContext): Promise<void> {
    const ctx: CallContext = outer ?? {
      signal: new AbortController().signal,
      deadline: Date.now() + 5_000,
      log: this.log,
    };
    const instrument = this.instrument;
    if (this.sessionId && this.alive)
      await this.fetchJson("DELETE", `/session/${this.sessionId}`, undefined, ctx, 2_000).catch(() => {});
    this.sessionId = "";
    if (instrument) await Promise.race([instrument.ended, Bun.sleep(1_500)]);
    await this.shell.exec(this.serial, `am force-stop ${SERVER_PACKAGE}`, ctx).catch(() => {});
    instrument?.close();
    this.exited = true;
    if (this.localPort) await this.port.removeForward(this.serial, this.localPort, ctx).catch(() => {});
    this.localPort = 0;
  }
}
