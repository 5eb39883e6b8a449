/**
 * Farm hosts for the end-to-end tests: daemons joined to a temporary PostgreSQL with a fast
 * heartbeat and a short lease, the farm CLI against the same database, and clients that connect
 * to an allocation's owning host with its credential.
 */
import type { FarmDeviceRow, FarmHostRow } from "../../src/cli/farm-command.ts";
import type { Allocation } from "../../src/farm/allocator.ts";
import type { PgCluster } from "../support/postgres.ts";
import { pollUntil } from "../support/wait.ts";
import { cli, cliJson } from "../cli/run.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

export const TOKEN = "farm-test-token-0123456789abcdef";
export const HEARTBEAT_MS = 200;
export const LEASE_MS = 2_000;

/** A host's environment: its Mock devices named PREFIX-mock-N. */
export const hostEnv = (pg: PgCluster, prefix: string, extra: Record<string, string> = {}) => ({
  DEVICERAIL_FARM_URL: pg.url,
  DEVICERAIL_TOKEN: TOKEN,
  DEVICERAIL_FARM_HEARTBEAT_MS: String(HEARTBEAT_MS),
  DEVICERAIL_FARM_LEASE_MS: String(LEASE_MS),
  DEVICERAIL_MOCK_ID_PREFIX: prefix,
  DEVICERAIL_ANDROID: "off",
  ...extra,
});
export const startHost = (pg: PgCluster, prefix: string, extra: Record<string, string> = {}) =>
  ServeDaemon.start(["--listen", "127.0.0.1:0"], hostEnv(pg, prefix, extra));

export const farmEnv = (pg: PgCluster) => ({ DEVICERAIL_FARM_URL: pg.url, DEVICERAIL_FARM_LEASE_MS: String(LEASE_MS) });
export const farmCli = (pg: PgCluster, args: string[]) => cli(["farm", ...args], farmEnv(pg));
export const acquireCli = async (pg: PgCluster, args: string[]): Promise<Allocation> =>
  (await cliJson<{ allocation: Allocation }>(["farm", "acquire", ...args], farmEnv(pg))).allocation;
export const farmDevices = async (pg: PgCluster) =>
  (await cliJson<{ devices: FarmDeviceRow[] }>(["farm", "devices"], farmEnv(pg))).devices;
export const farmHosts = async (pg: PgCluster) =>
  (await cliJson<{ hosts: FarmHostRow[] }>(["farm", "hosts"], farmEnv(pg))).hosts;
export const deviceRow = async (pg: PgCluster, id: string) => (await farmDevices(pg)).find((d) => d.deviceId === id);
export const available = (pg: PgCluster, n: number) =>
  pollUntil(
    `${n} devices available`,
    () => farmDevices(pg),
    (ds) => ds.filter((d) => d.state === "available").length === n,
    15_000,
  );
export const portOf = (a: Allocation) => Number(a.endpoint.split(":")[1]);

/** A client of the owning host, authenticated with the allocation's credential, its device connected. */
export async function claim(a: Allocation): Promise<RpcSocket> {
  const c = await RpcSocket.connect({ port: portOf(a) }, { tokenLine: a.credential });
  await c.hello();
  const connected = await c.call("device.connect");
  if (!connected.result) throw new Error(`device.connect failed: ${JSON.stringify(connected)}`);
  return c;
}

/** `claim`, then a Session on the device. */
export async function claimSession(a: Allocation): Promise<RpcSocket> {
  const c = await claim(a);
  const started = await c.call("session.start");
  if (!started.result) throw new Error(`session.start failed: ${JSON.stringify(started)}`);
  return c;
}

export const tap = (c: RpcSocket, extra: Record<string, unknown> = {}) =>
  c.call("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 10, y: 10 }, ...extra });
