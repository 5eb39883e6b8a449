/**
 * The serve plan: what `devicerail serve` was asked to do (flags over the environment), checked
 * before the data directory is opened. Light on purpose: `serve` on stdio decides from it whether
 * to relay to the machine's daemon, and a relay loads no daemon code (scripts/bench/startup.ts).
 */
import { endpointText } from "../client/endpoint.ts";
import { checkListenAddress } from "../transports/tcp.ts";
import { AccessToken, tokenProblem } from "../transports/token.ts";
import { type Config, ConfigError, type ListenAddress, loadConfig, parseListenAddress } from "./config.ts";

export interface ServeOptions {
  stdio?: boolean;
  listen?: string;
  socket?: string;
  token?: string;
  localToken?: boolean;
}

export interface ServePlan {
  config: Config;
  listen: ListenAddress | null;
  socket: string | null;
  token: AccessToken | null;
  /** The TCP listener requires a token made now and kept in the data directory (local-token.ts). */
  localToken: boolean;
}

/** A flag or variable that cannot work, said as the user should fix it. */
export class ServeUsageError extends Error {
  constructor(
    message: string,
    /** Whether the command's help belongs after the message (flags that exclude each other). */
    readonly showHelp = false,
  ) {
    super(message);
  }
}

/**
 * What `serve` was asked to do; throws ServeUsageError for a usage or configuration error.
 * `warn` gets what may be a mistake but runs (a TCP listener without a token).
 */
export function planServe(opts: ServeOptions, warn: (text: string) => void): ServePlan {
  const usage = (message: string, showHelp = false) => new ServeUsageError(message, showHelp);
  if (opts.stdio && (opts.listen !== undefined || opts.socket !== undefined))
    throw usage("--stdio excludes --listen and --socket", true);
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
    if (err instanceof ConfigError) throw usage(err.message);
    throw err;
  }
  const socket = opts.socket ?? (opts.stdio || opts.listen !== undefined ? null : (config.socket ?? null));
  if (opts.token !== undefined && tokenProblem(opts.token)) throw usage(`invalid --token: ${tokenProblem(opts.token)}`);
  const secret = opts.token ?? config.token ?? null;
  // Children (an adb server the Android driver starts) must not inherit the secret.
  delete process.env.DEVICERAIL_TOKEN;
  if (listen) {
    // Before the data directory is opened: a refused address is a configuration error.
    try {
      checkListenAddress(listen.host, listen.port, { token: secret !== null });
    } catch (err) {
      throw usage(`cannot listen on ${endpointText(listen)}: ${(err as Error).message}`);
    }
    // A farm host without a token is refused outright (serveSockets), so it needs no warning.
    if (secret === null && !opts.localToken && !config.farm)
      warn(
        `warning: the TCP listener ${endpointText(listen)} has no token, so every local user of this machine can reach it (list, export and delete Sessions, drive the devices); set DEVICERAIL_TOKEN, or serve --socket only`,
      );
  }
  const localToken = secret === null && listen !== null && opts.localToken === true;
  return { config, listen, socket, token: secret === null ? null : new AccessToken(secret), localToken };
}
