import { describe, expect, test } from "bun:test";
import { MOCK_PNG } from "../../../drivers/mock/index.ts";
import type { Core } from "../../../src/core/core.ts";
import { recordObservation } from "../../../src/core/devices/observe.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import type { UiNode } from "../../../src/protocol/types/ui.ts";
import type { Logger } from "../../../src/protocol/rpc-error.ts";

const node = (stableNodeId: string, parentStableNodeId: string | null): UiNode => ({
  stableNodeId,
  parentStableNodeId,
  role: "View",
  name: null,
  value: null,
  identifier: null,
  text: null,
  bounds: null,
  enabled: null,
  hittable: null,
});

function recordingLog() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const log: Logger = {
    debug: (obj, msg) => void lines.push({ level: "debug", obj, msg }),
    info: (obj, msg) => void lines.push({ level: "info", obj, msg }),
    warn: (obj, msg) => void lines.push({ level: "warn", obj, msg }),
    error: (obj, msg) => void lines.push({ level: "error", obj, msg }),
    child: () => log,
  };
  return { log, lines };
}

describe("recordObservation", () => {
  test("logs the problem and names it in the error message when the driver's tree breaks the snapshot rules", async () => {
    const { log, lines } = recordingLog();
    const raw = {
      viewport: { width: 10, height: 10, scaleFactor: 1 },
      screenshot: MOCK_PNG,
      uiTree: {
        context: { contextKind: "native" as const, contextId: "app", documentEpoch: "1" },
        nodes: [node("a", null), node("a", null)],
      },
      metadata: {},
    };
    // The tree is refused before anything is stored: the Core is never reached.
    const failed = await recordObservation({} as Core, "dev-1", {
      raw,
      omission: null,
      treeAllowed: true,
      clipped: 0,
      log,
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(DriverError);
    expect([(failed as DriverError).code, (failed as DriverError).message]).toEqual([
      "protocol_error",
      "driver protocol error: the device's UI tree is invalid (duplicate stableNodeId a)",
    ]);
    expect(lines).toEqual([
      {
        level: "warn",
        obj: { deviceId: "dev-1", problem: "duplicate stableNodeId a" },
        msg: "the driver's UI tree breaks the snapshot rules",
      },
    ]);
  });
});
