import { describe, expect, test } from "bun:test";
import { type CallContext, abortable, allEnded, whenAborted } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";

const ctx = (signal: AbortSignal = new AbortController().signal): CallContext => ({
  signal,
  deadline: null,
  log: silentLogger,
});

/** A part that runs until its signal aborts, then records that and fails as a driver does. */
function untilAborted(ended: string[], name: string) {
  return (c: CallContext) =>
    new Promise<never>((_, reject) => {
      c.signal.addEventListener(
        "abort",
        () => {
          ended.push(name);
          reject(new DriverError("driver_cancelled"));
        },
        { once: true },
      );
    });
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof DriverError
      ? err.driverCode === "platform_error"
        ? (err.error.data.details as { platformCode: string }).platformCode
        : err.driverCode
      : String(err);
  }
  return "no error";
}

describe("allEnded", () => {
  test("resolves with every part's value in argument order when all succeed", async () => {
    const slow = Promise.withResolvers<string>();
    const pending = allEnded(
      ctx(),
      () => slow.promise,
      async () => 2,
      async () => null,
    );
    slow.resolve("one");
    expect(await pending).toEqual(["one", 2, null]);
  });

  test("aborts the other parts and rejects with the first failure in time when one part fails", async () => {
    const ended: string[] = [];
    const fail = Promise.withResolvers<never>();
    // The failing part comes second: the answer is its error, not the first part's cancellation.
    const pending = failure(
      allEnded(ctx(), untilAborted(ended, "screenshot"), () => fail.promise, untilAborted(ended, "focus")),
    );
    fail.reject(new DriverError("platform_error", { platformCode: "tree_broke" }));
    expect([await pending, ended]).toEqual(["tree_broke", ["screenshot", "focus"]]);
  });

  test("settles only after every part has ended when a part fails", async () => {
    const lingering = Promise.withResolvers<void>();
    const order: string[] = [];
    const pending = allEnded(
      ctx(),
      async () => {
        throw new DriverError("driver_timed_out");
      },
      // Ignores the abort for a while, like a stream that takes a moment to close.
      async () => {
        await lingering.promise;
        order.push("part ended");
      },
    ).catch((err: DriverError) => order.push(`settled: ${err.driverCode}`));
    await Promise.resolve();
    expect(order).toEqual([]);
    lingering.resolve();
    await pending;
    expect(order).toEqual(["part ended", "settled: driver_timed_out"]);
  });

  test("passes the call's abort to every part and removes its listener when it settles", async () => {
    const ac = new AbortController();
    const ended: string[] = [];
    const pending = failure(allEnded(ctx(ac.signal), untilAborted(ended, "a"), untilAborted(ended, "b")));
    ac.abort("test");
    expect([await pending, ended]).toEqual(["driver_cancelled", ["a", "b"]]);
    const seen: string[] = [];
    const done = new AbortController();
    await allEnded(
      ctx(done.signal),
      async (c) => void c.signal.addEventListener("abort", () => seen.push("inner aborted")),
    );
    done.abort("later");
    expect(seen).toEqual([]);
  });
});

describe("abortable", () => {
  test("settles as the work does when nothing aborts", async () => {
    expect(await abortable(Promise.resolve(7), ctx())).toBe(7);
    expect(await failure(abortable(Promise.reject(new DriverError("driver_timed_out")), ctx()))).toBe(
      "driver_timed_out",
    );
  });

  test("rejects with driver_cancelled at once when the signal aborts before the work ends", async () => {
    const ac = new AbortController();
    const work = Promise.withResolvers<number>();
    const pending = failure(abortable(work.promise, ctx(ac.signal)));
    ac.abort("test");
    expect(await pending).toBe("driver_cancelled");
    // The work ending later is no unhandled rejection.
    work.reject(new Error("late"));
  });

  test("rejects with driver_cancelled when the signal had already aborted", async () => {
    expect(await failure(abortable(new Promise(() => {}), ctx(AbortSignal.abort("test"))))).toBe("driver_cancelled");
  });
});

describe("whenAborted", () => {
  test("runs at once for a signal that has already aborted, once on a later abort, and never after its remover ran", () => {
    const calls: string[] = [];
    const early = new AbortController();
    early.abort();
    whenAborted(early.signal, () => calls.push("early"));
    expect(calls).toEqual(["early"]);

    const later = new AbortController();
    whenAborted(later.signal, () => calls.push("later"));
    const removed = whenAborted(later.signal, () => calls.push("removed"));
    removed();
    expect(calls).toEqual(["early"]);
    later.abort();
    later.abort();
    expect(calls).toEqual(["early", "later"]);
  });
});
