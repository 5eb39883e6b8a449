/**
 * `farm hosts` and `farm devices`: the farm's directory as its database holds it, read straight
 * from DEVICERAIL_FARM_URL (an operator's view; no daemon needed). A host is gone when it has
 * missed three heartbeats, by the database's clock; its devices are gone with it.
 */
import { SQL } from "bun";
import { ConfigError, loadConfig } from "../config.ts";
import { farmWhere } from "../farm/member.ts";
import { CliError, isoSeconds, printJson, printRows } from "./output.ts";

export interface FarmHostRow {
  id: string;
  name: string;
  version: string;
  endpoint: string;
  epoch: number;
  state: "up" | "gone" | "left";
  lastSeenMs: number;
  devices: number;
}

export interface FarmDeviceRow {
  deviceId: string;
  name: string;
  platform: string;
  osVersion: string | null;
  hostId: string;
  host: string;
  endpoint: string;
  /** available, connected, absent (unplugged) or gone (its host is). */
  state: string;
  sinceMs: number;
}

/** A host's state as of the database's now(): up, left (stopped cleanly) or gone (three heartbeats missed). */
const HOST_STATE = `CASE WHEN h.state = 'left' THEN 'left' WHEN now() - h.last_seen > make_interval(secs => 3 * h.heartbeat_ms / 1000.0) THEN 'gone' ELSE 'up' END`;

async function withFarm<T>(work: (sql: SQL) => Promise<T>): Promise<T> {
  let url: string;
  try {
    const farm = loadConfig().farm;
    if (!farm) throw new CliError("set DEVICERAIL_FARM_URL to the farm's postgres:// URL", 2);
    url = farm.url;
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, 2);
    throw e;
  }
  const sql = new SQL(url, { max: 1, connectionTimeout: 5 });
  try {
    return await work(sql);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as { code?: string }).code;
    if (code === "42P01") throw new CliError(`the farm database at ${farmWhere(url)} has no farm tables yet: start a daemon with DEVICERAIL_FARM_URL first`);
    throw new CliError(`the farm database at ${farmWhere(url)} is unreachable: ${(e as Error).message}`);
  } finally {
    await sql.close().catch(() => {});
  }
}

export async function farmHostsCommand(opts: { json?: boolean }): Promise<number> {
  const rows = await withFarm(async (sql) =>
    (await sql.unsafe(`
      SELECT h.id, h.name, h.version, h.endpoint, h.epoch, ${HOST_STATE} AS state, (extract(epoch FROM h.last_seen) * 1000)::bigint AS "lastSeenMs",
        (SELECT count(*) FROM devices d WHERE d.host_id = h.id AND d.present)::int AS devices
      FROM hosts h ORDER BY h.name, h.id`)) as FarmHostRow[],
  );
  const hosts = rows.map((r) => ({ ...r, epoch: Number(r.epoch), lastSeenMs: Number(r.lastSeenMs) }));
  if (opts.json) printJson({ hosts });
  else if (hosts.length === 0) process.stdout.write("no hosts have joined the farm\n");
  else printRows(["HOST", "NAME", "ENDPOINT", "STATE", "EPOCH", "DEVICES", "LAST SEEN", "VERSION"], hosts.map((h) => [h.id, h.name, h.endpoint, h.state, String(h.epoch), String(h.devices), isoSeconds(h.lastSeenMs), h.version]));
  return 0;
}

export async function farmDevicesCommand(opts: { json?: boolean }): Promise<number> {
  const rows = await withFarm(async (sql) =>
    (await sql.unsafe(`
      SELECT d.device_id AS "deviceId", d.name, d.platform, d.os_version AS "osVersion", d.host_id AS "hostId", h.name AS host, h.endpoint,
        CASE WHEN ${HOST_STATE} <> 'up' THEN 'gone' WHEN NOT d.present THEN 'absent' WHEN d.connected THEN 'connected' ELSE 'available' END AS state,
        (extract(epoch FROM d.updated_at) * 1000)::bigint AS "sinceMs"
      FROM devices d JOIN hosts h ON h.id = d.host_id ORDER BY h.name, d.device_id`)) as FarmDeviceRow[],
  );
  const devices = rows.map((r) => ({ ...r, sinceMs: Number(r.sinceMs) }));
  if (opts.json) printJson({ devices });
  else if (devices.length === 0) process.stdout.write("no devices in the farm\n");
  else printRows(["DEVICE", "PLATFORM", "NAME", "OS", "HOST", "ENDPOINT", "STATE", "SINCE"], devices.map((d) => [d.deviceId, d.platform, d.name, d.osVersion ?? "-", d.host, d.endpoint, d.state, isoSeconds(d.sinceMs)]));
  return 0;
}
