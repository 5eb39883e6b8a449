import { describe, expect, test } from "bun:test";
import { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";

/** A real signal whose abort listeners are counted, to see that a wait leaves none behind. */
function countedSignal() {
  const ac = new AbortController();
  const listeners = new Set<unknown>();
  const add = ac.signal.addEventListener.bind(ac.signal);
  const remove = ac.signal.removeEventListener.bind(ac.signal);
  ac.signal.addEventListener = ((...[type, fn, opts]: Parameters<typeof add>) => {
    if (type === "abort") listeners.add(fn);
    add(type, fn, opts);
    // A once-listener is dropped by the signal itself when it fires.
    if (type === "abort" && typeof opts === "object" && opts.once)
      add("abort", () => listeners.delete(fn), { once: true });
  }) as typeof add;
  ac.signal.removeEventListener = ((...[type, fn]: Parameters<typeof remove>) => {
    if (type === "abort") listeners.delete(fn);
    remove(type, fn);
  }) as typeof remove;
  return { ac, listeners };
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof DriverError ? err.driverCode : String(err);
  }
  return "no error";
}

describe("pause", () => {
  test("resolves after the time and removes its abort listener when nothing aborts", async () => {
    const { ac, listeners } = countedSignal();
    const started = performance.now();
    await pause(20, ac);
    expect([performance.now() - started >= 15, listeners.size]).toEqual([true, 0]);
  });

  test("rejects with driver_cancelled at once when the signal aborts during the wait", async () => {
    const { ac, listeners } = countedSignal();
    const waiting = failure(pause(3_600_000, ac));
    expect(listeners.size).toBe(1);
    ac.abort("test");
    expect([await waiting, listeners.size]).toEqual(["driver_cancelled", 0]);
  });

  test("rejects with driver_cancelled without waiting or listening when the signal has already aborted", async () => {
    const { ac, listeners } = countedSignal();
    ac.abort("test");
    expect([await failure(pause(3_600_000, ac)), listeners.size]).toEqual(["driver_cancelled", 0]);
  });
});
