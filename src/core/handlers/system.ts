import openRpcDocument from "../../protocol/generated/openrpc.json" with { type: "json" };
import { deepFreeze, type Handlers } from "../../rpc/dispatcher.ts";
import { stateOf } from "../connection-state.ts";
import type { Core } from "../core.ts";

// Imported rather than read from disk so the compiled binary carries it. Frozen, so the dispatcher
// validates and encodes it once (its memo of frozen results) however often it is discovered.
const OPENRPC = deepFreeze(openRpcDocument);

export function systemHandlers(_core: Core): Pick<Handlers, "system.describe" | "rpc.discover"> {
  return {
    // One frozen result per connection until its selection or Session changes: describe is polled
    // by agents, and an unchanged frozen result is validated and encoded only once (dispatcher memo).
    "system.describe": (_params, { conn }) => {
      const state = stateOf(conn);
      const cached = state.describe;
      if (cached && cached.deviceId === state.selectedDeviceId && cached.activeSessionId === state.activeSessionId)
        return cached;
      state.describe = deepFreeze({
        // hello is set once the connection is Ready, which the dispatcher checked.
        connection: conn.hello as NonNullable<typeof conn.hello>,
        client: conn.client as NonNullable<typeof conn.client>,
        deviceId: state.selectedDeviceId,
        activeSessionId: state.activeSessionId,
      });
      return state.describe;
    },

    "rpc.discover": () => OPENRPC,
  };
}
