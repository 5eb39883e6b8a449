import { afterAll, beforeAll } from "bun:test";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { driverConformance } from "../../driver/conformance.ts";
import {
  ADB_PATH,
  type AdbServer,
  demoScenario,
  describeWithAdb,
  startAdbServer,
  startFakeDevice,
} from "../../support/adb-device/index.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A driver on the private adb server with one simulated phone attached to it. */
async function build(hanging: boolean) {
  const device = await startFakeDevice(server, { scenario: demoScenario });
  if (hanging) {
    device.phone.faults.screencapHang = true;
    // Connect's probe is one `input` (it must finish); the actions after it hang.
    void device.phone.waitForCommand("input", "end").then(() => device.phone.faults.slow.set("input", 3_600_000));
  }
  const driver = new AndroidDriver({ adbPath: ADB_PATH, serverPort: server.port, log: silentLogger });
  return { driver, deviceId: `android-adb:${device.serial}`, cleanup: () => device.unplug() };
}

describeWithAdb("android over the real adb server", () => {
  driverConformance("android", {
    create: () => build(false),
    createHanging: () => build(true),
    sample: { name: "tap", arguments: { x: 540, y: 300 }, invalidArguments: { x: -1, y: 0 } },
    discoveryMs: 10_000,
  });
});
