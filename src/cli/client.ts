/**
 * The device commands' way to the devices: the daemon of the data directory (started in the
 * background when none runs), over its socket, so a one-shot `tap` is negotiated, leased and
 * recorded exactly like any client's request, and the device's state lives on between commands.
 */
import { homedir } from "node:os";
import type { Answer, CallOptions, Client } from "../client/client.ts";
import { withDeviceSession } from "../client/device-session.ts";
import { fetchVia } from "../client/endpoint.ts";
import { isRemote } from "../client/remote-error.ts";
import type { MethodName } from "../protocol/methods.ts";
import type { SessionInfo } from "../protocol/types/session.ts";
import { CONCURRENT_METHODS } from "../protocol/method-sets.ts";
import { ConfigError, loadConfig } from "../server/config.ts";
import { resolveDataPaths } from "../server/data-dir.ts";
import { DEFAULT_TIMEOUT_MS } from "./arguments.ts";
import { type Attached, attach, versionMismatch } from "./daemon-control.ts";
import { CliError, EXIT, err, withSpinner } from "./output.ts";
import { stderr } from "./std-streams.ts";

type Env = Record<string, string | undefined>;

export type { CallOptions };

const CONCURRENT = new Set<string>(CONCURRENT_METHODS);

/**
 * The daemon's typed client (src/client/) with the command's defaults: device calls (the
 * concurrent methods) carry the command's deadline as `timeoutMs`, and Ctrl-C cancels them in the
 * daemon (request.cancel), so their work stops. Every call shows a spinner while it runs.
 */
export interface CoreClient extends Client {
  readonly attached: Attached;
  /** The command's deadline for one device call, and for waiting on a device another Session holds. */
  readonly timeoutMs: number;
  /** Fired by Ctrl-C. */
  readonly interrupted: AbortSignal | undefined;
  /** Stored Evidence by digest, read over the daemon's HTTP API and checked against the digest. */
  evidence(sha256: string): Promise<Uint8Array>;
  /** One request to the daemon's HTTP side on the connected endpoint, with this command's credential. */
  http(path: string, init?: RequestInit): Promise<Response>;
}

export function dataDirOf(env: Env): string {
  return resolveDataPaths(env, process.platform, homedir(), process.cwd()).dataDir;
}

/** The environment's settings checked before any daemon is reached: a bad one is a usage error (exit 2). */
export function checkConfig(env: Env): void {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}

