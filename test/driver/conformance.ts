/**
 * The driver conformance suite: what every Driver must do over its real port, whatever the
 * platform behind it. A driver's test file calls `driverConformance` with a way to build the
 * driver against its real backend (the Mock itself; adb with a simulated device; fake xcrun).
 */
import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import * as v from "valibot";
import { buildUiSnapshot } from "../../src/core/sessions/ui-snapshot.ts";
import type { CallContext, DeviceChange, Driver } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { DeviceInfoSchema, ViewportSchema } from "../../src/protocol/types/device.ts";
import { SEMANTIC_ACTION_NAMES } from "../../src/protocol/types/ui.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";
import { coreHarness } from "../support/core-harness.ts";
import { ALL_FEATURES } from "../support/hello.ts";

export interface Built {
  driver: Driver;
  /** A device the driver reports once started. */
  deviceId: string;
  cleanup?: () => Promise<void>;
}

export interface ConformanceTarget {
  /** A fresh driver against its real backend; not started. */
  create(): Promise<Built>;
  /** The same driver with a fault that makes observe and execute hang until aborted, if it has one. */
  createHanging?(): Promise<Built>;
  /** An action that succeeds on a freshly connected device, and arguments its schema refuses. */
  sample: { name: string; arguments: unknown; invalidArguments: unknown };
  /** How long discovery may take to report the device. */
  discoveryMs?: number;
}

const ctx = (signal: AbortSignal = new AbortController().signal, deadline: number | null = null): CallContext => ({
  signal,
  deadline,
  log: silentLogger,
});

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const pngSize = (b: Uint8Array) => {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
};

/** The DriverError a promise rejects with (fails the test when it resolves or throws anything else). */
async function driverError(p: Promise<unknown>): Promise<{ code: string; data: unknown }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DriverError);
    const e = err as DriverError;
    return { code: e.driverCode, data: e.error.data };
  }
  throw new Error("expected the call to fail with a DriverError");
}

/** Starts the driver and resolves once it reported `deviceId` present. */
async function started(b: Built, discoveryMs: number): Promise<DeviceChange[]> {
  const changes: DeviceChange[] = [];
  const seen = Promise.withResolvers<void>();
  const timer = setTimeout(
    () => seen.reject(new Error(`${b.deviceId} not reported within ${discoveryMs} ms`)),
    discoveryMs,
  );
  await b.driver.start((c) => {
    changes.push(c);
    if (c.type === "present" && c.device.id === b.deviceId) seen.resolve();
  }, ctx());
  await seen.promise.finally(() => clearTimeout(timer));
  return changes;
}

