/**
 * The daemon process's main, once `devicerail serve` has its plan (serve-plan.ts) and found no
 * daemon to relay to: the daemon (server.ts), then stdio or the listeners with the surfaces and
 * the HTTP route table, and the shutdown order. It writes nothing to a terminal itself: the CLI
 * hands it `io` (cli/serve-command.ts) and turns the outcome into an exit code.
 */
import { endpointText } from "../client/endpoint.ts";
import { selectorMatcher } from "../core/devices/semantic/index.ts";
import { serveStdio } from "../transports/stdio.ts";
import type { HttpRoutes } from "../transports/http.ts";
import { ListenAddressError, type TcpListener, listenTcp } from "../transports/tcp.ts";
import { AccessToken } from "../transports/token.ts";
import { SocketPathError, type UnixListener, listenUnix } from "../transports/unix.ts";
import { ViewerPasses } from "../transports/viewer-passes.ts";
import type { Config, ListenAddress } from "./config.ts";
import { DataDirError } from "./data-dir.ts";
import { removeRecord, writeRecord } from "./daemon-record.ts";
import { localConnect } from "./local-connect.ts";
import { localTokenPath, removeLocalToken, writeLocalToken } from "./local-token.ts";
import { createLogger } from "./log.ts";
import type { ServePlan } from "./serve-plan.ts";
import type { Daemon } from "./server.ts";
import { VERSION } from "./version.ts";

/** How a serve ended: served until stdin ended or a signal came, or stopped by the user's or the machine's problem (already said). */
export type ServeOutcome = "served" | "usage" | "runtime";

/** The terminal, as the CLI hands it over: the daemon's logs go to stderr through pino instead. */
export interface ServeIo {
  /** A sentence for the person who started serve (a start-up failure and its fix). */
  say(text: string): void;
  /** The one stdout line of the socket mode: where it listens, for scripts that asked for port 0. */
  listening(where: { host?: string; port?: number; socket?: string }): void;
}

type Log = Awaited<ReturnType<typeof createLogger>>;

export async function runServer(planned: ServePlan, io: ServeIo): Promise<ServeOutcome> {
  const { config, listen, socket, token, localToken } = planned;
  const [{ createDaemon, StartupError }, { DatabaseLockedError }] = await Promise.all([
    import("./server.ts"),
    import("../core/sessions/db.ts"),
  ]);
  const log = await createLogger(config.logLevel);
  let daemon: Daemon;
  const startedAtMs = Date.now();
  let dataDir: string | null = null;
  // The record goes out as soon as the lock is held: a command that raced this daemon's start (and
  // lost the lock) then waits for it rather than guessing, and one facing a stdio daemon says so.
  const held = (paths: { dataDir: string }) => {
    dataDir = paths.dataDir;
    writeRecord(dataDir, listen || socket ? { state: "starting" } : { state: "serving", stdio: true }, startedAtMs);
  };
  try {
    daemon = await createDaemon(config, log, process.env, { held });
  } catch (err) {
    if (dataDir !== null) removeRecord(dataDir);
    // A busy or unusable data directory is the user's to fix: say what, not where in the code.
    if (err instanceof DatabaseLockedError || err instanceof DataDirError || err instanceof StartupError) {
      io.say(err.message);
      return "runtime";
    }
    throw err;
  }
  if (listen || socket)
    return serveSockets(
      {
        listen,
        socket,
        token,
        localToken,
        allowedOrigins: config.allowedOrigins ?? [],
        limits: { handshakeMs: config.handshakeMs, keepAliveMs: config.keepAliveMs },
        endOfInputMs: config.endOfInputMs,
        mcpImage: config.mcpImage,
        mcpIdleMs: config.mcpIdleMs,
        mcpActionTimeoutMs: config.mcpActionTimeoutMs,
        farm: config.farm,
      },
      daemon,
      log,
      config.screenshotPolicy,
      startedAtMs,
      io,
    );
  log.info(
    { version: VERSION, transport: "stdio", screenshotPolicy: config.screenshotPolicy, dataDir: daemon.paths.dataDir },
    "devicerail serving",
  );
  await serveStdio({
    dispatcher: daemon.dispatcher,
    services: daemon.services,
    log,
    endOfInputMs: config.endOfInputMs,
  });
  await daemon.shutdown();
  removeRecord(daemon.paths.dataDir);
  log.info({}, "devicerail stopped");
  return "served";
}

