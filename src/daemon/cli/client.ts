/**
 * The device commands' way into the core: the daemon started in this process and one in-memory
 * JSON-RPC connection to it, so a one-shot `tap` is negotiated, leased and recorded exactly like a
 * request of any other client.
 */
import { homedir } from "node:os";
import { DatabaseLockedError } from "../../core/sessions/db.ts";
import type { ActionDefinition, ActionResult } from "../../protocol/types/action.ts";
import type { DevicesListResult } from "../../protocol/types/device.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { SessionInfo } from "../../protocol/types/session.ts";
import { LocalRpc } from "../../transports/local-rpc.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { DataDirError, resolveDataPaths } from "../data-dir.ts";
import { createLogger } from "../log.ts";
import { type Daemon, StartupError, createDaemon } from "../server.ts";
import { VERSION } from "../version.ts";
import { CliError, RpcCallError, type RpcErrorData, withSpinner } from "./output.ts";

type Env = Record<string, string | undefined>;

const FEATURES = ["device.routing.v1", "events.snapshot.v1", "session.export.page.v1", "observation.uiSnapshot.v1"];

export interface CoreClient {
  readonly daemon: Daemon;
  call<T = unknown>(method: string, params?: object): Promise<T>;
  /** Closes the connection (ending a Session left open, as a dropped client's would be) and stops the daemon. */
  close(): Promise<void>;
}

/** Starts the in-process daemon on the configured data directory and says hello. */
export async function openClient(env: Env = process.env): Promise<CoreClient> {
  let config;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, 2);
    throw e;
  }
  // A one-shot command is not a service: only warnings reach stderr unless asked for more.
  const log = await createLogger(env.DEVICERAIL_LOG_LEVEL ? config.logLevel : "warn");
  let daemon: Daemon;
  try {
    daemon = await withSpinner("starting devicerail and looking for devices…", () => createDaemon(config, log, env));
  } catch (e) {
    if (e instanceof DatabaseLockedError && /another devicerail daemon/.test(e.message)) {
      const { dataDir } = resolveDataPaths(env, process.platform, homedir(), process.cwd());
      throw new CliError(
        `a devicerail daemon is running on the data directory ${dataDir}; stop it, or run this command on another data directory with DEVICERAIL_DATA_DIR`,
      );
    }
    if (e instanceof DatabaseLockedError || e instanceof DataDirError || e instanceof StartupError) throw new CliError(e.message);
    throw e;
  }
  const rpc = new LocalRpc(daemon.dispatcher, daemon.services, { kind: "memory", framing: "jsonMessage" }, log);
  const call = async <T>(method: string, params?: object): Promise<T> => {
    const out = await rpc.call(method, params);
    if (!out.ok) throw new RpcCallError(method, out.error.code, out.error.data as RpcErrorData, out.error.message);
    return out.result as T;
  };
  const client: CoreClient = {
    daemon,
    call,
    close: async () => {
      await rpc.close();
      await daemon.shutdown();
    },
  };
  try {
    await call("system.hello", {
      client: { name: "devicerail-cli", version: VERSION },
      protocol: { ranges: [{ major: 1, minMinor: 5, maxMinor: 5 }] },
      features: { required: FEATURES, optional: [] },
    });
  } catch (e) {
    await client.close();
    throw e;
  }
  return client;
}

/** Opens a client, runs `work`, and always closes it again. */
export async function withClient<T>(work: (c: CoreClient) => Promise<T>, env: Env = process.env): Promise<T> {
  const client = await openClient(env);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

/** Selects `-d ID`, or leaves routing to the sole device (the daemon says when there are several). */
/**
 * Routes the connection to `-d`: a device id, or for people who know their phone by `adb
 * devices`, the part after the driver's prefix (`emulator-5554` for `android-adb:emulator-5554`)
 * when exactly one present device has it. Anything else is selected as given, so an unknown id
 * fails with the daemon's own device_not_found.
 */
export async function route(c: CoreClient, deviceId: string | undefined): Promise<void> {
  if (deviceId === undefined) return;
  const { devices } = await c.call<DevicesListResult>("devices.list");
  const bySuffix = devices.filter((d) => d.id.endsWith(`:${deviceId}`));
  const id = devices.some((d) => d.id === deviceId) || bySuffix.length !== 1 ? deviceId : (bySuffix[0] as (typeof devices)[number]).id;
  await c.call("device.select", { deviceId: id });
}

/**
 * Connects, starts a Session, runs `work` inside it and ends it: completed, or failed with the
 * error's text, so a failed one-shot command still leaves a complete, readable Session behind.
 */
export async function inSession<T>(c: CoreClient, work: (session: SessionInfo) => Promise<T>): Promise<T> {
  await c.call("device.connect");
  const session = await c.call<SessionInfo>("session.start");
  let result: T;
  try {
    result = await work(session);
  } catch (e) {
    await c.call("session.end", { outcome: "failed", reason: (e as Error).message }).catch(() => {});
    throw e;
  }
  await c.call("session.end", { outcome: "completed" });
  return result;
}

export const observe = (c: CoreClient) => c.call<Observation>("device.observe");

export const execute = (c: CoreClient, name: string, args: unknown) =>
  c.call<ActionResult>("device.execute", { id: crypto.randomUUID(), name, arguments: args });

export const capabilities = (c: CoreClient) => c.call<ActionDefinition[]>("device.capabilities");

/** The device id the connection is routed to (after lazy selection by a device method). */
export async function selectedDevice(c: CoreClient): Promise<string> {
  const r = await c.call<{ selectedDeviceId: string | null }>("devices.list");
  return r.selectedDeviceId ?? "?";
}
