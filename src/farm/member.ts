/**
 * A daemon's membership of a farm (DEVICERAIL_FARM_URL): it registers its host (a new epoch at
 * every start), heartbeats, and keeps its devices' rows current (hot-plug shows within one
 * heartbeat). The farm never stands between the daemon and its local clients: when PostgreSQL is
 * unreachable the daemon goes on serving, says so in its log once, and re-registers (same epoch,
 * same rows) when the database is back.
 */
import { SQL } from "bun";
import type { Logger } from "../protocol/rpc-error.ts";
import type { FarmCatalogue } from "./catalogue.ts";
import { osMajor } from "./constraints.ts";
import { releaseSql } from "./allocator.ts";
import { farmKey } from "./credential.ts";
import type { FarmGrants } from "./grants.ts";
import { migrateFarm } from "./migrate.ts";

/** A device as the farm lists it. */
export interface FarmDevice {
  id: string;
  name: string;
  platform: string;
  osVersion: string | null;
  connected: boolean;
  /** A Session holds it outside the farm (a client with the host's token). */
  leasedLocally: boolean;
  /** Action names (device.capabilities). */
  capabilities: string[];
  /** Percent, where the platform reports it. */
  battery: number | null;
}

export interface FarmMemberOptions {
  url: string;
  hostId: string;
  hostName: string;
  version: string;
  /** host:port farm clients connect to. */
  endpoint: string;
  heartbeatMs: number;
  log: Logger;
  /** The devices this daemon has now. */
  devices: () => Promise<FarmDevice[]>;
  /** Allocations this host honours (renewed at each heartbeat). */
  grants?: FarmGrants;
  /** Sessions and failures to report (written at each heartbeat). */
  catalogue?: FarmCatalogue;
}

/** Where the farm database is, for logs: never its user or password. */
export function farmWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ""}${u.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}

