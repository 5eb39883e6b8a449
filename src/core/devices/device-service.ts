import type { CallContext, Driver, Protection } from "../../driver/driver.ts";
import { DriverError } from "../../driver/driver-error.ts";
import type { ActionDefinition } from "../../protocol/types/action.ts";
import type { DeviceInfo } from "../../protocol/types/device.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { Logger } from "../../protocol/rpc-error.ts";
import { DeviceRegistry } from "./registry.ts";
import { SEMANTIC_DEFINITIONS, isSemanticName, semanticProtection } from "./semantic/definitions.ts";
import { TreeMemory } from "./semantic/tree-memory.ts";
import { once } from "../once.ts";

interface Lease {
  connectionId: string;
  sessionId: string;
}

/**
 * Every driver's devices in one registry, the exclusive leases that keep two connections from
 * driving one device, and the count of operations in flight per Session.
 *
 * A lease lives exactly as long as its Session and its connection: it is released by session.end,
 * connection close and shutdown, never by a timer, so an idle Session cannot end up holding an
 * expired lease it can neither use nor give back (the reference's C9).
 */
export class DeviceService {
  readonly registry = new DeviceRegistry();
  readonly trees = new TreeMemory();
  private readonly owners = new Map<string, Driver>();
  private readonly leases = new Map<string, Lease>();
  private readonly inFlight = new Map<string, { observations: number; actions: number }>();
  private readonly drivers: Driver[] = [];
  /** Devices of fallback drivers (the Mock under DEVICERAIL_MOCK=auto), listed or not. */
  private readonly fallback = new Map<string, DeviceInfo>();

  constructor(private readonly log: Logger) {}

  /**
   * Starts a driver's discovery; its devices enter and leave the registry as it reports them.
   * A `fallback` driver's devices are listed only while no other driver has a device, so that a
   * user with one phone plugged in still gets sole-device routing; a fallback device that is
   * leased stays until its Session ends.
   */
  async attach(driver: Driver, ctx: CallContext, opts: { fallback?: boolean } = {}): Promise<void> {
    this.drivers.push(driver);
    await driver.start((change) => {
      if (change.type === "present") {
        this.owners.set(change.device.id, driver);
        if (opts.fallback) this.fallback.set(change.device.id, change.device);
        else this.registry.upsert(change.device);
      } else {
        this.owners.delete(change.deviceId);
        this.fallback.delete(change.deviceId);
        this.registry.remove(change.deviceId);
        this.trees.forget(change.deviceId);
        this.log.info({ deviceId: change.deviceId }, "device gone");
      }
      this.placeFallback();
    }, ctx);
  }

