/**
 * A simulated appium-uiautomator2-server (Apache-2.0) on the FakePhone: `am instrument -w …
 * io.appium.uiautomator2.server.test/androidx.test.runner.AndroidJUnitRunner` (commands-instrument.ts)
 * starts it, it listens on device port 6790, and the host reaches it through `adb forward tcp:L
 * tcp:6790` (the `tcp:` service in adbd-services.ts). Inside the test process it is a Bun.serve
 * HTTP/1.1 server on an ephemeral loopback port; each adb `tcp:6790` stream is piped to a loopback
 * connection to it, so a crash can close every connection at once. Research note with every
 * source: /work/wt/issue27-uia2.md. Routes: uia2-routes.ts; page source: uia2-source.ts.
 *
 *   adb install <server apk>; adb install <test apk>   // or installApk(phone, PINNED_APKS[sha], false), twice
 *   adb shell am instrument -w -e disableAnalytics true io.appium…test/androidx.test.runner.AndroidJUnitRunner
 *   adb forward tcp:8200 tcp:6790;  fetch("http://127.0.0.1:8200/status")
 *   phone.uia2.crash()              // the instrumentation dies mid-call
 */
import { connect, type Socket } from "node:net";
import type { Server } from "bun";
import type { TcpListener } from "./adbd-services.ts";
import { UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "./apk-catalog.ts";
import { type CommandIo, delay } from "./command-io.ts";
import type { FakePhone } from "./fake-phone.ts";
import type { PhoneProcess } from "./processes.ts";
import { invalidSession, reply, type Uia2Context, Uia2Error, type Uia2Op, unknownCommand } from "./uia2-protocol.ts";
import { findRoute } from "./uia2-routes.ts";

/** appium-uiautomator2-driver lib/uiautomator2-server/core.ts INSTRUMENTATION_TARGET. */
export const UIA2_INSTRUMENTATION = `${UIA2_TEST_PACKAGE}/androidx.test.runner.AndroidJUnitRunner`;
/** server/ServerConfig.java DEFAULT_SERVER_PORT; the driver's session.ts DEVICE_PORT. */
export const UIA2_DEVICE_PORT = 6790;
/** The only test the instrumentation runs (app/src/androidTestServer/…/AppiumUiAutomator2Server.java). */
export const UIA2_TEST_CLASS = "io.appium.uiautomator2.server.test.AppiumUiAutomator2Server";

/**
 * Milliseconds each request takes before it is answered (on top of a gesture's own duration). Tap
 * and page source are the figures the issue's brief gives (about 6 and 40 ms); for the others no
 * figure was at hand, so they answer at once.
 */
export const UIA2_LATENCY_MS: Readonly<Record<Uia2Op, number>> = {
  status: 0,
  session: 0,
  source: 40,
  screenshot: 0,
  tap: 6,
  gesture: 0,
  key: 0,
  text: 0,
  settings: 0,
};

/**
 * The settings GET /appium/settings lists, with their defaults (model/settings/*.java SETTING_NAME
 * and DEFAULT_VALUE). Left out: elementResponseAttributes, wakeLockTimeout and
 * alwaysTraversableViewClasses, whose defaults were not read.
 */
const DEFAULT_SETTINGS: Readonly<Record<string, unknown>> = {
  actionAcknowledgmentTimeout: 3000,
  allowInvisibleElements: false,
  ignoreUnimportantViews: false,
  enableMultiWindows: false,
  enableNotificationListener: true,
  enableTopmostWindowFromActivePackage: false,
  keyInjectionDelay: 0,
  scrollAcknowledgmentTimeout: 200,
  shouldUseCompactResponses: true,
  waitForIdleTimeout: 10000,
  waitForSelectorTimeout: 10000,
  normalizeTagNames: false,
  enforceXPath1: false,
  disableIdLocatorAutocompletion: false,
  limitXPathContextScope: true,
  includeExtrasInPageSource: false,
  includeA11yActionsInPageSource: false,
  includeExtraRenderingInfo: false,
  shutdownOnPowerDisconnect: true,
  simpleBoundsCalculation: false,
  trackScrollEvents: true,
  serverPort: 6790,
  mjpegServerPort: 7810,
  mjpegServerFramerate: 10,
  mjpegScalingFactor: 50,
  mjpegServerScreenshotQuality: 50,
  mjpegBilinearFiltering: false,
  useResourcesForOrientationDetection: false,
  snapshotMaxDepth: 70,
  currentDisplayId: 0,
  deferAccessibilityCacheReset: false,
  mapTestTagToResourceId: false,
};

export interface Uia2Options {
  /** Per-operation latency, merged over UIA2_LATENCY_MS (a slow server: raise them). */
  latencyMs?: Partial<Record<Uia2Op, number>>;
  /** From `am instrument` until port 6790 accepts connections (default 0; a real start takes seconds, unmeasured). */
  startupMs?: number;
  /** The instrumentation process dies as it starts: no server, `am instrument` reports the crash. */
  refuseStart?: boolean;
}

/** ActivityManagerService's bundle for a dead instrumentation process, as `am instrument` prints it (note §2). */
export const CRASH_OUTPUT = "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n";
const ZYGOTE_PID = 562;

interface Run {
  readonly proc: PhoneProcess;
  /** Aborted with "crash" or "stop" when the instrumentation ends. */
  readonly ended: AbortController;
  readonly sockets: Set<Socket>;
  readonly startedAt: number;
  http: Server<undefined> | null;
}

export class Uia2Server {
  latencyMs: Record<Uia2Op, number>;
  startupMs: number;
  refuseStart: boolean;
  /** Every request the server got: method and path only, never a body (typed text stays out of it). */
  readonly requests: { method: string; path: string }[] = [];
  sessionId: string | null = null;
  readonly settings = new Map<string, unknown>(Object.entries(DEFAULT_SETTINGS));
  readonly elements = new Map<string, string>();
  private run: Run | null = null;

  constructor(
    readonly phone: FakePhone,
    options: Uia2Options = {},
  ) {
    this.latencyMs = { ...UIA2_LATENCY_MS, ...options.latencyMs };
    this.startupMs = options.startupMs ?? 0;
    this.refuseStart = options.refuseStart ?? false;
  }

  /** Port 6790 accepts connections. */
  get running(): boolean {
    return this.run?.http != null && !this.run.ended.signal.aborted;
  }

  /** The pid of the instrumented process (`io.appium.uiautomator2.server` in `ps -A`), while it lives. */
  get pid(): number | null {
    return this.run?.proc.pid ?? null;
  }

  /** The instrumentation process dies now: every connection closes, `am instrument` prints the crash and exits. */
  crash(): void {
    if (this.run) this.end(this.run, "crash");
  }

  /** `am force-stop`: stopping the server's package kills the instrumented process. */
  forceStopped(pkg: string): void {
    if (pkg === UIA2_SERVER_PACKAGE) this.crash();
  }

  /**
   * The body of `am instrument -w <UIA2_INSTRUMENTATION>` once its arguments are checked: runs
   * until the server stops (DELETE session), crashes, or the command itself is ended.
   */
  async instrument(io: CommandIo): Promise<number> {
    // AMS force-stops the target package before it starts an instrumentation (an inference from
    // its startInstrumentation, not verified): a previous server dies.
    this.crash();
    io.out(`\n${UIA2_TEST_CLASS}:`);
    const proc = this.phone.processes.spawn(UIA2_SERVER_PACKAGE, ZYGOTE_PID, { user: "u0_a190", resident: true });
    const run: Run = { proc, ended: new AbortController(), sockets: new Set(), startedAt: Date.now(), http: null };
    this.run = run;
    proc.controller.signal.addEventListener("abort", () => this.end(run, "crash"), { once: true });
    // The server's UiAutomation connection: `uiautomator dump` is refused while it is held.
    this.phone.uiAutomationPid = proc.pid;
    if (this.refuseStart) this.end(run, "crash");
    else {
      await delay(this.startupMs, run.ended.signal);
      if (!run.ended.signal.aborted)
        run.http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => this.handle(req, run) });
    }
    const ended = new Promise<void>((resolve) => {
      if (run.ended.signal.aborted) return resolve();
      run.ended.signal.addEventListener("abort", () => resolve(), { once: true });
      io.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await ended;
    // `am` itself ended (its stream closed): the instrumentation runs on, as nothing here says otherwise.
    if (!run.ended.signal.aborted) return 130;
    if (run.ended.signal.reason === "stop") {
      // InstrumentationResultPrinter's "." then TestExecutor's "\n" + JUnit TextListener's summary, println'd by am.
      const secs = ((Date.now() - run.startedAt) / 1000).toLocaleString("en-US", { maximumFractionDigits: 3 });
      io.out(`.\n\nTime: ${secs}\n\nOK (1 test)\n\n\n`);
    } else io.out(CRASH_OUTPUT);
    return 0;
  }

  /** adbd's `tcp:<port>`: a connection to the server, or null when nothing listens (adbd then closes the stream). */
  tcpListener(port: number): TcpListener | null {
    const run = this.run;
    const http = run?.http;
    if (port !== UIA2_DEVICE_PORT || !run || !http || run.ended.signal.aborted) return null;
    return (peer) => {
      const socket = connect(http.port as number, "127.0.0.1");
      run.sockets.add(socket);
      socket.on("data", (d: Buffer) => peer.send(new Uint8Array(d)));
      socket.on("error", () => {});
      socket.on("close", () => {
        run.sockets.delete(socket);
        peer.end();
      });
      return { write: (d) => void socket.write(d), close: () => void socket.destroy() };
    };
  }

  private end(run: Run, reason: "crash" | "stop"): void {
    if (run.ended.signal.aborted) return;
    run.ended.abort(reason);
    for (const socket of run.sockets) socket.destroy();
    void run.http?.stop(true);
    this.phone.processes.kill(run.proc.pid, "SIGKILL");
    if (this.phone.uiAutomationPid === run.proc.pid) this.phone.uiAutomationPid = null;
    if (this.run === run) {
      this.run = null;
      this.sessionId = null;
      this.elements.clear();
    }
  }

  private async handle(req: Request, run: Run): Promise<Response> {
    let path = new URL(req.url).pathname;
    // http/ServerHandler.java strips the legacy prefix.
    if (path.startsWith("/wd/hub")) path = path.slice("/wd/hub".length) || "/";
    this.requests.push({ method: req.method, path });
    const found = findRoute(req.method, path);
    if (!found) return reply(null, unknownCommand());
    const { route, params } = found;
    const sid = params.sessionId === undefined ? null : decodeURIComponent(params.sessionId);
    await delay(this.latencyMs[route.op], run.ended.signal);
    // After a crash the connection is gone; whatever is returned here goes nowhere.
    if (run.ended.signal.aborted) return new Response(null, { status: 500 });
    if (!route.noSession && (sid === null || sid !== this.sessionId)) return reply(sid, invalidSession(sid));
    let held = 0;
    const ctx = this.context(run, (ms) => (held += ms));
    let value: unknown;
    try {
      const raw = req.method === "POST" ? await req.text() : "";
      let body: unknown = {};
      try {
        if (raw !== "") body = JSON.parse(raw);
      } catch (e) {
        // SafeRequestHandler: InvalidArgumentException(JsonSyntaxException); Gson's own wording differs.
        throw new Uia2Error(
          400,
          "invalid argument",
          `com.google.gson.JsonSyntaxException: ${(e as Error).message}`,
          "io.appium.uiautomator2.common.exceptions.InvalidArgumentException",
        );
      }
      if (body === null || typeof body !== "object" || Array.isArray(body))
        throw new Uia2Error(
          400,
          "invalid argument",
          "com.google.gson.JsonSyntaxException: the body is not a JSON object",
          "io.appium.uiautomator2.common.exceptions.InvalidArgumentException",
        );
      value = route.run(ctx, body as Record<string, unknown>, params);
    } catch (e) {
      if (!(e instanceof Uia2Error)) throw e;
      return reply(sid, e);
    }
    if (held > 0) await delay(held, run.ended.signal);
    if (run.ended.signal.aborted) return new Response(null, { status: 500 });
    // Status and GetSessions answer with Session.NO_ID; NewSession with its new id.
    const replyId = route.noSession ? (path === "/session" ? this.sessionId : "None") : sid;
    return reply(replyId, value);
  }

  private context(run: Run, hold: (ms: number) => void): Uia2Context {
    const server = this;
    return {
      phone: this.phone,
      settings: this.settings,
      elements: this.elements,
      get sessionId() {
        return server.sessionId;
      },
      set sessionId(id) {
        server.sessionId = id;
      },
      hold,
      // DeleteSession.java: ServerInstrumentation.stop() 15 ms after the answer.
      stopSoon: () => void setTimeout(() => this.end(run, "stop"), 15),
    };
  }
}
