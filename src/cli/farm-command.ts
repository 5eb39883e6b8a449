/**
 * `farm hosts`, `farm devices` and `farm sessions`: the farm's directory as its database holds it,
 * read straight from DEVICERAIL_FARM_URL (an operator's view; no daemon needed). A host is gone
 * when it has missed three heartbeats, by the database's clock; its devices are gone with it.
 */
import { SQL } from "bun";
import { HOST_UP_SQL } from "../farm/allocator.ts";
import { type Config, ConfigError, loadConfig } from "../server/config.ts";
import { farmWhere } from "../farm/member.ts";
import { CliError, EXIT, isoSeconds, printJson, printRows } from "./output.ts";
import { stdout } from "./std-streams.ts";

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
  /** gone (its host is), absent (unplugged), allocated, blocked, quarantined, busy (in use on its host outside the farm) or available. */
  state: string;
  /** Who holds it (allocated), and the allocation. */
  holder: string | null;
  allocationId: string | null;
  /** Since when it is in this state. */
  sinceMs: number;
  /** ok, or what is wrong: the block or quarantine reason, recent infrastructure failures. */
  health: string;
  connected: boolean;
  capabilities: string[];
  /** Percent, where the platform reports it (Android). */
  battery: number | null;
}

export interface FarmSessionRow {
  sessionId: string;
  hostId: string;
  host: string;
  deviceId: string | null;
  holder: string | null;
  allocationId: string | null;
  startedAtMs: number;
  endedAtMs: number | null;
  outcome: string | null;
  reason: string | null;
  /** The owning host's live report of the Session (needs the host's token, or a browser on a host with it). */
  report: string;
}

/** A host's state as of the database's now(): up, left (stopped cleanly) or gone (three heartbeats missed). */
const HOST_STATE = `CASE WHEN h.state = 'left' THEN 'left' WHEN ${HOST_UP_SQL} THEN 'up' ELSE 'gone' END`;

/** The farm settings of the environment; a usage error (exit 2) when DEVICERAIL_FARM_URL or its companions are missing or invalid. */
export function farmConfig(): NonNullable<Config["farm"]> {
  try {
    const farm = loadConfig().farm;
    if (!farm) throw new CliError("set DEVICERAIL_FARM_URL to the farm's postgres:// URL", EXIT.usage);
    return farm;
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}

/** Runs `work` on the farm database; its failures become one line naming the database (never its password). */
export async function withFarm<T>(work: (sql: SQL, url: string) => Promise<T>): Promise<T> {
  const url = farmConfig().url;
  const sql = new SQL(url, { max: 2, connectionTimeout: 5 });
  try {
    return await work(sql, url);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as { code?: string }).code;
    if (code === "42P01" || code === "42703")
      throw new CliError(
        `the farm database at ${farmWhere(url)} has no farm tables for this version yet: start a daemon with DEVICERAIL_FARM_URL first`,
      );
    throw new CliError(`the farm database at ${farmWhere(url)} is unreachable: ${(e as Error).message}`);
  } finally {
    await sql.close().catch(() => {});
  }
}

export async function farmHostsCommand(opts: { json?: boolean }): Promise<number> {
  const rows = await withFarm(
    async (sql) =>
      (await sql.unsafe(`
      SELECT h.id, h.name, h.version, h.endpoint, h.epoch, ${HOST_STATE} AS state, (extract(epoch FROM h.last_seen) * 1000)::bigint AS "lastSeenMs",
        (SELECT count(*) FROM devices d WHERE d.host_id = h.id AND d.present)::int AS devices
      FROM hosts h ORDER BY h.name, h.id`)) as FarmHostRow[],
  );
  const hosts = rows.map((r) => ({ ...r, epoch: Number(r.epoch), lastSeenMs: Number(r.lastSeenMs) }));
  if (opts.json) printJson({ hosts });
  else if (hosts.length === 0) stdout.write("no hosts have joined the farm\n");
  else
    printRows(
      ["HOST", "NAME", "ENDPOINT", "STATE", "EPOCH", "DEVICES", "LAST SEEN", "VERSION"],
      hosts.map((h) => [
        h.id,
        h.name,
        h.endpoint,
        h.state,
        String(h.epoch),
        String(h.devices),
        isoSeconds(h.lastSeenMs),
        h.version,
      ]),
    );
  return 0;
}

