import type { Handlers } from "../../rpc/dispatcher.ts";
import type { Core } from "../core.ts";
import { controlHandlers } from "./control.ts";
import { deviceHandlers } from "./devices.ts";
import { mediaHandlers } from "./media.ts";
import { sessionHandlers } from "./sessions.ts";
import { systemHandlers } from "./system.ts";
import { uiSnapshotHandlers } from "./ui-snapshot.ts";
import { verdictHandlers } from "./verdict.ts";

/** The complete handler map; its type is derived from METHODS, so a missing method fails typecheck. */
export function createHandlers(core: Core): Handlers {
  return {
    ...systemHandlers(core),
    ...deviceHandlers(core),
    ...sessionHandlers(core),
    ...mediaHandlers(core),
    ...controlHandlers(core),
    ...verdictHandlers(core),
    ...uiSnapshotHandlers(core),
  };
}
