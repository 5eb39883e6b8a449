/**
 * A daemon's part in a farm, put together: its membership (registration, heartbeat, devices), the
 * grants it honours for allocations of its devices, the catalogue of its Sessions and failures,
 * and the farm's HTTP routes on its port. Built before the listener (the transports need the grant
 * issuer), started once the listener's port is known.
 */
import { hostname } from "node:os";
import type { TestEvent } from "../protocol/types/event.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import type { Connection } from "../rpc/connection.ts";
import { FarmCatalogue, type QuarantinePolicy } from "./catalogue.ts";
import { FarmGrants } from "./grants.ts";
import { FarmHttp } from "./http.ts";
import { type FarmDevice, FarmMember } from "./member.ts";

/**
 * What the farm needs of the daemon it runs in, and all it sees of it: the server builds this from
 * core (src/server/farm-port.ts), so the farm never reaches the engine's services.
 */
export interface FarmHostPort {
  /** This host's id in the farm, kept in its data directory. */
  hostId: string;
  /** The daemon's version, as the farm's host list shows it. */
  version: string;
  /** Calls `committed` with each batch of events the log commits; returns the unsubscribe. */
  watchCommitted(committed: (events: readonly TestEvent[]) => void): () => void;
  /** The devices of this host now, with whether a local Session holds each. */
  devices(): {
    id: string;
    name: string;
    platform: string;
    osVersion: string | null;
    connected: boolean;
    leased: boolean;
  }[];
  /** The action names a device offers (asked of its driver). */
  actionNames(deviceId: string, timeoutMs: number): Promise<string[]>;
  /** The battery in percent, or null when the driver cannot tell. */
  battery(deviceId: string, timeoutMs: number): Promise<number | null>;
  /** The device a Session holds the lease of, if any. */
  deviceOfSession(sessionId: string): string | null;
  /** Ends the Session a connection has open (its allocation lapsed). */
  revoke(conn: Connection, reason: string): Promise<void>;
  /** The Session a connection has open. */
  activeSession(conn: Connection): string | null;
}

export interface FarmSettings {
  url: string;
  heartbeatMs: number;
  leaseMs: number;
  quarantine: QuarantinePolicy;
  /** A battery below this percent counts as an infrastructure failure at each reading (0 = never). */
  minBattery: number;
}

/** Batteries are read every this many heartbeats (a minute at the default 5 s): they change slowly, and each read is an adb shell. */
const BATTERY_EVERY_TICKS = 12;

export class FarmHost {
  readonly hostId: string;
  readonly grants: FarmGrants;
  readonly catalogue: FarmCatalogue;
  readonly http: FarmHttp;
  private member: FarmMember | null = null;
  private unwatch: (() => void) | null = null;
  private readonly capabilities = new Map<string, string[]>();
  private readonly batteries = new Map<string, { percent: number | null; tick: number }>();
  private ticks = 0;

  constructor(
    private readonly port: FarmHostPort,
    private readonly settings: FarmSettings,
    private readonly log: Logger,
  ) {
    this.hostId = port.hostId;
    this.grants = new FarmGrants({
      hostId: this.hostId,
      key: () => this.member?.key ?? null,
      sql: () => this.member?.database ?? null,
      leaseMs: settings.leaseMs,
      log,
      revoke: (conn, reason) => port.revoke(conn, reason),
      activeSession: (conn) => port.activeSession(conn),
    });
    this.catalogue = new FarmCatalogue(
      this.hostId,
      settings.quarantine,
      (sessionId) => port.deviceOfSession(sessionId),
      (sessionId) => this.grants.allocationOf(sessionId),
    );
    this.http = new FarmHttp({ url: settings.url, leaseMs: settings.leaseMs, log });
  }

  /** Joins the farm as `endpoint` (host:port clients reach). */
  async start(endpoint: string): Promise<void> {
    const grants = this.grants;
    this.unwatch = this.port.watchCommitted((events) => {
      this.catalogue.watcher.committed(events);
      for (const e of events) if (e.payload.type === "sessionEnded") grants.sessionEnded(e.sessionId);
    });
    this.member = new FarmMember({
      url: this.settings.url,
      hostId: this.hostId,
      hostName: hostname(),
      version: this.port.version,
      endpoint,
      heartbeatMs: this.settings.heartbeatMs,
      log: this.log,
      devices: () => this.devices(),
      grants,
      catalogue: this.catalogue,
    });
    await this.member.start();
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    await this.http.stop();
    await this.member?.stop();
  }

  /** The devices as the farm lists them; capabilities asked of the driver once per device, batteries now and then. */
  private async devices(): Promise<FarmDevice[]> {
    const tick = ++this.ticks;
    const out: FarmDevice[] = [];
    for (const d of this.port.devices()) {
      let caps = this.capabilities.get(d.id);
      if (!caps) {
        try {
          caps = (await this.port.actionNames(d.id, 2_000)).sort();
          this.capabilities.set(d.id, caps);
        } catch {
          caps = [];
        }
      }
      out.push({
        id: d.id,
        name: d.name,
        platform: d.platform,
        osVersion: d.osVersion,
        connected: d.connected,
        leasedLocally: d.leased && !this.grants.holds(d.id),
        capabilities: caps,
        battery: await this.battery(d.id, tick),
      });
    }
    return out;
  }

  /** The last battery reading, renewed every BATTERY_EVERY_TICKS; a reading under the threshold is a failure. */
  private async battery(deviceId: string, tick: number): Promise<number | null> {
    const known = this.batteries.get(deviceId);
    if (known && tick - known.tick < BATTERY_EVERY_TICKS) return known.percent;
    let percent = known?.percent ?? null;
    try {
      percent = await this.port.battery(deviceId, 5_000);
    } catch {
      // Unreadable now (the phone is busy or going away): the last reading stands.
    }
    this.batteries.set(deviceId, { percent, tick });
    if (percent !== null && percent < this.settings.minBattery)
      this.catalogue.failure(deviceId, "battery low", `battery at ${percent} % (under ${this.settings.minBattery} %)`);
    return percent;
  }
}