  /** Lists the fallback devices exactly when no other device is present (leased ones stay). */
  private placeFallback(): void {
    if (this.fallback.size === 0) return;
    const real = this.registry.deviceIds().some((id) => !this.fallback.has(id));
    for (const [id, info] of this.fallback) {
      if (!real) {
        if (!this.registry.get(id)) this.registry.upsert(info);
      } else if (!this.leases.has(id) && this.registry.remove(id))
        this.log.info({ deviceId: id }, "mock device hidden: a real device is present");
    }
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.drivers.map((d) => d.stop()));
  }

  /** The driver behind a registered device; a device that vanished since routing is device_not_found. */
  driver(deviceId: string): Driver {
    const d = this.registry.get(deviceId) ? this.owners.get(deviceId) : undefined;
    if (!d) throw new RpcError("device_not_found", { arg: deviceId, details: { deviceId } });
    return d;
  }

  /** Whether core runs the semantic actions on this device (a driver with trees and element input). */
  semantic(deviceId: string): boolean {
    const d = this.driver(deviceId);
    return d.uiTrees && d.elements !== undefined && (d.supportsElements?.(deviceId) ?? true);
  }

  /** The device's whole action space: the driver's own actions, then the semantic ones core adds. */
  async actions(deviceId: string, ctx: CallContext): Promise<ActionDefinition[]> {
    const own = await this.driver(deviceId).actions(deviceId, ctx);
    if (!this.semantic(deviceId)) return own;
    if (own.some((d) => isSemanticName(d.name)))
      throw new DriverError("protocol_error", { detail: "driver advertises a semantic action itself" });
    return [...own, ...SEMANTIC_DEFINITIONS.map((d) => ({ ...d }))];
  }

  /** Protection of a name without I/O; undefined for names the device does not know. */
  classify(deviceId: string, name: string): Protection | undefined {
    if (isSemanticName(name) && this.semantic(deviceId)) return semanticProtection(name);
    return this.driver(deviceId).classify(deviceId, name);
  }

  /** The device's battery level in percent, where its driver can tell; null otherwise. */
  async battery(deviceId: string, ctx: CallContext): Promise<number | null> {
    return (await this.driver(deviceId).battery?.(deviceId, ctx)) ?? null;
  }

  info(deviceId: string): DeviceInfo {
    const info = this.registry.get(deviceId);
    if (!info) throw new RpcError("device_not_found", { arg: deviceId, details: { deviceId } });
    return info;
  }

  /** Runs the driver's health probe; a failure is the driver's own typed error. */
  async probe(deviceId: string, ctx: CallContext): Promise<void> {
    await this.driver(deviceId).health(deviceId, ctx);
  }

  acquireLease(deviceId: string, connectionId: string, sessionId: string): void {
    this.checkAccess(deviceId, connectionId);
    this.leases.set(deviceId, { connectionId, sessionId });
  }

  releaseLease(deviceId: string, connectionId: string): void {
    if (this.leases.get(deviceId)?.connectionId === connectionId) this.leases.delete(deviceId);
    this.placeFallback();
  }

  /** Connect/disconnect are refused while another connection leases the device. */
  checkAccess(deviceId: string, connectionId: string): void {
    const held = this.leases.get(deviceId);
    if (held && held.connectionId !== connectionId)
      throw new RpcError("device_in_use", { arg: deviceId, details: { deviceId } });
  }

  leaseOf(deviceId: string): Lease | undefined {
    return this.leases.get(deviceId);
  }

  async connect(deviceId: string, ctx: CallContext): Promise<DeviceInfo> {
    const info = await this.driver(deviceId).connect(deviceId, ctx);
    if (info.id !== deviceId) throw new DriverError("protocol_error", { detail: `driver answered for ${info.id}` });
    this.update(info);
    return info;
  }

  async disconnect(deviceId: string, ctx: CallContext): Promise<void> {
    await this.driver(deviceId).disconnect(deviceId, ctx);
    this.update({ ...this.info(deviceId), connected: false });
  }

  private update(info: DeviceInfo): void {
    if (this.fallback.has(info.id)) this.fallback.set(info.id, info);
    if (this.registry.get(info.id)) this.registry.upsert(info);
  }

  /** Counts an observation or action as in flight for the Session until the returned release runs. */
  begin(sessionId: string, kind: "observations" | "actions"): () => void {
    const counts = this.inFlight.get(sessionId) ?? { observations: 0, actions: 0 };
    counts[kind]++;
    this.inFlight.set(sessionId, counts);
    return once(() => {
      counts[kind]--;
      if (counts.observations === 0 && counts.actions === 0) this.inFlight.delete(sessionId);
    });
  }

  /** session_busy when the Session still has work in flight (docs/protocol/sessions-and-events.md#invariants). */
  assertIdle(sessionId: string): void {
    const c = this.inFlight.get(sessionId);
    if (!c) return;
    if (c.actions > 0)
      throw new RpcError("session_busy", {
        message: `session ${sessionId} still has ${c.actions} action(s) in flight`,
        details: { inFlightActions: c.actions, sessionId },
      });
    throw new RpcError("session_busy", {
      message: `session ${sessionId} still has ${c.observations} observation(s) in flight`,
      details: { inFlightObservations: c.observations, sessionId },
    });
  }
}
