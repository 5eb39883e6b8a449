import { describe, expect, test } from "bun:test";
import { InputLoop, type InputLoopOptions } from "../../src/transports/input-loop.ts";

/** A loop over strings whose handler records each item and may return a promise to wait on. */
function loop(opts: Partial<InputLoopOptions<string>> & { wait?: (item: string) => Promise<void> | undefined } = {}) {
  const seen: string[] = [];
  const reading: boolean[] = [];
  const events: string[] = [];
  const l = new InputLoop<string>({
    size: (s) => s.length,
    pauseBytes: 4,
    maxBytes: 10,
    setReading: (r) => (reading.push(r), true),
    handle: (item, woken) => {
      seen.push(item);
      const p = opts.wait?.(item);
      return p ? woken(p).then(() => {}) : undefined;
    },
    overflow: (bytes) => events.push(`overflow ${bytes}`),
    failed: (err) => events.push(`failed ${(err as Error).message}`),
    ...opts,
  });
  return { l, seen, reading, events };
}

describe("InputLoop", () => {
  test("handles items in order, each started only after the previous one's promise settled", async () => {
    const gate = Promise.withResolvers<void>();
    const { l, seen } = loop({ wait: (i) => (i === "a" ? gate.promise : undefined) });
    l.push("a");
    l.push("b");
    l.push("c");
    expect(seen).toEqual(["a"]);
    gate.resolve();
    await l.idle();
    expect(seen).toEqual(["a", "b", "c"]);
  });

  test("keeps handling when every handler finishes synchronously", () => {
    const { l, seen } = loop();
    for (const item of ["a", "b", "c"]) l.push(item);
    expect(seen).toEqual(["a", "b", "c"]);
  });

  test("pauses reading at the pause threshold and resumes below half of it", async () => {
    const gate = Promise.withResolvers<void>();
    const { l, reading } = loop({ wait: (i) => (i === "x" ? gate.promise : undefined) });
    l.push("x");
    l.push("ab");
    l.push("cd");
    expect(reading).toEqual([false]);
    gate.resolve();
    await l.idle();
    expect(reading).toEqual([false, true]);
  });

  test("calls overflow and stops when the queue passes its byte limit", async () => {
    const { l, events, seen } = loop({ wait: () => new Promise(() => {}) });
    l.push("first");
    l.push("123456");
    l.push("7890a");
    expect(events).toEqual(["overflow 11"]);
    expect(await l.done).toBe("stopped");
    l.push("late");
    expect(seen).toEqual(["first"]);
  });

  test("stop wakes a handler waiting on a promise that never settles", async () => {
    const { l } = loop({ wait: () => new Promise(() => {}) });
    l.push("a");
    l.stop();
    await l.idle();
    expect(await l.done).toBe("stopped");
  });

  test("end handles the rest, then atEnd, then resolves done with ended", async () => {
    const order: string[] = [];
    const { l } = loop({ handle: (i) => void order.push(i), atEnd: () => void order.push("end") });
    l.push("a");
    l.end();
    l.push("ignored");
    expect(await l.done).toBe("ended");
    expect(order).toEqual(["a", "end"]);
  });

  test("a handler that throws stops the loop and reports the error", async () => {
    const { l, events } = loop({
      handle: () => {
        throw new Error("bug");
      },
    });
    l.push("a");
    expect(await l.done).toBe("stopped");
    expect(events).toEqual(["failed bug"]);
  });
});
