import { afterAll, beforeAll } from "bun:test";
import { join } from "node:path";
import { IOS_ACTIONS } from "../../../drivers/ios-simulator/actions.ts";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { schemaParity } from "../../driver/schema-parity.ts";
import { type FakeSimulators, startFakeSimulators } from "../../support/ios-sim/fake-simulators.ts";

const ctx = (): CallContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 20_000,
  log: silentLogger,
});

let sims: FakeSimulators;
beforeAll(async () => {
  sims = await startFakeSimulators({ wda: true });
});
afterAll(async () => {
  await sims?.[Symbol.asyncDispose]();
});

/** What a driver connected to the booted simulator over one backend advertises. */
async function advertised(backend: "axe" | "wda" | "none") {
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: backend === "axe" ? join(sims.binDir, "axe") : "/nonexistent/axe",
    wdaEndpoint: backend === "wda" ? sims.wda?.url : null,
    log: silentLogger,
  });
  try {
    await driver.start(() => {}, ctx());
    const id = `ios-simulator:${sims.device().udid}`;
    await driver.connect(id, ctx());
    return await driver.actions(id);
  } finally {
    await driver.stop();
  }
}

schemaParity("ios-simulator with AXe", { advertised: () => advertised("axe"), space: IOS_ACTIONS.axe });
schemaParity("ios-simulator with WebDriverAgent", { advertised: () => advertised("wda"), space: IOS_ACTIONS.wda });
schemaParity("ios-simulator screenshot-only", { advertised: () => advertised("none"), space: IOS_ACTIONS.none });