/** `work`, or a rejection once `ms` have passed (after calling `onTimeout`). */
async function withinBudget<T>(work: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no answer from the farm database within ${ms} ms`));
    }, ms);
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

export class FarmMember {
  private sql: SQL | null = null;
  private epoch: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private synced = "";
  private reachable: boolean | null = null;
  private stopped = false;
  private beat: Promise<void> = Promise.resolve();
  private credentialKey: string | null = null;
  private present = new Set<string>();

  constructor(private readonly opts: FarmMemberOptions) {}

  /** The farm's credential key, once registered. */
  get key(): string | null {
    return this.credentialKey;
  }

  /** The database connection, while the farm is reachable. */
  get database(): SQL | null {
    return this.reachable ? this.sql : null;
  }

  /** Joins now if the database answers, else keeps trying every heartbeat; never throws for an unreachable database. */
  async start(): Promise<void> {
    await this.tick();
  }

  /** The epoch of this run, once registered. */
  get currentEpoch(): number | null {
    return this.epoch;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.beat;
    const sql = this.sql;
    if (sql && this.epoch !== null && this.reachable) {
      try {
        const { hostId } = this.opts;
        await this.opts.catalogue?.flush(sql).catch(() => []);
        await sql.begin(async (tx) => {
          await tx`UPDATE hosts SET state = 'left', last_seen = now() WHERE id = ${hostId} AND epoch = ${this.epoch}`;
          await tx`UPDATE devices SET present = false, updated_at = now() WHERE host_id = ${hostId} AND present`;
          await tx.unsafe(releaseSql("a.host_id = $2"), ["host stopped", hostId]);
        });
      } catch (err) {
        this.opts.log.warn({ err: (err as Error).message }, "could not tell the farm this host is leaving");
      }
    }
    await sql?.close().catch(() => {});
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beat = this.tick();
    }, this.opts.heartbeatMs);
  }

  private async tick(): Promise<void> {
    try {
      if (!this.sql)
        this.sql = new SQL(this.opts.url, {
          max: 2,
          idleTimeout: 30,
          connectionTimeout: Math.max(1, Math.ceil(this.opts.heartbeatMs / 1000)),
        });
      const sql = this.sql;
      await withinBudget(
        (async () => {
          if (this.epoch === null) await this.register(sql);
          else await this.heartbeat(sql);
          await this.syncDevices(sql);
          await this.opts.grants?.renew(sql);
          const quarantined = (await this.opts.catalogue?.flush(sql)) ?? [];
          if (quarantined.length)
            this.opts.log.warn(
              { devices: quarantined },
              "farm: devices quarantined after repeated infrastructure failures",
            );
        })(),
        Math.max(2_000, 2 * this.opts.heartbeatMs),
        () => {
          // A query that never answers (the server died mid-query, a partition) must not stop the heartbeat: start afresh.
          this.sql = null;
          void sql.close({ timeout: 0 }).catch(() => {});
        },
      );
      if (this.reachable !== true)
        this.opts.log.info(
          { farm: farmWhere(this.opts.url), hostId: this.opts.hostId, epoch: this.epoch },
          "farm: registered",
        );
      this.reachable = true;
    } catch (err) {
      // Allocations the database could not renew lapse on their own deadline.
      this.opts.grants?.expireDue();
      // Said once per outage, not every heartbeat.
      if (this.reachable !== false)
        this.opts.log.warn(
          { farm: farmWhere(this.opts.url), err: (err as Error).message },
          "farm database unreachable; serving local clients, retrying",
        );
      this.reachable = false;
      this.synced = "";
    } finally {
      this.schedule();
    }
  }

  /** The first registration of this run: a new epoch, the host row (re)written. */
  private async register(sql: SQL): Promise<void> {
    await migrateFarm(sql);
    this.credentialKey = await farmKey(sql);
    // A farm's tables are small when its first hosts join; until autovacuum analyses them (a minute
    // or so) the planner would take a device table of thousands for an empty one.
    const [stats] =
      (await sql`SELECT last_analyze IS NULL AND last_autoanalyze IS NULL AS never FROM pg_stat_user_tables WHERE relname = 'devices'`) as {
        never: boolean;
      }[];
    if (stats?.never) await sql`ANALYZE hosts, devices, allocations, requests`;
    const { hostId, hostName, version, endpoint, heartbeatMs } = this.opts;
    const [row] = (await sql`
      INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state)
      VALUES (${hostId}, ${hostName}, ${version}, ${endpoint}, 1, ${heartbeatMs}, now(), now(), 'up')
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, endpoint = EXCLUDED.endpoint,
        epoch = hosts.epoch + 1, heartbeat_ms = EXCLUDED.heartbeat_ms, started_at = now(), last_seen = now(), state = 'up'
      RETURNING epoch`) as { epoch: string | number }[];
    this.epoch = Number(row?.epoch);
    // Nothing of an earlier run is connected to this one: what it held is free again.
    await sql.unsafe(releaseSql("a.host_id = $2"), ["host restarted", hostId]);
  }

  /** Every later heartbeat, also after an outage: the same epoch; a row that vanished is written again. */
  private async heartbeat(sql: SQL): Promise<void> {
    const { hostId, hostName, version, endpoint, heartbeatMs } = this.opts;
    const updated =
      await sql`UPDATE hosts SET last_seen = now(), state = 'up' WHERE id = ${hostId} AND epoch = ${this.epoch}`;
    if (updated.count === 0)
      await sql`
        INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state)
        VALUES (${hostId}, ${hostName}, ${version}, ${endpoint}, ${this.epoch}, ${heartbeatMs}, now(), now(), 'up')
        ON CONFLICT (id) DO UPDATE SET last_seen = now(), state = 'up', epoch = GREATEST(hosts.epoch, EXCLUDED.epoch)`;
    // This host's allocations nobody claimed or renewed in time lapse now, not at the next queue pass.
    await sql.unsafe(releaseSql("a.host_id = $2 AND a.expires_at <= now()"), ["expired", hostId]);
  }

  /** Writes the device rows when the list changed since the last write (or the database came back). */
  private async syncDevices(sql: SQL): Promise<void> {
    const devices = await this.opts.devices();
    const ids = new Set(devices.map((d) => d.id));
    for (const gone of this.present)
      if (!ids.has(gone) && this.opts.grants?.holds(gone))
        this.opts.catalogue?.failure(
          gone,
          "device lost",
          "the device left its host (unplugged, or adb offline) while a farm client held it",
        );
    this.present = ids;
    const key = JSON.stringify(devices);
    if (key === this.synced) return;
    const { hostId } = this.opts;
    await sql.begin(async (tx) => {
      for (const d of devices)
        await tx`
          INSERT INTO devices (host_id, device_id, name, platform, os_version, os_major, connected, leased_locally, present, capabilities, battery, updated_at)
          VALUES (${hostId}, ${d.id}, ${d.name}, ${d.platform}, ${d.osVersion}, ${osMajor(d.osVersion)}, ${d.connected}, ${d.leasedLocally}, true, ${d.capabilities}::jsonb, ${d.battery}, now())
          ON CONFLICT (host_id, device_id) DO UPDATE SET name = EXCLUDED.name, platform = EXCLUDED.platform, os_version = EXCLUDED.os_version,
            os_major = EXCLUDED.os_major, connected = EXCLUDED.connected, leased_locally = EXCLUDED.leased_locally, present = true, capabilities = EXCLUDED.capabilities, battery = EXCLUDED.battery, updated_at = now()`;
      await tx`UPDATE devices SET present = false, updated_at = now() WHERE host_id = ${hostId} AND present AND NOT (device_id = ANY(${sql.array([...ids], "TEXT")}))`;
    });
    this.synced = key;
  }
}