export function driverConformance(name: string, target: ConformanceTarget): void {
  const discoveryMs = target.discoveryMs ?? 5_000;
  /** A started, connected driver for one test; stopped and cleaned afterwards. */
  const withDevice = async (run: (b: Built) => Promise<void>, make = target.create) => {
    const b = await make();
    try {
      await started(b, discoveryMs);
      await b.driver.connect(b.deviceId, ctx());
      await run(b);
    } finally {
      await b.driver.stop();
      await b.cleanup?.();
    }
  };

  describe(`driver conformance: ${name}`, () => {
    test("start reports the device with a valid DeviceInfo and stop is idempotent", async () => {
      const b = await target.create();
      try {
        const changes = await started(b, discoveryMs);
        const present = changes.find((c) => c.type === "present" && c.device.id === b.deviceId);
        expect(present && v.safeParse(DeviceInfoSchema, (present as { device: unknown }).device).success).toBe(true);
      } finally {
        await b.driver.stop();
        await b.driver.stop();
        await b.cleanup?.();
      }
    });

    test("connect and disconnect are idempotent and health passes when the device is present", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        const again = await driver.connect(deviceId, ctx());
        expect([again.id, again.connected, v.safeParse(DeviceInfoSchema, again).success]).toEqual([
          deviceId,
          true,
          true,
        ]);
        await driver.health(deviceId, ctx());
        await driver.disconnect(deviceId, ctx());
        await driver.disconnect(deviceId, ctx());
        await driver.health(deviceId, ctx());
      });
    });

    test("observe and execute fail with device_not_connected when the device is disconnected", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        await driver.disconnect(deviceId, ctx());
        const expected = {
          code: "device_not_connected",
          data: expect.objectContaining({ code: "device_not_connected", details: { deviceId } }),
        };
        expect(await driverError(driver.observe(deviceId, { screenshot: true, uiTree: false }, ctx()))).toEqual(
          expected,
        );
        expect(await driverError(driver.execute(deviceId, target.sample, ctx()))).toEqual(expected);
      });
    });

    test("the action space has unique names, object-rooted 2020-12 schemas and protections its classifier agrees with", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        const defs = await driver.actions(deviceId, ctx());
        const ajv = new Ajv2020({ strict: false });
        const problems = defs.flatMap((d) => {
          const out: string[] = [];
          const bytes = new TextEncoder().encode(d.name).length;
          if (bytes < 1 || bytes > 128) out.push(`${d.name}: name is ${bytes} bytes`);
          if ((SEMANTIC_ACTION_NAMES as readonly string[]).includes(d.name))
            out.push(`${d.name}: semantic actions are core's to add`);
          if (typeof d.description !== "string" || d.description.length === 0) out.push(`${d.name}: no description`);
          const schema = d.inputSchema as { type?: unknown };
          if (schema?.type !== "object") out.push(`${d.name}: schema root is not an object`);
          try {
            ajv.compile(d.inputSchema as object);
          } catch (err) {
            out.push(`${d.name}: schema does not compile: ${(err as Error).message}`);
          }
          if ((d.protection ?? "standard") !== driver.classify(deviceId, d.name))
            out.push(`${d.name}: classifier disagrees`);
          return out;
        });
        expect(problems).toEqual([]);
        expect(new Set(defs.map((d) => d.name)).size).toBe(defs.length);
        expect(defs.map((d) => d.name)).toContain(target.sample.name);
        expect(driver.classify(deviceId, "no-such-action-anywhere")).toBeUndefined();
        if (driver.elements) expect(driver.uiTrees).toBe(true);
      });
    });

    test("observe returns a PNG matching its viewport, and a valid UI tree only when asked", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        const full = await driver.observe(deviceId, { screenshot: true, uiTree: driver.uiTrees }, ctx());
        expect(v.safeParse(ViewportSchema, full.viewport).success).toBe(true);
        const shot = full.screenshot as Uint8Array;
        expect([...shot.subarray(0, 8)]).toEqual(PNG);
        expect(pngSize(shot)).toEqual({ width: full.viewport.width, height: full.viewport.height });
        if (driver.uiTrees) {
          expect(full.uiTree).toBeTruthy();
          const tree = full.uiTree as NonNullable<typeof full.uiTree>;
          expect(buildUiSnapshot(crypto.randomUUID(), tree).problem).toBeNull();
        }
        const bare = await driver.observe(deviceId, { screenshot: false, uiTree: false }, ctx());
        expect([bare.screenshot, bare.uiTree ?? null]).toEqual([null, null]);
      });
    });

    test("unknown actions and refused arguments are typed errors naming the action, and what to fix for arguments", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        expect(
          await driverError(driver.execute(deviceId, { name: "no-such-action-anywhere", arguments: {} }, ctx())),
        ).toEqual({
          code: "unknown_action",
          data: expect.objectContaining({ details: { action: "no-such-action-anywhere" } }),
        });
        const refused = { pointer: expect.any(String), expected: expect.any(String), received: expect.any(String) };
        expect(
          await driverError(
            driver.execute(deviceId, { name: target.sample.name, arguments: target.sample.invalidArguments }, ctx()),
          ),
        ).toEqual({
          code: "invalid_arguments",
          data: expect.objectContaining({
            details: { action: target.sample.name, ...refused, issues: expect.arrayContaining([refused]) },
          }),
        });
        await driver.execute(deviceId, target.sample, ctx());
      });
    });

    test("a call whose signal is already aborted fails with driver_cancelled", async () => {
      await withDevice(async ({ driver, deviceId }) => {
        const aborted = AbortSignal.abort("test");
        expect(
          (await driverError(driver.observe(deviceId, { screenshot: true, uiTree: false }, ctx(aborted)))).code,
        ).toBe("driver_cancelled");
        expect((await driverError(driver.execute(deviceId, target.sample, ctx(aborted)))).code).toBe(
          "driver_cancelled",
        );
      });
    });

    if (target.createHanging)
      test("a hung observe or execute ends with driver_cancelled once its signal aborts", async () => {
        await withDevice(async ({ driver, deviceId }) => {
          for (const call of [
            (c: CallContext) => driver.observe(deviceId, { screenshot: true, uiTree: false }, c),
            (c: CallContext) => driver.execute(deviceId, target.sample, c),
          ]) {
            const ac = new AbortController();
            const pending = driverError(call(ctx(ac.signal)));
            ac.abort("test");
            expect((await pending).code).toBe("driver_cancelled");
          }
        }, target.createHanging);
      });

    test("core writes exactly one actionStarted and one terminal actionCompleted per action", async () => {
      const b = await target.create();
      const h = await coreHarness({ driver: b.driver });
      try {
        const c = await h.connect(ALL_FEATURES);
        await c.ask("device.select", { deviceId: b.deviceId });
        await c.ask("device.connect");
        const sessionId = (await c.ask("session.start")).result.id as string;
        const calls = [
          { name: target.sample.name, arguments: target.sample.arguments },
          { name: target.sample.name, arguments: target.sample.invalidArguments },
          { name: "no-such-action-anywhere", arguments: {} },
          ...(b.driver.elements
            ? [
                {
                  name: "waitForElement",
                  arguments: { selector: { identifier: "no-such-element" }, condition: "absent" },
                },
              ]
            : []),
        ];
        const outcomes: ("succeeded" | "failed")[] = [];
        for (const call of calls) {
          const r = await c.ask("device.execute", { id: crypto.randomUUID(), ...call }, { timeoutMs: 20_000 });
          outcomes.push(r.result ? "succeeded" : "failed");
        }
        const events = h.core.log.read(sessionId, 0);
        const started = events
          .filter((e) => e.payload.type === "actionStarted")
          .map((e) => (e.payload as { call: { id: string } }).call.id);
        const completed = events.flatMap((e) =>
          e.payload.type === "actionCompleted" ? [{ id: e.payload.callId, outcome: e.payload.outcome.outcome }] : [],
        );
        expect(completed.map((x) => x.id)).toEqual(started);
        expect(completed.map((x) => x.outcome as string)).toEqual(outcomes);
        expect(outcomes.slice(0, 3)).toEqual(["succeeded", "failed", "failed"]);
        await c.close();
      } finally {
        await b.driver.stop();
        h.cleanup();
        await b.cleanup?.();
      }
    });
  });
}
