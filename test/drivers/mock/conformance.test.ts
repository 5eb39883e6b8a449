import { MockDriver } from "../../../drivers/mock/index.ts";
import { driverConformance } from "../../driver/conformance.ts";

driverConformance("mock", {
  create: async () => ({ driver: new MockDriver(), deviceId: "mock-1" }),
  createHanging: async () => ({ driver: new MockDriver({ hang: "all" }), deviceId: "mock-1" }),
  sample: { name: "tap", arguments: { x: 10, y: 10 }, invalidArguments: { x: -1, y: 0 } },
});
