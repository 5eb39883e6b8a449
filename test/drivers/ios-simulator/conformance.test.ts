import { join } from "node:path";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { driverConformance } from "../../driver/conformance.ts";
import { startFakeSimulators } from "../../support/ios-sim/fake-simulators.ts";

/** A driver on the fake xcrun and AXe, with one booted simulator. */
async function build(hanging: boolean) {
  const sims = await startFakeSimulators();
  const udid = sims.state().devices.find((d) => d.state === "Booted")?.udid as string;
  // Screenshots (xcrun) and input (axe) never finish until the driver kills them.
  if (hanging) {
    sims.setFault({ tool: "axe", mode: "hang" });
    sims.setFault({ tool: "xcrun", command: "io", mode: "hang" });
  }
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: join(sims.binDir, "axe"),
    pollMs: 200,
    log: silentLogger,
  });
  return { driver, deviceId: `ios-simulator:${udid}`, cleanup: async () => void (await sims[Symbol.asyncDispose]()) };
}

driverConformance("ios-simulator", {
  create: () => build(false),
  createHanging: () => build(true),
  sample: { name: "tap", arguments: { x: 100, y: 100 }, invalidArguments: { x: -1, y: 0 } },
  discoveryMs: 10_000,
});
