/**
 * A daemon's part in a farm, put together: its membership (registration, heartbeat, devices), the
 * grants it honours for allocations of its devices, the catalogue of its Sessions and failures,
 * and the farm's HTTP routes on its port. Built before the listener (the transports need the grant
 * issuer), started once the listener's port is known.
 */
import { hostname } from "node:os";
import { stateOf } from "../../core/connection-state.ts";
import { closeConnectionSession } from "../../core/session-access.ts";
import type { Logger } from "../../rpc/rpc-error.ts";
import type { Daemon } from "../server.ts";
import { VERSION } from "../version.ts";
import { FarmCatalogue, type QuarantinePolicy } from "./catalogue.ts";
import { FarmGrants } from "./grants.ts";
import { farmHostId } from "./host-id.ts";
import { FarmHttp } from "./http.ts";
import { type FarmDevice, FarmMember } from "./member.ts";

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
    private readonly daemon: Daemon,
    private readonly settings: FarmSettings,
    private readonly log: Logger,
  ) {
    const core = daemon.core;
    this.hostId = farmHostId(daemon.paths.dataDir);
    this.grants = new FarmGrants({
      hostId: this.hostId,
      key: () => this.member?.key ?? null,
      sql: () => this.member?.database ?? null,
      leaseMs: settings.leaseMs,
      log,
      revoke: (conn, reason) => closeConnectionSession(core, conn, reason, log),
      activeSession: (conn) => stateOf(conn).activeSessionId,
    });
    this.catalogue = new FarmCatalogue(
      this.hostId,
      settings.quarantine,
      (sessionId) => this.deviceOf(sessionId),
      (sessionId) => this.grants.allocationOf(sessionId),
    );
    this.http = new FarmHttp({ url: settings.url, leaseMs: settings.leaseMs, log });
  }

  /** Joins the farm as `endpoint` (host:port clients reach). */
  async start(endpoint: string): Promise<void> {
    const core = this.daemon.core;
    const grants = this.grants;
    this.unwatch = core.log.watch({
      committed: (events) => {
        this.catalogue.watcher.committed(events);
        for (const e of events) if (e.payload.type === "sessionEnded") grants.sessionEnded(e.sessionId);
      },
      deleted: () => {},
    });
    this.member = new FarmMember({
      url: this.settings.url,
      hostId: this.hostId,
      hostName: hostname(),
      version: VERSION,
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
    const core = this.daemon.core;
    const tick = ++this.ticks;
    const out: FarmDevice[] = [];
    for (const d of core.devices.registry.list()) {
      let caps = this.capabilities.get(d.id);
      if (!caps) {
        try {
          caps = (
            await core.devices.actions(d.id, {
              signal: AbortSignal.timeout(2_000),
              deadline: Date.now() + 2_000,
              log: this.log,
            })
          )
            .map((a) => a.name)
            .sort();
          this.capabilities.set(d.id, caps);
        } catch {
          caps = [];
        }
      }
      const platform = d.platform.kind === "other" ? d.platform.value : d.platform.kind;
      const leasedLocally = core.devices.leaseOf(d.id) !== undefined && !this.grants.holds(d.id);
      out.push({
        id: d.id,
        name: d.name,
        platform,
        osVersion: d.osVersion,
        connected: d.connected,
        leasedLocally,
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
      percent = await this.daemon.core.devices.battery(deviceId, {
        signal: AbortSignal.timeout(5_000),
        deadline: Date.now() + 5_000,
        log: this.log,
      });
    } catch {
      // Unreadable now (the phone is busy or going away): the last reading stands.
    }
    this.batteries.set(deviceId, { percent, tick });
    if (percent !== null && percent < this.settings.minBattery)
      this.catalogue.failure(deviceId, "battery low", `battery at ${percent} % (under ${this.settings.minBattery} %)`);
    return percent;
  }

  private deviceOf(sessionId: string): string | null {
    const devices = this.daemon.core.devices;
    for (const id of devices.registry.deviceIds()) if (devices.leaseOf(id)?.sessionId === sessionId) return id;
    return null;
  }
}
