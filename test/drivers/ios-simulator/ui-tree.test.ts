import { describe, expect, test } from "bun:test";
import type { Hid } from "../../../drivers/ios-simulator/backends.ts";
import { AxReadiness } from "../../../drivers/ios-simulator/readiness.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";

/** What describe-ui prints right after a boot: the application root, without size or children. */
const EMPTY = JSON.stringify([
  { type: "Application", AXLabel: null, frame: { x: 0, y: 0, width: 0, height: 0 }, children: [] },
]);
const FULL = JSON.stringify([
  {
    type: "Application",
    AXLabel: "Demo",
    frame: { x: 0, y: 0, width: 402, height: 874 },
    children: [{ type: "Button", AXLabel: "OK", frame: { x: 1, y: 2, width: 3, height: 4 } }],
  },
]);

/** A backend whose tree answers from `trees` in turn (the last one repeating), ignoring any signal. */
function fakeHid(trees: string[], onRead: (n: number) => void = () => {}): Hid & { reads: number } {
  const unused = async () => {
    throw new Error("not used");
  };
  const hid = {
    reads: 0,
    tree: async () => {
      const n = ++hid.reads;
      onRead(n);
      return trees[Math.min(n, trees.length) - 1] as string;
    },
    tap: unused,
    doubleTap: unused,
    longPress: unused,
    swipe: unused,
    home: unused,
  };
  return hid;
}

const ctx = (signal = new AbortController().signal): CallContext => ({
  signal,
  deadline: Date.now() + 20_000,
  log: silentLogger,
});

// The driver waits for a just-booted simulator's tree through AxReadiness (readiness.ts).
describe("AxReadiness.settle on a just-booted simulator", () => {
  test("returns the first tree that is not the bare root when the simulator has just booted", async () => {
    const hid = fakeHid([EMPTY, EMPTY, FULL]);
    expect([(await new AxReadiness(20_000).settle(hid, ctx())).json, hid.reads]).toEqual([FULL, 3]);
  });

  test("stops polling with driver_cancelled when the call aborts while it waits for the next poll", async () => {
    const ac = new AbortController();
    // Aborted just after the first (empty) read: the wait that follows must end at once.
    const hid = fakeHid([EMPTY], () => queueMicrotask(() => ac.abort("test")));
    let code = "no error";
    try {
      await new AxReadiness(20_000).settle(hid, ctx(ac.signal));
    } catch (err) {
      code = err instanceof DriverError ? err.driverCode : String(err);
    }
    expect([code, hid.reads]).toEqual(["driver_cancelled", 1]);
  });
});
