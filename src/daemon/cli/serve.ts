/** `devicerail serve`: the daemon for JSON-RPC clients on stdio or loopback TCP. */
import { DatabaseLockedError } from "../../core/sessions/db.ts";
import { serveStdio } from "../../transports/stdio.ts";
import { ListenAddressError, checkListenAddress, listenTcp } from "../../transports/tcp.ts";
import { ConfigError, type ListenAddress, loadConfig, parseListenAddress } from "../config.ts";
import { DataDirError } from "../data-dir.ts";
import { createLogger } from "../log.ts";
import { StartupError, createDaemon } from "../server.ts";
import { VERSION } from "../version.ts";

export const SERVE_HELP = `Usage: devicerail serve [--stdio | --listen HOST:PORT]

--stdio (the default): serves one JSON-RPC connection on stdin/stdout: one JSON message per line
(max 1 MiB). Stops gracefully on end of input, SIGINT or SIGTERM (exit 0).

--listen HOST:PORT (or DEVICERAIL_RPC_LISTEN): serves up to 64 NDJSON connections on a loopback
TCP address (127.0.0.0/8 or [::1]; port 0 lets the OS pick). stdin is not read. Once listening it
prints one line to stdout, {"listening":{"host":"127.0.0.1","port":NNNN}}, and nothing else.
Stops gracefully on SIGINT or SIGTERM (exit 0).
`;

export async function serve(opts: { stdio?: boolean; listen?: string }): Promise<number> {
  if (opts.stdio && opts.listen !== undefined) {
    process.stderr.write(`devicerail: --stdio and --listen exclude each other\n\n${SERVE_HELP}`);
    return 2;
  }
  let config;
  let listen: ListenAddress | null;
  try {
    config = loadConfig();
    // The flag wins over the environment; --stdio forces stdio even when DEVICERAIL_RPC_LISTEN is set.
    listen = opts.listen !== undefined ? parseListenAddress(opts.listen) : opts.stdio ? null : (config.listen ?? null);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`devicerail: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (listen) {
    // Before the data directory is opened: a refused address is a configuration error.
    try {
      checkListenAddress(listen.host, listen.port);
    } catch (err) {
      process.stderr.write(`devicerail: cannot listen on ${formatAddress(listen)}: ${(err as Error).message}\n`);
      return 2;
    }
  }
  const log = await createLogger(config.logLevel);
  let daemon;
  try {
    daemon = await createDaemon(config, log);
  } catch (err) {
    // A busy or unusable data directory is the user's to fix: say what, not where in the code.
    if (err instanceof DatabaseLockedError || err instanceof DataDirError || err instanceof StartupError) {
      process.stderr.write(`devicerail: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (listen) return serveTcp(listen, daemon, log, config.screenshotPolicy);
  log.info({ version: VERSION, transport: "stdio", screenshotPolicy: config.screenshotPolicy, dataDir: daemon.paths.dataDir }, "devicerail serving");
  await serveStdio({ dispatcher: daemon.dispatcher, services: daemon.services, log });
  await daemon.shutdown();
  log.info({}, "devicerail stopped");
  return 0;
}

/** Serves loopback TCP until SIGINT/SIGTERM; stdin is not a protocol connection here. */
async function serveTcp(
  listen: ListenAddress,
  daemon: Awaited<ReturnType<typeof createDaemon>>,
  log: Awaited<ReturnType<typeof createLogger>>,
  screenshotPolicy: string,
): Promise<number> {
  let listener;
  try {
    listener = await listenTcp({ ...listen, dispatcher: daemon.dispatcher, services: daemon.services, log });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    process.stderr.write(`devicerail: cannot listen on ${formatAddress(listen)}: ${(err as Error).message}${typeof code === "string" ? ` (${code})` : ""}\n`);
    await daemon.shutdown?.();
    return err instanceof ListenAddressError ? 2 : 1;
  }
  const signal = await new Promise<string>((resolve) => {
    // Kept installed: a repeated signal during the bounded shutdown must not kill the process midway.
    process.on("SIGINT", () => resolve("SIGINT"));
    process.on("SIGTERM", () => resolve("SIGTERM"));
    log.info({ version: VERSION, transport: "tcp", host: listen.host, port: listener.port, screenshotPolicy }, "devicerail serving");
    // The only stdout output in this mode, so scripts learn the port the OS picked for port 0.
    process.stdout.write(`${JSON.stringify({ listening: { host: listen.host, port: listener.port } })}\n`);
  });
  log.info({ signal }, "shutting down");
  await listener.stop();
  // Drivers and stores close only after every connection has been closed.
  await daemon.shutdown?.();
  log.info({}, "devicerail stopped");
  return 0;
}

export const formatAddress = (a: ListenAddress) => (a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);
