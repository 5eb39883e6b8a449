import { describe, expect, test } from "bun:test";
import { FrameWriter } from "../../src/transports/frame-writer.ts";
import { BYTES, Outbox, socketSink } from "../../src/transports/outbox.ts";

/** A socket taking `room` bytes (Infinity by default), -1 once closed; remembers each write. */
function socket() {
  const s = {
    writes: [] as string[],
    room: Number.POSITIVE_INFINITY,
    closed: false,
    write(data: string | Uint8Array): number {
      if (s.closed) return -1;
      const text = typeof data === "string" ? data : Buffer.from(data).toString();
      const n = Math.min(Buffer.byteLength(text), s.room);
      s.writes.push(text.slice(0, n));
      s.room -= n;
      return n;
    },
  };
  return s;
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

describe("FrameWriter", () => {
  test("batches the frames of one turn into a single write, each ending in a newline", async () => {
    const s = socket();
    const w = new FrameWriter(new Outbox(socketSink(s), BYTES));
    expect([w.write("a"), w.write("b"), w.write("c")]).toEqual([undefined, undefined, undefined]);
    expect(s.writes).toEqual([]);
    await nextTurn();
    expect(s.writes).toEqual(["a\nb\nc\n"]);
  });

  test("writes at once past 64 KiB of batched frames", () => {
    const s = socket();
    const w = new FrameWriter(new Outbox(socketSink(s), BYTES));
    const big = "x".repeat(64 * 1024);
    w.write(big);
    expect(s.writes).toEqual([`${big}\n`]);
  });

  test("returns a promise while output is queued, settled once the socket drained", async () => {
    const s = socket();
    s.room = 3;
    const out = new Outbox(socketSink(s), BYTES);
    const w = new FrameWriter(out);
    w.write("abcdef");
    await nextTurn();
    const pending = w.write("g");
    expect(pending).toBeInstanceOf(Promise);
    let drained = false;
    void pending?.then(() => (drained = true));
    await nextTurn();
    s.room = 100;
    out.writable();
    await pending;
    expect([drained, s.writes.join("")]).toEqual([true, "abcdef\ng\n"]);
  });

  test("drain writes what is batched and resolves once it is out", async () => {
    const s = socket();
    const w = new FrameWriter(new Outbox(socketSink(s), BYTES));
    w.write("last");
    await w.drain();
    expect(s.writes).toEqual(["last\n"]);
  });

  test("a failed socket breaks the writer once, drops later frames and tells the owner", async () => {
    const s = socket();
    const broken: string[] = [];
    const w = new FrameWriter(new Outbox(socketSink(s), BYTES), (e) => broken.push(e.message));
    s.closed = true;
    w.write("lost");
    await nextTurn();
    await Promise.resolve();
    expect([broken, w.broken?.message]).toEqual([["socket closed"], "socket closed"]);
    expect(w.write("also lost")).toBeUndefined();
    await w.drain();
    expect(s.writes).toEqual([]);
  });
});
