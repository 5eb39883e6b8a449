/**
 * One MCP client's device work: per device it touches, an in-process JSON-RPC connection with
 * that device selected and one DeviceRail Session holding its lease (started by the client's
 * first tool call on the device). Ending the client ends them all, so a client that goes away
 * never strands a phone.
 */
import { RemoteError } from "../../client/remote-error.ts";
import type { CallOptions } from "../../client/client.ts";
import { startSession } from "../../client/device-session.ts";
import { hello } from "../../client/hello.ts";
import type { Connect, LocalClient } from "../../client/in-process.ts";
import type { InputOf, MethodName, OutputOf } from "../../protocol/methods.ts";
import type { ActionDefinition } from "../../protocol/types/action.ts";
import { errorObject } from "../../protocol/errors.ts";

export interface LaneDeps {
  /** Opens an in-process connection (the composition root's). */
  connect: Connect;
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
  call<M extends MethodName>(method: M, params?: InputOf<M>, signal?: AbortSignal): Promise<OutputOf<M>>;
  close(): Promise<void>;
}

export class McpClient {
  private readonly lanes = new Map<string, Promise<Lane>>();
  private readonly rpcs = new Set<LocalClient>();
  /** Every Session this client started, oldest first: its resources. */
  readonly sessions: { id: string; deviceId: string }[] = [];
  private ended = false;

  constructor(
    private readonly deps: LaneDeps,
    readonly clientName: () => string,
  ) {}

  /** A connection without a device, for listings; closed after `work`. */
  async plain<T>(work: (rpc: LocalClient) => Promise<T>): Promise<T> {
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
    if (clean)
      for (const l of lanes)
        if (l.status === "fulfilled") await l.value.call("session.end", { outcome: "completed" }).catch(() => {});
    await Promise.all([...this.rpcs].map((rpc) => rpc.close()));
    this.rpcs.clear();
    this.lanes.clear();
  }

  private async connect(): Promise<LocalClient> {
    if (this.ended)
      throw new RemoteError("mcp", errorObject("session_ended", { message: "the MCP session has ended", details: {} }));
    const rpc = this.deps.connect({ transport: "mcp" });
    this.rpcs.add(rpc);
    try {
      await hello(rpc, { name: this.clientName(), version: this.deps.serverVersion }, "mcp");
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
      await rpc.call("device.select", { deviceId });
      // The lease policy every surface shares (client/device-session.ts): the previous holder may be
      // a process the host just replaced, whose lease is being freed.
      const { id: sessionId } = await startSession(rpc);
      const actions = await rpc.call("device.capabilities");
      this.sessions.push({ id: sessionId, deviceId });
      const close = async () => {
        await rpc.close();
        this.rpcs.delete(rpc);
      };
      const call = <M extends MethodName>(method: M, params?: InputOf<M>, signal?: AbortSignal) =>
        (rpc.call as (m: M, p?: InputOf<M>, o?: CallOptions) => Promise<OutputOf<M>>)(method, params, { signal });
      return { deviceId, sessionId, actions, has: (name) => actions.some((a) => a.name === name), call, close };
    } catch (err) {
      await rpc.close();
      this.rpcs.delete(rpc);
      throw err;
    }
  }
}
