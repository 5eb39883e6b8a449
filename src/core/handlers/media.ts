import { methodUnavailable, sessionRequired } from "../../rpc/rpc-error.ts";
import type { Handlers } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";

type MediaMethods = "media.stream.start" | "media.stream.capture" | "media.stream.end";

/** Streams belong to a Session; none can exist before device drivers land. */
export function mediaHandlers(core: Core): Pick<Handlers, MediaMethods> {
  return {
    "media.stream.start": () => {
      if (core.screenshotPolicy !== "capture") throw methodUnavailable("media.stream.start", "media.stream.v1");
      throw sessionRequired();
    },
    "media.stream.capture": () => {
      throw sessionRequired();
    },
    "media.stream.end": () => {
      throw sessionRequired();
    },
  };
}
