import { methodUnavailable } from "../../rpc/rpc-error.ts";
import type { Handlers } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";

export function controlHandlers(_core: Core): Pick<Handlers, "request.cancel" | "events.stream.open"> {
  return {
    "request.cancel": ({ requestId }, ctx) => ({ requestId, status: ctx.cancel(requestId) }),
    // Reached only if the feature was negotiated while the listener later went away (03 §4.2).
    "events.stream.open": () => {
      throw methodUnavailable("events.stream.open", "events.stream.v1");
    },
  };
}
