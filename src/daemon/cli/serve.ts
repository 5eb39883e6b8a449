/** `devicerail serve`: the daemon for JSON-RPC clients on stdio, loopback TCP or a Unix socket.
 * Over 300 lines because it is the daemon process's main: the serve plan, the listeners and the
 * shutdown order, which must be read together.
 */
import { serveStdio } from "../../transports/stdio.ts";
import { ListenAddressError, type TcpListener, checkListenAddress, listenTcp } from "../../transports/tcp.ts";
import { AccessToken, tokenProblem } from "../../transports/token.ts";
import { SocketPathError, type UnixListener, listenUnix } from "../../transports/unix.ts";
import { ViewerPasses } from "../../transports/viewer-passes.ts";
import { type Config, ConfigError, type ListenAddress, loadConfig, parseListenAddress } from "../config.ts";
import { homedir } from "node:os";
import { DataDirError, resolveDataPaths } from "../data-dir.ts";
import { createLogger } from "../log.ts";
import { endpointText } from "../../client/endpoint.ts";
import { localConnect } from "../local-connect.ts";
import type { Daemon } from "../server.ts";
import { VERSION } from "../version.ts";
import { removeRecord, writeRecord } from "./daemon-record.ts";
import { SERVE_HELP } from "./serve-help.ts";
import { localTokenPath, removeLocalToken, writeLocalToken } from "./local-token.ts";
import { relayStdio } from "./stdio-relay.ts";
import { EXIT } from "./output.ts";

export interface ServeOptions {
  stdio?: boolean;
  listen?: string;
  socket?: string;
  token?: string;
  localToken?: boolean;
}

type Log = Awaited<ReturnType<typeof createLogger>>;

/** What `serve` was asked to do, or the exit code of a usage/configuration error (already reported). */
function plan(opts: ServeOptions):
  | {
      config: Config;
      listen: ListenAddress | null;
      socket: string | null;
      token: AccessToken | null;
      localToken: boolean;
    }
  | number {
  const usage = (message: string) => {
    process.stderr.write(`devicerail: ${message}\n`);
    return EXIT.usage;
  };
  if (opts.stdio && (opts.listen !== undefined || opts.socket !== undefined))
    return usage(`--stdio excludes --listen and --socket\n\n${SERVE_HELP}`);
  let config: Config;
  let listen: ListenAddress | null;
  try {
    config = loadConfig();
    // Flags win over the environment; --stdio forces stdio even when DEVICERAIL_RPC_LISTEN is set.
    listen =
      opts.listen !== undefined
        ? parseListenAddress(opts.listen)
        : opts.stdio || opts.socket !== undefined
          ? null
          : (config.listen ?? null);
  } catch (err) {
    if (err instanceof ConfigError) return usage(err.message);
    throw err;
  }
  const socket = opts.socket ?? (opts.stdio || opts.listen !== undefined ? null : (config.socket ?? null));
  if (opts.token !== undefined && tokenProblem(opts.token))
    return usage(`invalid --token: ${tokenProblem(opts.token)}`);
  const secret = opts.token ?? config.token ?? null;
  // Children (an adb server the Android driver starts) must not inherit the secret.
  delete process.env.DEVICERAIL_TOKEN;
  if (listen) {
    // Before the data directory is opened: a refused address is a configuration error.
    try {
      checkListenAddress(listen.host, listen.port, { token: secret !== null });
    } catch (err) {
      return usage(`cannot listen on ${endpointText(listen)}: ${(err as Error).message}`);
    }
    // A farm host without a token is refused outright (serveSockets), so it needs no warning.
    if (secret === null && !opts.localToken && !config.farm)
      process.stderr.write(
        `devicerail: warning: the TCP listener ${endpointText(listen)} has no token, so every local user of this machine can reach it (list, export and delete Sessions, drive the devices); set DEVICERAIL_TOKEN, or serve --socket only\n`,
      );
  }
  const localToken = secret === null && listen !== null && opts.localToken === true;
  return { config, listen, socket, token: secret === null ? null : new AccessToken(secret), localToken };
}