/** Every device with its state, holder and health, as one query (also what `farm devices --json` prints). */
export async function farmDevices(sql: SQL, windowMs: number): Promise<FarmDeviceRow[]> {
  const rows = (await sql.unsafe(
    `
    SELECT d.device_id AS "deviceId", d.name, d.platform, d.os_version AS "osVersion", d.host_id AS "hostId", h.name AS host, h.endpoint,
      d.connected, d.capabilities, d.battery, a.holder, a.id AS "allocationId",
      CASE WHEN ${HOST_STATE} <> 'up' THEN 'gone' WHEN NOT d.present THEN 'absent' WHEN a.id IS NOT NULL THEN 'allocated'
        WHEN d.blocked_reason IS NOT NULL THEN 'blocked' WHEN d.quarantined_reason IS NOT NULL THEN 'quarantined' WHEN d.leased_locally THEN 'busy' ELSE 'available' END AS state,
      (extract(epoch FROM CASE WHEN ${HOST_STATE} <> 'up' THEN h.last_seen WHEN a.id IS NOT NULL THEN a.created_at
        WHEN d.blocked_reason IS NOT NULL THEN d.blocked_at WHEN d.quarantined_reason IS NOT NULL THEN d.quarantined_at ELSE d.updated_at END) * 1000)::bigint AS "sinceMs",
      CASE WHEN d.quarantined_reason IS NOT NULL THEN 'quarantined: ' || d.quarantined_reason
        WHEN d.blocked_reason IS NOT NULL THEN 'blocked: ' || d.blocked_reason
        WHEN f.n > 0 THEN f.n || ' infrastructure failure' || CASE WHEN f.n = 1 THEN '' ELSE 's' END || ' recently (last: ' || f.last || ')'
        ELSE 'ok' END AS health
    FROM devices d JOIN hosts h ON h.id = d.host_id
    LEFT JOIN allocations a ON a.id = d.allocation_id AND a.expires_at > now()
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS n, (array_agg(kind ORDER BY at DESC))[1] AS last FROM failures g
      WHERE g.host_id = d.host_id AND g.device_id = d.device_id AND g.at > now() - make_interval(secs => $1 / 1000.0) AND g.at > coalesce(d.cleared_at, '-infinity')
    ) f ON true
    ORDER BY h.name, d.device_id`,
    [windowMs],
  )) as FarmDeviceRow[];
  return rows.map((r) => ({ ...r, sinceMs: Number(r.sinceMs) }));
}

export async function farmDevicesCommand(opts: { json?: boolean }): Promise<number> {
  const windowMs = farmConfig().quarantine.windowMs;
  const devices = await withFarm((sql) => farmDevices(sql, windowMs));
  if (opts.json) printJson({ devices });
  else if (devices.length === 0) stdout.write("no devices in the farm\n");
  else
    printRows(
      ["DEVICE", "PLATFORM", "NAME", "OS", "HOST", "STATE", "HOLDER", "SINCE", "BATTERY", "HEALTH"],
      devices.map((d) => [
        d.deviceId,
        d.platform,
        d.name,
        d.osVersion ?? "-",
        `${d.host} (${d.endpoint})`,
        d.state,
        d.holder ?? "-",
        isoSeconds(d.sinceMs),
        d.battery === null ? "-" : `${d.battery}%`,
        d.health,
      ]),
    );
  return 0;
}

export async function farmSessionsCommand(opts: {
  json?: boolean;
  limit?: number;
  host?: string;
  device?: string;
}): Promise<number> {
  const limit = opts.limit ?? 50;
  const rows = await withFarm(
    async (sql) =>
      (await sql`
      SELECT s.session_id AS "sessionId", s.host_id AS "hostId", h.name AS host, h.endpoint, s.device_id AS "deviceId", s.holder, s.allocation_id AS "allocationId",
        (extract(epoch FROM s.started_at) * 1000)::bigint AS "startedAtMs", (extract(epoch FROM s.ended_at) * 1000)::bigint AS "endedAtMs", s.outcome, s.reason
      FROM sessions s JOIN hosts h ON h.id = s.host_id
      WHERE (${opts.host ?? null}::text IS NULL OR h.id = ${opts.host ?? null} OR h.name = ${opts.host ?? null} OR h.endpoint = ${opts.host ?? null})
        AND (${opts.device ?? null}::text IS NULL OR s.device_id = ${opts.device ?? null})
      ORDER BY s.started_at DESC LIMIT ${limit}`) as (Omit<FarmSessionRow, "report"> & { endpoint: string })[],
  );
  const sessions: FarmSessionRow[] = rows.map(({ endpoint, ...r }) => ({
    ...r,
    startedAtMs: Number(r.startedAtMs),
    endedAtMs: r.endedAtMs === null ? null : Number(r.endedAtMs),
    report: `http://${endpoint}/sessions/${r.sessionId}/report`,
  }));
  if (opts.json) printJson({ sessions });
  else if (sessions.length === 0) stdout.write("no Sessions recorded in the farm\n");
  else
    printRows(
      ["SESSION", "HOST", "DEVICE", "HOLDER", "STARTED", "OUTCOME", "REPORT"],
      sessions.map((s) => [
        s.sessionId,
        s.host,
        s.deviceId ?? "-",
        s.holder ?? "-",
        isoSeconds(s.startedAtMs),
        s.outcome ?? "active",
        s.report,
      ]),
    );
  return 0;
}
