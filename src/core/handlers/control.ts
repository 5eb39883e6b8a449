import { methodUnavailable } from "../../protocol/rpc-error.ts";
import type { Handlers } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";

export function controlHandlers(core: Core): Pick<Handlers, "request.cancel" | "events.stream.open"> {
  return {
    "request.cancel": ({ requestId }, ctx) => ({ requestId, status: ctx.cancel(requestId) }),
    "events.stream.open": ({ sessionId, originPolicy }) => {
      // Reached without a plane only if the feature was negotiated while the listener went away (docs/protocol/handshake.md#feature-availability).
      const plane = core.eventPlane;
      if (!plane) throw methodUnavailable("events.stream.open", "events.stream.v1");
      const { token, expiresAtMs } = plane.streams.open(sessionId, originPolicy);
      return { endpoint: plane.endpoint(token), streamEpoch: plane.streams.epoch, expiresAtMs };
    },
  };
}