export async function serve(opts: ServeOptions): Promise<number> {
  // Before plan() removes the token from the environment: a relay may need it.
  const env = { ...process.env };
  const planned = plan(opts);
  if (typeof planned === "number") return planned;
  const { config, listen, socket, token, localToken } = planned;
  // One daemon per data directory: while it runs, stdio is relayed to it (stdio-relay.ts).
  if (!listen && !socket) {
    const relayed = await relayStdio(resolveDataPaths(env, process.platform, homedir(), process.cwd()).dataDir, env);
    if (relayed !== null) return relayed;
  }
  // The daemon's code is loaded only now: a relay never needs it.
  const [{ createDaemon, StartupError }, { DatabaseLockedError }] = await Promise.all([
    import("../server.ts"),
    import("../../core/sessions/db.ts"),
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
      process.stderr.write(`devicerail: ${err.message}\n`);
      return EXIT.runtime;
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
        mcpImage: config.mcpImage,
        mcpIdleMs: config.mcpIdleMs,
        mcpActionTimeoutMs: config.mcpActionTimeoutMs,
        farm: config.farm,
      },
      daemon,
      log,
      config.screenshotPolicy,
      startedAtMs,
    );
  log.info(
    { version: VERSION, transport: "stdio", screenshotPolicy: config.screenshotPolicy, dataDir: daemon.paths.dataDir },
    "devicerail serving",
  );
  await serveStdio({ dispatcher: daemon.dispatcher, services: daemon.services, log });
  await daemon.shutdown();
  removeRecord(daemon.paths.dataDir);
  log.info({}, "devicerail stopped");
  return 0;
}

type Sockets = {
  listen: ListenAddress | null;
  socket: string | null;
  token: AccessToken | null;
  /** The TCP listener requires a token made now and kept in the data directory (local-token.ts). */
  localToken: boolean;
  allowedOrigins: readonly string[];
  limits: { handshakeMs: number; keepAliveMs: number };
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
): Promise<number> {
  // The listeners' front ends are loaded only here: serve on stdio never pays for MCP, the report or the farm.
  const [{ McpHttp }, { McpHub }, { ReportHttp }, farmModule] = await Promise.all([
    import("../mcp/http.ts"),
    import("../mcp/server.ts"),
    import("../report/http.ts"),
    want.farm && want.listen ? import("../farm/host.ts") : null,
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
    process.stderr.write(`devicerail: ${farmProblem}\n`);
    await daemon.shutdown();
    removeRecord(daemon.paths.dataDir);
    return EXIT.usage;
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
    }),
    { log, idleMs: want.mcpIdleMs, graceMs: MCP_STREAM_GRACE_MS, maxSessions: MCP_MAX_SESSIONS },
  );
  // One set for every listener: a ticket asked for on the Unix socket is opened on the TCP port.
  const viewer = new ViewerPasses();
  const reports = new ReportHttp({ ...base, evidence: daemon.evidence, viewer });
  // Farm mode needs the token and a TCP listener (checked with the configuration).
  const farm = farmModule && want.farm ? new farmModule.FarmHost(daemon, want.farm, log) : null;
  const shared = {
    routes: (req: Request, url: URL, body: string) =>
      url.pathname === "/mcp" ? mcp.handle(req, body) : (farm?.http.route(req, url, body) ?? reports.route(req, url)),
    grants: farm?.grants.issue ?? null,
    viewer,
    dispatcher: daemon.dispatcher,
    services: daemon.services,
    connect,
    log,
    evidence: daemon.evidence,
    serverVersion: VERSION,
    token: want.token,
    allowedOrigins: want.allowedOrigins,
    limits: want.limits,
  };
  let tcp: TcpListener | null = null;
  let unix: UnixListener | null = null;
  // Written before the port exists, so no client ever finds the port without its token.
  let dataToken: string | null = null;
  try {
    if (want.localToken) dataToken = writeLocalToken(daemon.paths.dataDir);
  } catch (err) {
    process.stderr.write(
      `devicerail: cannot write the token file ${localTokenPath(daemon.paths.dataDir)}: ${(err as Error).message}; free space in the data directory or fix its permissions\n`,
    );
    await daemon.shutdown();
    removeRecord(daemon.paths.dataDir);
    return EXIT.runtime;
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
    process.stderr.write(
      `devicerail: cannot listen on ${endpointText(want.listen as ListenAddress)}: ${(err as Error).message}${typeof code === "string" ? ` (${code})` : ""}\n`,
    );
    await stopAll();
    return err instanceof ListenAddressError ? EXIT.usage : EXIT.runtime;
  }
  try {
    if (want.socket) unix = await listenUnix({ ...shared, path: want.socket });
  } catch (err) {
    process.stderr.write(
      `devicerail: ${err instanceof SocketPathError ? "" : "cannot listen on the Unix socket: "}${(err as Error).message}\n`,
    );
    await stopAll();
    return EXIT.runtime;
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
    process.stdout.write(`${JSON.stringify({ listening: where })}\n`);
  });
  log.info({ signal }, "shutting down");
  // Drivers and stores close only after every connection has been closed.
  await stopAll();
  log.info({}, "devicerail stopped");
  return 0;
}
