import { describe, expect, test } from "bun:test";
import { BYTES, Outbox, type Offered, messageSink, socketSink, streamSink } from "../../src/transports/outbox.ts";

/** A socket that takes `room` bytes, then none until given more; -1 once closed. */
class FakeSocket {
  written = "";
  room = Number.POSITIVE_INFINITY;
  closed = false;
  write(data: string | Uint8Array): number {
    if (this.closed) return -1;
    const text = typeof data === "string" ? data : new TextDecoder().decode(data);
    const n = Math.min(Buffer.byteLength(text), this.room);
    this.written += Buffer.from(text).subarray(0, n).toString();
    this.room -= n;
    return n;
  }
}

describe("Outbox", () => {
  test("writes straight through when the sink takes everything", () => {
    const s = new FakeSocket();
    const out = new Outbox(socketSink(s), BYTES);
    expect(out.push("abc")).toBe("written");
    expect([s.written, out.empty]).toEqual(["abc", true]);
  });

  test("queues the unwritten tail and later items in order, and writes them when the sink drains", async () => {
    const s = new FakeSocket();
    s.room = 2;
    const changes: boolean[] = [];
    const out = new Outbox(socketSink(s), BYTES, (b) => changes.push(b));
    expect(out.push("abcd")).toBe("queued");
    expect(out.push("ef")).toBe("queued");
    expect([s.written, out.items, out.bytes]).toEqual(["ab", 2, 4]);
    let drained = false;
    const waiting = out.drained().then(() => (drained = true));
    s.room = 3;
    out.writable();
    expect([s.written, out.bytes, drained]).toEqual(["abcde", 1, false]);
    s.room = 10;
    out.writable();
    await waiting;
    expect([s.written, out.empty, drained, changes]).toEqual(["abcdef", true, true, [true, false]]);
  });

  test("answers overflow past its item or byte limit instead of queueing", () => {
    const s = new FakeSocket();
    s.room = 0;
    const out = new Outbox(socketSink(s), { ...BYTES, maxItems: 2, maxBytes: 5 });
    expect([out.push("ab"), out.push("cd"), out.push("e")]).toEqual(["queued", "queued", "overflow"]);
    const bytes = new Outbox(socketSink(s), { ...BYTES, maxBytes: 5 });
    expect([bytes.push("abc"), bytes.push("de"), bytes.push("f")]).toEqual(["queued", "queued", "overflow"]);
  });

  test("a sink that closes fails the outbox once: the queue is dropped, waiters woken and listeners told", async () => {
    const s = new FakeSocket();
    s.room = 1;
    const out = new Outbox(socketSink(s), BYTES);
    out.push("abc");
    const failures: string[] = [];
    out.onFailure((e) => failures.push(e.message));
    const waiting = out.drained();
    s.closed = true;
    out.writable();
    await waiting;
    expect([out.failed?.message, out.empty, failures]).toEqual(["socket closed", true, ["socket closed"]]);
    expect(out.push("x")).toBe("closed");
    const late: string[] = [];
    out.onFailure((e) => late.push(e.message));
    await Promise.resolve();
    expect(late).toEqual(["socket closed"]);
  });

  test("takeAll hands every queued item over in order and leaves the outbox empty", () => {
    const sent: string[] = [];
    const ws = { buffered: 10, getBufferedAmount: () => ws.buffered, send: (m: string) => (sent.push(m), m.length) };
    const out = new Outbox(
      messageSink(ws, 5, (t: string) => t),
      { size: (t: string) => t.length },
    );
    expect([out.push("a"), out.push("b")]).toEqual(["queued", "queued"]);
    const taken: string[] = [];
    out.takeAll((t) => taken.push(t));
    expect([taken, out.empty, sent]).toEqual([["a", "b"], true, []]);
  });
});

describe("messageSink", () => {
  test("sends whole messages while under the window, holds them above it, and fails when the runtime drops one", () => {
    const sent: string[] = [];
    let result = 1;
    const ws = { buffered: 0, getBufferedAmount: () => ws.buffered, send: (m: string) => (sent.push(m), result) };
    const marked: string[] = [];
    const sink = messageSink(
      ws,
      100,
      (t: string) => t,
      (t) => marked.push(t),
    );
    expect(sink.offer("a")).toEqual({ taken: "all" });
    ws.buffered = 100;
    expect(sink.offer("b")).toEqual({ taken: "partial", rest: "b" });
    ws.buffered = 0;
    result = 0;
    const dropped = sink.offer("c") as Extract<Offered<string>, { taken: "closed" }>;
    expect([dropped.taken, dropped.error.message, sent, marked]).toEqual([
      "closed",
      "message dropped by the runtime",
      ["a", "c"],
      ["a"],
    ]);
  });
});

describe("streamSink", () => {
  test("stops offering after the stream asks for a drain, and settles once every write's callback ran", async () => {
    const callbacks: (() => void)[] = [];
    const listeners: (() => void)[] = [];
    let accept = false;
    const stream = {
      write: (_d: string | Uint8Array, done?: () => void) => {
        if (done) callbacks.push(done);
        return accept;
      },
      on: (_e: "drain", l: () => void) => void listeners.push(l),
    };
    const sink = streamSink(stream);
    expect(sink.offer("a")).toEqual({ taken: "all" });
    expect(sink.offer("b")).toEqual({ taken: "partial", rest: "b" });
    accept = true;
    for (const l of listeners) l();
    expect(sink.offer("b")).toEqual({ taken: "all" });
    let settled = false;
    const s = sink.settled?.().then(() => (settled = true));
    callbacks[0]?.();
    await Promise.resolve();
    expect(settled).toBe(false);
    callbacks[1]?.();
    await s;
    expect(settled).toBe(true);
  });
});
