import { describe, expect, test } from "bun:test";
import { MockDriver } from "../../../drivers/mock/index.ts";
import { DeviceService } from "../../../src/core/devices/device-service.ts";
import type { DeviceChange } from "../../../src/driver/driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { FakeDriver } from "../../support/fake-driver.ts";

const ctx = { signal: new AbortController().signal, deadline: null, log: silentLogger };

/** A real-device driver whose device is plugged in and out by the test. */
class PluggableDriver extends FakeDriver {
  private emit: ((c: DeviceChange) => void) | null = null;
  override async start(onChange: (c: DeviceChange) => void): Promise<void> {
    this.emit = onChange;
  }
  plug(): void {
    this.emit?.({ type: "present", device: { ...this.info } });
  }
  unplug(): void {
    this.emit?.({ type: "gone", deviceId: this.info.id });
  }
}

async function service() {
  const devices = new DeviceService(silentLogger);
  const phone = new PluggableDriver();
  await devices.attach(new MockDriver(), ctx, { fallback: true });
  await devices.attach(phone, ctx);
  return { devices, phone, ids: () => devices.registry.deviceIds() };
}

describe("DeviceService fallback devices", () => {
  test("the Mock is listed while no real device is present and hidden while one is", async () => {
    const { devices, phone, ids } = await service();
    expect(ids()).toEqual(["mock-1"]);
    phone.plug();
    expect(ids()).toEqual(["fake-1"]);
    expect(() => devices.driver("mock-1")).toThrow("device is not registered: mock-1");
    phone.unplug();
    expect(ids()).toEqual(["mock-1"]);
    expect(devices.driver("mock-1").name).toBe("mock");
  });

  test("a leased Mock stays until its lease is released when a real device appears", async () => {
    const { devices, phone, ids } = await service();
    devices.acquireLease("mock-1", "conn-a", "session-a");
    phone.plug();
    expect(ids()).toEqual(["fake-1", "mock-1"]);
    devices.releaseLease("mock-1", "conn-a");
    expect(ids()).toEqual(["fake-1"]);
  });

  test("connect state of a hidden Mock is kept for when it is listed again", async () => {
    const { devices, phone, ids } = await service();
    await devices.connect("mock-1", ctx);
    phone.plug();
    phone.unplug();
    expect([ids(), devices.info("mock-1").connected]).toEqual([["mock-1"], true]);
  });
});
