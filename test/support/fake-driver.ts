import {
  type CallContext,
  type DeviceChange,
  type Driver,
  type ObserveOptions,
  type Protection,
  type RawObservation,
  abortable,
} from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { ActionDefinition } from "../../src/protocol/types/action.ts";
import type { DeviceInfo } from "../../src/protocol/types/device.ts";
import type { UiNode } from "../../src/protocol/types/ui.ts";
import { MOCK_PNG } from "../../drivers/mock/index.ts";

/** Resolves when the call's signal aborts, then throws as a driver would. */
const hangUntilAborted = (ctx: CallContext): Promise<never> => abortable(new Promise<never>(() => {}), ctx);

const node = (id: string, parent: string | null, text: string | null, y: number): UiNode => ({
  stableNodeId: id,
  parentStableNodeId: parent,
  role: parent ? "button" : "window",
  name: text,
  value: null,
  identifier: `fake:${id}`,
  text,
  bounds: { x: 0, y, width: 100, height: 40 },
  enabled: true,
  hittable: true,
});

/**
 * The lifecycle of a test driver with one device, `info`: listed when started, `connected`
 * switched by connect and disconnect, always healthy.
 */
export abstract class OneDeviceDriver {
  abstract info: DeviceInfo;

  async start(onChange: (c: DeviceChange) => void): Promise<void> {
    onChange({ type: "present", device: { ...this.info } });
  }
  async stop(): Promise<void> {}
  async connect(): Promise<DeviceInfo> {
    this.info.connected = true;
    return { ...this.info };
  }
  async disconnect(): Promise<void> {
    this.info.connected = false;
  }
  async health(): Promise<void> {}
}

/**
 * A scriptable driver for core tests: a device `fake-1` with a two-node UI tree, and switches to
 * make the next observation or action hang until aborted, or fail.
 */
export class FakeDriver extends OneDeviceDriver implements Driver {
  readonly name = "fake";
  readonly uiTrees = true;
  hangObserve = false;
  hangExecute = false;
  info: DeviceInfo = {
    id: "fake-1",
    name: "Fake Device",
    platform: { kind: "other", value: "fake" },
    osVersion: "1",
    connected: false,
  };
  observeCalls: ObserveOptions[] = [];
  async actions(): Promise<ActionDefinition[]> {
    return [{ name: "tap", description: "tap", inputSchema: { type: "object" }, protection: "standard" }];
  }
  classify(_d: string, name: string): Protection | undefined {
    return name === "tap" ? "standard" : undefined;
  }
  async observe(_d: string, opts: ObserveOptions, ctx: CallContext): Promise<RawObservation> {
    this.observeCalls.push(opts);
    if (this.hangObserve) await hangUntilAborted(ctx);
    return {
      viewport: { width: 100, height: 200, scaleFactor: 2 },
      screenshot: opts.screenshot ? MOCK_PNG : null,
      uiTree: opts.uiTree
        ? {
            context: { contextKind: "native", contextId: "fake-app", documentEpoch: "1" },
            nodes: [node("root", null, null, 0), node("ok", "root", "OK", 50)],
          }
        : null,
      metadata: {},
    };
  }
  async execute(
    _d: string,
    call: { name: string; arguments: unknown },
    ctx: CallContext,
  ): Promise<{ output: unknown }> {
    if (call.name !== "tap") throw new DriverError("unknown_action", { action: call.name });
    if (this.hangExecute) await hangUntilAborted(ctx);
    return { output: { accepted: true } };
  }
}
