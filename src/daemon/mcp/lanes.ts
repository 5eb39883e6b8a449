/**
 * One MCP client's device work: per device it touches, an in-process JSON-RPC connection with
 * that device selected and one DeviceRail Session holding its lease (started by the client's
 * first tool call on the device). Ending the client ends them all, so a client that goes away
 * never strands a phone.
 */
import type { ServerServices } from "../../rpc/handshake.ts";
import type { Dispatcher } from "../../rpc/dispatcher.ts";
import type { Logger } from "../../rpc/rpc-error.ts";
import { type CallSuccess, LocalRpc, RpcFailure } from "../../transports/local-rpc.ts";
import type { ActionDefinition } from "../../protocol/types/action.ts";
import { errorObject } from "../../protocol/errors.ts";

const FEATURES = [
  "device.routing.v1",
  "events.snapshot.v1",
  "session.export.page.v1",
  "observation.uiSnapshot.v1",
  "device.semanticActions.v1",
  "action.protected.v1",
  "request.control.v1",
  "verdict.record.v1",
];

/** How long a first call waits for a device another Session holds before answering device_in_use. */
const LEASE_WAIT_MS = 2_000;
const LEASE_RETRY_MS = 50;

export interface LaneDeps {
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
  serverVersion: string;
}

/** A device's connection and Session for one MCP client. */
export interface Lane {
  deviceId: string;
  sessionId: string;
  /** The device's actions (device.capabilities), semantic ones included. */
  actions: ActionDefinition[];
  /** Whether the device offers an action. */
  has(name: string): boolean;
  call(method: string, params?: object, signal?: AbortSignal): Promise<CallSuccess>;
  close(): Promise<void>;
}

export class McpClient {
  private readonly lanes = new Map<string, Promise<Lane>>();
  private readonly rpcs = new Set<LocalRpc>();
  /** Every Session this client started, oldest first: its resources. */
  readonly sessions: { id: string; deviceId: string }[] = [];
  private ended = false;

  constructor(
    private readonly deps: LaneDeps,
    readonly clientName: () => string,
  ) {}

  /** A connection without a device, for listings; closed after `work`. */
  async plain<T>(work: (rpc: LocalRpc) => Promise<T>): Promise<T> {
    const rpc = await this.connect();
    try {
      return await work(rpc);
    } finally {
      await rpc.close();
      this.rpcs.delete(rpc);
    }
  }

  /** The device's lane, opened (connection, lease, Session) on first use. */
  lane(deviceId: string): Promise<Lane> {
    let lane = this.lanes.get(deviceId);
    if (!lane) {
      lane = this.open(deviceId);
      this.lanes.set(deviceId, lane);
      // A lane that failed to open is forgotten, so the next call tries again.
      lane.catch(() => this.lanes.delete(deviceId));
    }
    return lane;
  }

  /**
   * Forgets a device's lane whose Session ended without this client (the device went away, or
   * an operator ended it), closing its connection; the next call opens a new one.
   */
  async drop(deviceId: string): Promise<void> {
    const lane = this.lanes.get(deviceId);
    if (!lane) return;
    this.lanes.delete(deviceId);
    const l = await lane.catch(() => null);
    if (l) await l.close();
  }

  /**
   * Ends every Session and closes every connection. `clean` (the client said goodbye) ends the
   * Sessions as completed first; otherwise closing the connections cancels what runs and ends
   * them as a dropped connection's would.
   */
  async end(clean: boolean): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const lanes = await Promise.allSettled(this.lanes.values());
    if (clean) for (const l of lanes) if (l.status === "fulfilled") await l.value.call("session.end", { outcome: "completed" }).catch(() => {});
    await Promise.all([...this.rpcs].map((rpc) => rpc.close()));
    this.rpcs.clear();
    this.lanes.clear();
  }

  private async connect(): Promise<LocalRpc> {
    if (this.ended) throw new RpcFailure("mcp", errorObject("session_ended", { message: "the MCP session has ended", details: {} }));
    const { dispatcher, services, log, serverVersion } = this.deps;
    const rpc = new LocalRpc(dispatcher, services, { kind: "mcp", framing: "jsonMessage" }, log);
    this.rpcs.add(rpc);
    try {
      await rpc.must("system.hello", {
        client: { name: this.clientName(), version: serverVersion },
        protocol: { ranges: [{ major: 1, minMinor: 5, maxMinor: 5 }] },
        features: { required: [], optional: FEATURES },
      });
    } catch (err) {
      await rpc.close();
      this.rpcs.delete(rpc);
      throw err;
    }
    return rpc;
  }

  private async open(deviceId: string): Promise<Lane> {
    const rpc = await this.connect();
    try {
      await rpc.must("device.select", { deviceId });
      const deadline = Date.now() + LEASE_WAIT_MS;
      let sessionId: string;
      for (;;) {
        try {
          await rpc.must("device.connect");
          sessionId = ((await rpc.must("session.start")).result as { id: string }).id;
          break;
        } catch (err) {
          // The previous holder may be a process the host just replaced, whose lease is being freed.
          if (!(err instanceof RpcFailure && err.error.data.code === "device_in_use") || Date.now() + LEASE_RETRY_MS > deadline) throw err;
          await Bun.sleep(LEASE_RETRY_MS);
        }
      }
      const actions = (await rpc.must("device.capabilities")).result as ActionDefinition[];
      this.sessions.push({ id: sessionId, deviceId });
      const close = async () => {
        await rpc.close();
        this.rpcs.delete(rpc);
      };
      return { deviceId, sessionId, actions, has: (name) => actions.some((a) => a.name === name), call: (method, params, signal) => rpc.must(method, params, signal), close };
    } catch (err) {
      await rpc.close();
      this.rpcs.delete(rpc);
      throw err;
    }
  }
}
