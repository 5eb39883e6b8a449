import type { ActionDefinition } from "../../protocol/types/action.ts";
import type { Connection } from "../../rpc/connection.ts";
import { isSemanticName } from "./semantic/definitions.ts";

/**
 * The actions a connection may see and name: protected ones only once it negotiated
 * action.protected.v1, semantic ones only with device.semanticActions.v1
 * (docs/protocol/devices-and-actions.md#capabilities).
 */
export const visibleTo = (conn: Connection, defs: readonly ActionDefinition[]): ActionDefinition[] =>
  defs.filter(
    (d) =>
      (d.protection !== "protected" || conn.has("action.protected.v1")) &&
      (!isSemanticName(d.name) || conn.has("device.semanticActions.v1")),
  );
