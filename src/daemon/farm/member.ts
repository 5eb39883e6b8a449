/**
 * A daemon's membership of a farm (DEVICERAIL_FARM_URL): it registers its host (a new epoch at
 * every start), heartbeats, and keeps its devices' rows current (hot-plug shows within one
 * heartbeat). The farm never stands between the daemon and its local clients: when PostgreSQL is
 * unreachable the daemon goes on serving, says so in its log once, and re-registers (same epoch,
 * same rows) when the database is back.
 */
import { SQL } from "bun";
import type { DeviceInfo } from "../../protocol/types/device.ts";
import type { Logger } from "../../rpc/rpc-error.ts";
import { migrateFarm } from "./migrate.ts";

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
  devices: () => Promise<DeviceInfo[]>;
}

const platformOf = (d: DeviceInfo) => (d.platform.kind === "other" ? String((d.platform as { value?: unknown }).value) : d.platform.kind);

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

  constructor(private readonly opts: FarmMemberOptions) {}

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
        await sql.begin(async (tx) => {
          await tx`UPDATE hosts SET state = 'left', last_seen = now() WHERE id = ${hostId} AND epoch = ${this.epoch}`;
          await tx`UPDATE devices SET present = false, updated_at = now() WHERE host_id = ${hostId} AND present`;
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
      if (!this.sql) this.sql = new SQL(this.opts.url, { max: 2, idleTimeout: 30, connectionTimeout: Math.max(1, Math.ceil(this.opts.heartbeatMs / 1000)) });
      const sql = this.sql;
      await withinBudget(
        (async () => {
          if (this.epoch === null) await this.register(sql);
          else await this.heartbeat(sql);
          await this.syncDevices(sql);
        })(),
        Math.max(2_000, 2 * this.opts.heartbeatMs),
        () => {
          // A query that never answers (the server died mid-query, a partition) must not stop the heartbeat: start afresh.
          this.sql = null;
          void sql.close({ timeout: 0 }).catch(() => {});
        },
      );
      if (this.reachable !== true) this.opts.log.info({ farm: farmWhere(this.opts.url), hostId: this.opts.hostId, epoch: this.epoch }, "farm: registered");
      this.reachable = true;
    } catch (err) {
      // Said once per outage, not every heartbeat.
      if (this.reachable !== false) this.opts.log.warn({ farm: farmWhere(this.opts.url), err: (err as Error).message }, "farm database unreachable; serving local clients, retrying");
      this.reachable = false;
      this.synced = "";
    } finally {
      this.schedule();
    }
  }

  /** The first registration of this run: a new epoch, the host row (re)written. */
  private async register(sql: SQL): Promise<void> {
    await migrateFarm(sql);
    const { hostId, hostName, version, endpoint, heartbeatMs } = this.opts;
    const [row] = (await sql`
      INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state)
      VALUES (${hostId}, ${hostName}, ${version}, ${endpoint}, 1, ${heartbeatMs}, now(), now(), 'up')
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, endpoint = EXCLUDED.endpoint,
        epoch = hosts.epoch + 1, heartbeat_ms = EXCLUDED.heartbeat_ms, started_at = now(), last_seen = now(), state = 'up'
      RETURNING epoch`) as { epoch: string | number }[];
    this.epoch = Number(row?.epoch);
  }

  /** Every later heartbeat, also after an outage: the same epoch; a row that vanished is written again. */
  private async heartbeat(sql: SQL): Promise<void> {
    const { hostId, hostName, version, endpoint, heartbeatMs } = this.opts;
    const updated = await sql`UPDATE hosts SET last_seen = now(), state = 'up' WHERE id = ${hostId} AND epoch = ${this.epoch}`;
    if (updated.count === 0)
      await sql`
        INSERT INTO hosts (id, name, version, endpoint, epoch, heartbeat_ms, started_at, last_seen, state)
        VALUES (${hostId}, ${hostName}, ${version}, ${endpoint}, ${this.epoch}, ${heartbeatMs}, now(), now(), 'up')
        ON CONFLICT (id) DO UPDATE SET last_seen = now(), state = 'up', epoch = GREATEST(hosts.epoch, EXCLUDED.epoch)`;
  }

  /** Writes the device rows when the list changed since the last write (or the database came back). */
  private async syncDevices(sql: SQL): Promise<void> {
    const devices = await this.opts.devices();
    const key = JSON.stringify(devices);
    if (key === this.synced) return;
    const { hostId } = this.opts;
    await sql.begin(async (tx) => {
      for (const d of devices)
        await tx`
          INSERT INTO devices (host_id, device_id, name, platform, os_version, connected, present, capabilities, updated_at)
          VALUES (${hostId}, ${d.id}, ${d.name}, ${platformOf(d)}, ${d.osVersion}, ${d.connected}, true, ${"[]"}::jsonb, now())
          ON CONFLICT (host_id, device_id) DO UPDATE SET name = EXCLUDED.name, platform = EXCLUDED.platform, os_version = EXCLUDED.os_version,
            connected = EXCLUDED.connected, present = true, updated_at = now()`;
      const ids = devices.map((d) => d.id);
      await tx`UPDATE devices SET present = false, updated_at = now() WHERE host_id = ${hostId} AND present AND NOT (device_id = ANY(${sql.array(ids, "TEXT")}))`;
    });
    this.synced = key;
  }
}
