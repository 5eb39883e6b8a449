import { afterEach, describe, expect, test } from "bun:test";
import { MockDriver } from "../../drivers/mock/index.ts";
import { coreHarness } from "../support/core-harness.ts";
import { ALL_FEATURES } from "../support/hello.ts";

const harnesses: { cleanup(): void }[] = [];
afterEach(() => {
  for (const h of harnesses.splice(0)) h.cleanup();
});

async function twoClients() {
  const h = await coreHarness({ driver: new MockDriver() });
  harnesses.push(h);
  return { h, a: await h.connect(ALL_FEATURES), b: await h.connect(ALL_FEATURES) };
}

const inUse = {
  code: -32014,
  message: "device is leased by another owner: mock-1",
  data: {
    code: "device_in_use",
    message: "device is leased by another owner: mock-1",
    retryable: true,
    details: { deviceId: "mock-1" },
  },
};

describe("two in-memory connections sharing one Mock device", () => {
  test("the second connection is refused with device_in_use while the first holds the Session's lease", async () => {
    const { a, b } = await twoClients();
    await a.ask("device.connect");
    const session = (await a.ask("session.start")).result;
    expect(session.state).toBe("active");
    const refused = await b.ask("session.start");
    expect({ ...refused, id: 0 }).toEqual({ jsonrpc: "2.0", id: 0, error: inUse });
    expect((await b.ask("device.connect")).error).toEqual(inUse);
    expect((await b.ask("device.observe")).error.data.code).toBe("session_required");
    expect(
      (await b.ask("device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 1, y: 1 } })).error.data
        .code,
    ).toBe("session_required");
    // Reading is not driving: listing and capabilities stay open to everyone.
    expect((await b.ask("devices.list")).result.devices.map((d: { id: string }) => d.id)).toEqual(["mock-1"]);
    expect((await a.ask("device.observe")).result.deviceId).toBe("mock-1");
  });

  test("exactly one of two simultaneous session.start calls wins the device", async () => {
    const { a, b } = await twoClients();
    await a.ask("device.connect");
    const [ra, rb] = await Promise.all([a.call("session.start").response, b.call("session.start").response]);
    const winners = [ra, rb].filter((r) => r.result);
    const losers = [ra, rb].filter((r) => r.error);
    expect([winners.length, losers.map((r) => r.error)]).toEqual([1, [inUse]]);
  });

  test("the lease passes to the other connection when the holder ends its Session or closes", async () => {
    const { h, a, b } = await twoClients();
    await a.ask("device.connect");
    const first = (await a.ask("session.start")).result.id;
    await a.ask("session.end");
    const second = (await b.ask("session.start")).result.id;
    expect(second).not.toBe(first);
    await b.close();
    // Closing ended b's Session and gave the device back.
    const ended = h.core.log.read(second, 0).at(-1)?.payload;
    expect(ended?.type).toBe("sessionEnded");
    const third = await a.ask("session.start");
    expect(third.result.state).toBe("active");
  });
});