/** Attaches to (or starts) the daemon of the configured data directory. */
export async function openClient(env: Env = process.env, opts: CallOptions = {}): Promise<CoreClient> {
  checkConfig(env);
  const dataDir = dataDirOf(env);
  const attached = await withSpinner("starting the devicerail daemon…", () => attach(dataDir, env, { start: true }));
  const mismatch = versionMismatch(attached.hello);
  if (mismatch) stderr.write(`${err().yellow("devicerail:")} ${mismatch}\n`);
  const { client } = attached;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const defaults = (method: string, given: CallOptions = {}): CallOptions =>
    CONCURRENT.has(method) ? { timeoutMs, signal: opts.signal, ...given } : given;
  const call = (method: MethodName, params?: object, o?: CallOptions): Promise<unknown> =>
    withSpinner(`${method}…`, () =>
      (client.call as (m: MethodName, p?: object, o?: CallOptions) => Promise<unknown>)(
        method,
        params,
        defaults(method, o),
      ),
    );
  const answer = (method: MethodName, params?: object, o?: CallOptions): Promise<Answer> =>
    withSpinner(`${method}…`, () =>
      (client.answer as (m: MethodName, p?: object, o?: CallOptions) => Promise<Answer>)(
        method,
        params,
        defaults(method, o),
      ),
    );
  const http = (path: string, init: RequestInit = {}): Promise<Response> => {
    const { endpoint, token } = attached;
    const headers = {
      ...(init.headers as Record<string, string> | undefined),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    };
    return fetchVia(endpoint, path, { ...init, headers });
  };
  const evidence = async (sha256: string): Promise<Uint8Array> => {
    const res = await http(`/evidence/${sha256}`);
    if (!res.ok) throw new CliError(`evidence ${sha256} could not be read from the daemon (HTTP ${res.status})`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (new Bun.CryptoHasher("sha256").update(bytes).digest("hex") !== sha256)
      throw new CliError(`evidence ${sha256} arrived with other bytes than its digest names`);
    return bytes;
  };
  const typed = { call, answer } as Pick<Client, "call" | "answer">;
  return { attached, timeoutMs, interrupted: opts.signal, ...typed, evidence, http, close: () => client.close() };
}

/**
 * Opens a client, runs `work`, and always closes it again. The first Ctrl-C cancels the call in
 * flight (its Session then ends as cancelled); a second one quits at once, and the daemon ends the
 * Session when the connection drops.
 */
export async function withClient<T>(
  work: (c: CoreClient, interrupted: AbortSignal) => Promise<T>,
  env: Env = process.env,
  opts: { timeoutMs?: number } = {},
): Promise<T> {
  const interrupt = new AbortController();
  const onSigint = () => {
    if (interrupt.signal.aborted) process.exit(EXIT.interrupted);
    stderr.write(`\n${err().yellow("devicerail:")} cancelling… (Ctrl-C again to quit now)\n`);
    interrupt.abort();
  };
  process.on("SIGINT", onSigint);
  let client: CoreClient | null = null;
  try {
    client = await openClient(env, { ...opts, signal: interrupt.signal });
    const result = await work(client, interrupt.signal);
    return result;
  } catch (e) {
    if (interrupt.signal.aborted && isRemote(e, "request_cancelled")) throw new CliError("cancelled", EXIT.interrupted);
    throw e;
  } finally {
    void client?.close();
    process.off("SIGINT", onSigint);
  }
}

/**
 * Routes the connection to a device: an id, or for people who know their phone by `adb
 * devices`, the part after the driver's prefix (`emulator-5554` for `android-adb:emulator-5554`)
 * when exactly one present device has it. Anything else is selected as given, so an unknown id
 * fails with the daemon's own device_not_found.
 */
export async function route(c: CoreClient, deviceId: string | undefined): Promise<void> {
  if (deviceId === undefined) return;
  const { devices } = await c.call("devices.list");
  const bySuffix = devices.filter((d) => d.id.endsWith(`:${deviceId}`));
  const id =
    devices.some((d) => d.id === deviceId) || bySuffix.length !== 1
      ? deviceId
      : (bySuffix[0] as (typeof devices)[number]).id;
  await c.call("device.select", { deviceId: id });
}

/**
 * Connects, starts a Session, runs `work` inside it and ends it: completed, cancelled when the
 * user interrupted, or failed with the error's text, so a failed one-shot command still leaves a
 * complete, readable Session behind. A device another Session holds is waited for until the
 * command's deadline (the lease policy of every surface: client/device-session.ts), so parallel
 * commands on one device take turns instead of failing.
 */
export function inSession<T>(c: CoreClient, work: (session: SessionInfo) => Promise<T>): Promise<T> {
  return withDeviceSession(c, work, {
    waitMs: c.timeoutMs,
    signal: c.interrupted,
    cancelled: () => new CliError("cancelled", EXIT.interrupted),
    whileStarting: (start) => withSpinner("waiting for the device (another Session holds it)…", start),
  });
}

export const observe = (c: CoreClient) => c.call("device.observe");

export const execute = (c: CoreClient, name: string, args: unknown) =>
  c.call("device.execute", { id: crypto.randomUUID(), name, arguments: args });

export const capabilities = (c: CoreClient) => c.call("device.capabilities");

/** The device id the connection is routed to (after lazy selection by a device method). */
export async function selectedDevice(c: CoreClient): Promise<string> {
  const r = await c.call("devices.list");
  return r.selectedDeviceId ?? "?";
}