type Sockets = {
  listen: ListenAddress | null;
  socket: string | null;
  token: AccessToken | null;
  /** The TCP listener requires a token made now and kept in the data directory (local-token.ts). */
  localToken: boolean;
  allowedOrigins: readonly string[];
  limits: { handshakeMs: number; keepAliveMs: number };
  endOfInputMs: number;
  mcpImage: Config["mcpImage"];
  mcpIdleMs: number;
  mcpActionTimeoutMs: number;
  farm: Config["farm"];
};

/** How long an MCP client's closed event stream may take to come back before its Sessions end. */
const MCP_STREAM_GRACE_MS = 5_000;
const MCP_MAX_SESSIONS = 64;

/** Serves TCP and/or the Unix socket until SIGINT/SIGTERM; stdin is not a protocol connection here. */
async function serveSockets(
  want: Sockets,
  daemon: Daemon,
  log: Log,
  screenshotPolicy: string,
  startedAtMs: number,
  io: ServeIo,
): Promise<ServeOutcome> {
  // The listeners' front ends are loaded only here: serve on stdio never pays for MCP, the report or the farm.
  const [{ McpHttp }, { McpHub }, { ReportHttp }, { HttpApi }, farmModule] = await Promise.all([
    import("../surfaces/mcp/http.ts"),
    import("../surfaces/mcp/server.ts"),
    import("../surfaces/report/http.ts"),
    import("../surfaces/http-api/http-api.ts"),
    want.farm && want.listen ? Promise.all([import("../farm/host.ts"), import("./farm-port.ts")]) : null,
  ]);
  // A farm hands its hosts' addresses to any client: each host must check who connects.
  const farmProblem =
    want.farm &&
    (!want.token
      ? "DEVICERAIL_FARM_URL needs DEVICERAIL_TOKEN: a farm host must authenticate its clients"
      : !want.listen
        ? "DEVICERAIL_FARM_URL needs a TCP listener (--listen HOST:PORT) for farm clients to reach"
        : null);
  if (farmProblem) {
    io.say(farmProblem);
    await daemon.shutdown();
    removeRecord(daemon.paths.dataDir);
    return "usage";
  }
  // The surfaces' in-process clients: they get connections, never the dispatcher itself.
  const connect = localConnect(daemon.dispatcher, daemon.services, log);
  const base = { connect, log, serverVersion: VERSION };
  const mcp = new McpHttp(
    new McpHub({
      ...base,
      evidence: daemon.evidence,
      references: (sessionId, sha) => daemon.core.log.references(sessionId, sha),
      images: want.mcpImage,
      actionTimeoutMs: want.mcpActionTimeoutMs,
      matchSelector: selectorMatcher,
    }),
    { log, idleMs: want.mcpIdleMs, graceMs: MCP_STREAM_GRACE_MS, maxSessions: MCP_MAX_SESSIONS },
  );
  // One set for every listener: a ticket asked for on the Unix socket is opened on the TCP port.
  const viewer = new ViewerPasses();
  const reports = new ReportHttp({ ...base, evidence: daemon.evidence, viewer });
  // Farm mode needs the token and a TCP listener (checked with the configuration).
  const farm =
    farmModule && want.farm ? new farmModule[0].FarmHost(farmModule[1].farmPort(daemon, log), want.farm, log) : null;
  /**
   * The HTTP route table, behind the guard of every listener (transports/http.ts: Host, Origin,
   * token, body): the first route that takes a request answers it, and none is a 404. Each
   * listener gets its own HTTP API, whose in-process connections close with that listener.
   */
  const routes = (): HttpRoutes => {
    const api = new HttpApi({ ...base, evidence: daemon.evidence });
    const table: ((req: Request, url: URL, body: string) => Promise<Response> | null)[] = [
      // MCP's Streamable HTTP endpoint.
      (req, url, body) => (url.pathname === "/mcp" ? mcp.handle(req, body) : null),
      // The farm's host routes, on a farm host only.
      ...(farm ? [(req: Request, url: URL, body: string) => farm.http.route(req, url, body)] : []),
      // The live report: /sessions/{id}/report and its ticket.
      (req, url) => reports.route(req, url),
      // The curl-able API: /devices, /sessions, /evidence.
      (req, url, body) => api.route(req, url, body),
    ];
    return {
      route: (req, url, body) => {
        for (const route of table) {
          const answer = route(req, url, body);
          if (answer) return answer;
        }
        return null;
      },
      stop: () => api.stop(),
    };
  };
  const shared = {
    routes,
    grants: farm?.grants.issue ?? null,
    viewer,
    dispatcher: daemon.dispatcher,
    services: daemon.services,
    log,
    token: want.token,
    allowedOrigins: want.allowedOrigins,
    limits: want.limits,
    endOfInputMs: want.endOfInputMs,
  };
  let tcp: TcpListener | null = null;
  let unix: UnixListener | null = null;
  // Written before the port exists, so no client ever finds the port without its token.
  let dataToken: string | null = null;
  try {
    if (want.localToken) dataToken = writeLocalToken(daemon.paths.dataDir);
  } catch (err) {
    io.say(
      `cannot write the token file ${localTokenPath(daemon.paths.dataDir)}: ${(err as Error).message}; free space in the data directory or fix its permissions`,
    );
    await daemon.shutdown();
    removeRecord(daemon.paths.dataDir);
    return "runtime";
  }
  const stopAll = async () => {
    await mcp.stop();
    await Promise.all([tcp?.stop(), unix?.stop()]);
    // After the connections closed: their allocations were released while the farm was still joined.
    await farm?.stop();
    await daemon.shutdown();
    removeRecord(daemon.paths.dataDir);
    if (dataToken) removeLocalToken(daemon.paths.dataDir, dataToken);
  };
  try {
    if (want.listen)
      tcp = await listenTcp({ ...shared, ...want.listen, ...(dataToken ? { token: new AccessToken(dataToken) } : {}) });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    io.say(
      `cannot listen on ${endpointText(want.listen as ListenAddress)}: ${(err as Error).message}${typeof code === "string" ? ` (${code})` : ""}`,
    );
    await stopAll();
    return err instanceof ListenAddressError ? "usage" : "runtime";
  }
  try {
    if (want.socket) unix = await listenUnix({ ...shared, path: want.socket });
  } catch (err) {
    io.say(`${err instanceof SocketPathError ? "" : "cannot listen on the Unix socket: "}${(err as Error).message}`);
    await stopAll();
    return "runtime";
  }
  // How the CLI and other local tools find this daemon (see cli/daemon-control.ts).
  writeRecord(
    daemon.paths.dataDir,
    {
      state: "serving",
      ...(tcp && want.listen ? { host: want.listen.host, port: tcp.port } : {}),
      ...(unix ? { socket: unix.path } : {}),
      ...(tcp && dataToken ? { tokenFile: localTokenPath(daemon.paths.dataDir) } : {}),
    },
    startedAtMs,
  );
  if (farm && want.farm && tcp && want.listen)
    await farm.start(endpointText(want.farm.advertise ?? { host: want.listen.host, port: tcp.port }));
  const signal = await new Promise<string>((resolve) => {
    // Kept installed: a repeated signal during the bounded shutdown must not kill the process midway.
    process.on("SIGINT", () => resolve("SIGINT"));
    process.on("SIGTERM", () => resolve("SIGTERM"));
    const where = {
      ...(tcp && want.listen ? { host: want.listen.host, port: tcp.port } : {}),
      ...(unix ? { socket: unix.path } : {}),
    };
    log.info({ version: VERSION, transport: tcp ? "tcp" : "unix", ...where, screenshotPolicy }, "devicerail serving");
    // The only stdout output in this mode, so scripts learn the port the OS picked for port 0.
    io.listening(where);
  });
  log.info({ signal }, "shutting down");
  // Drivers and stores close only after every connection has been closed.
  await stopAll();
  log.info({}, "devicerail stopped");
  return "served";
}
