import type { Connection } from "../../rpc/connection.ts";
import { deepFreeze, type Handlers } from "../../rpc/dispatcher.ts";
import type { SystemDescribeResult } from "../../protocol/types/handshake.ts";
import type { Core } from "../core.ts";

export function systemHandlers(_core: Core): Pick<Handlers, "system.describe"> {
  // One frozen result per connection until its selection or Session changes: describe is polled
  // by agents, and an unchanged frozen result is validated and encoded only once (dispatcher memo).
  const cache = new WeakMap<Connection, SystemDescribeResult>();
  return {
    "system.describe": (_params, { conn }) => {
      const cached = cache.get(conn);
      if (cached && cached.deviceId === conn.selectedDeviceId && cached.activeSessionId === conn.activeSessionId) return cached;
      const result = deepFreeze({
        // hello is set once the connection is Ready, which the dispatcher checked.
        connection: conn.hello as NonNullable<typeof conn.hello>,
        client: conn.client as NonNullable<typeof conn.client>,
        deviceId: conn.selectedDeviceId,
        activeSessionId: conn.activeSessionId,
      });
      cache.set(conn, result);
      return result;
    },
  };
}
