import type { SystemDescribeResult } from "../protocol/types/handshake.ts";
import type { Connection } from "../rpc/connection.ts";
import { MediaTable } from "./media/streams.ts";

/**
 * What core keeps per connection: its device selection, its active Session, its media streams and
 * the last system.describe answer. Keyed by the rpc Connection object, so it dies with it and the
 * rpc layer stays free of core state; the dispatcher reads it only through the ConnectionPolicy.
 */
export class ConnectionState {
  selectedDeviceId: string | null = null;
  activeSessionId: string | null = null;
  /** Every Session this connection started: the ones it may read where privileged calls are refused. */
  readonly startedSessions = new Set<string>();
  readonly media = new MediaTable();
  /** Reused while selection and Session are unchanged: describe is polled, and a frozen result is encoded once. */
  describe: SystemDescribeResult | null = null;
}

const states = new WeakMap<Connection, ConnectionState>();

export function stateOf(conn: Connection): ConnectionState {
  let s = states.get(conn);
  if (!s) {
    s = new ConnectionState();
    states.set(conn, s);
  }
  return s;
}

/** The connection's id once it is Ready (every device method runs after hello). */
export const connectionIdOf = (conn: Connection): string => conn.connectionId as string;

/** The device id on Session-level events: only for connections that negotiated routing. */
export const routedDeviceId = (conn: Connection, deviceId: string | null): { deviceId?: string } =>
  conn.has("device.routing.v1") && deviceId ? { deviceId } : {};
