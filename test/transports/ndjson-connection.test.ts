import { afterEach, describe, expect, test } from "bun:test";
import { type ByteChannel, MAX_INPUT_QUEUE_BYTES, NdjsonConnection } from "../../src/transports/ndjson-connection.ts";
import { socketSink } from "../../src/transports/outbox.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";
import { coreHarness } from "../support/core-harness.ts";
import { helloParams } from "../support/hello.ts";

/** A byte channel whose output is collected as lines; `room` bytes are taken before it pushes back. */
function channel() {
  const c = {
    text: "",
    room: Number.POSITIVE_INFINITY,
    reading: [] as boolean[],
    ended: "" as "" | "end" | "terminate",
    waiters: [] as (() => void)[],
    get lines(): any[] {
      return c.text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l));
    },
    async until(n: number): Promise<any[]> {
      while (c.lines.length < n) await new Promise<void>((r) => c.waiters.push(r));
      return c.lines;
    },
  };
  const socket = {
    write(data: string | Uint8Array): number {
      if (c.ended) return -1;
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
      const n = Math.min(bytes.length, c.room);
      c.text += bytes.subarray(0, n).toString();
      c.room -= n;
      for (const w of c.waiters.splice(0)) w();
      return n;
    },
  };
  const ch: ByteChannel = {
    output: socketSink(socket),
    setReading: (r) => (c.reading.push(r), true),
    end: () => void (c.ended ||= "end"),
    terminate: () => void (c.ended ||= "terminate"),
  };
  return { c, ch };
}

const line = (msg: object) => new TextEncoder().encode(`${JSON.stringify(msg)}\n`);
const hello = (id: number) => line({ jsonrpc: "2.0", id, method: "system.hello", params: helloParams() });
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function setup() {
  const h = await coreHarness();
  cleanups.push(h.cleanup);
  const { c, ch } = channel();
  let handshakes = 0;
  const n = new NdjsonConnection(ch, {
    transport: { kind: "tcp", framing: "ndjson" },
    services: { eventStreamListener: false, screenshotPolicy: "capture", evidenceStore: true, mediaStreams: true },
    dispatcher: h.dispatcher,
    log: silentLogger,
    label: "test",
    closeReason: "RPC connection closed",
    flushGraceMs: 200,
    onHandshake: () => handshakes++,
  });
  return { h, c, n, handshakes: () => handshakes };
}

describe("NdjsonConnection", () => {
  test("answers lines split across chunks in order and reports its handshake once", async () => {
    const { c, n, handshakes } = await setup();
    const bytes = new Uint8Array([
      ...hello(1),
      ...line({ jsonrpc: "2.0", id: 2, method: "system.describe" }),
      ...line({ jsonrpc: "2.0", id: 3, method: "sessions.list" }),
    ]);
    for (let i = 0; i < bytes.length; i += 7) n.receive(bytes.subarray(i, i + 7));
    const lines = await c.until(3);
    expect(lines.map((l) => l.id)).toEqual([1, 2, 3]);
    expect(handshakes()).toBe(1);
  });

  test("answers an oversized line and invalid UTF-8 with a null id and keeps working", async () => {
    const { c, n } = await setup();
    n.receive(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]));
    n.receive(hello(1));
    const lines = await c.until(2);
    expect([lines[0].id, lines[0].error.data.code, lines[1].id]).toEqual([null, "parse_error", 1]);
  });

  test("end of input answers the unterminated last line, then ends its Session and the channel with FIN", async () => {
    const { c, n, h } = await setup();
    n.receive(hello(1));
    n.receive(line({ jsonrpc: "2.0", id: 2, method: "device.connect" }));
    n.receive(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session.start" })));
    n.endOfInput();
    await n.finished;
    expect(c.lines.map((l) => l.id).sort()).toEqual([1, 2, 3]);
    expect(c.ended).toBe("end");
    const sessionId = c.lines.find((l) => l.id === 3).result.id;
    expect(h.core.log.info(sessionId)?.state).toBe("ended");
  });

  test("a channel that goes away ends the connection's Session with RPC connection closed and cuts the channel", async () => {
    const { c, n, h } = await setup();
    n.receive(hello(1));
    n.receive(line({ jsonrpc: "2.0", id: 2, method: "device.connect" }));
    n.receive(line({ jsonrpc: "2.0", id: 3, method: "session.start" }));
    const lines = await c.until(3);
    n.gone(new Error("ECONNRESET"));
    await n.finished;
    const events = h.core.log.read(lines[2].result.id, 0);
    expect(events.at(-1)?.payload).toEqual({
      type: "sessionEnded",
      outcome: "shutdown",
      reason: "RPC connection closed",
    });
    expect(c.ended).toBe("terminate");
  });

  test("stops reading while output is backed up, and closes a client that keeps sending past the cap", async () => {
    const { c, n } = await setup();
    c.room = 0;
    n.receive(hello(1));
    const describe = line({ jsonrpc: "2.0", id: 2, method: "system.describe" });
    const chunk = new Uint8Array(256 * 1024);
    for (let i = 0; i + describe.length <= chunk.length; i += describe.length) chunk.set(describe, i);
    chunk.fill(0x20, chunk.length - (chunk.length % describe.length));
    for (let sent = 0; sent <= MAX_INPUT_QUEUE_BYTES; sent += chunk.length) n.receive(chunk);
    await n.finished;
    expect(c.reading[0]).toBe(false);
    expect(c.ended).toBe("terminate");
  });

  test("shutdown flushes what the client takes within the grace, then ends with FIN", async () => {
    const { c, n } = await setup();
    n.receive(hello(1));
    await c.until(1);
    await n.shutdown();
    expect(c.ended).toBe("end");
  });

  test("shutdown cuts the channel when the client takes nothing within the grace", async () => {
    const { c, n } = await setup();
    c.room = 0;
    n.receive(hello(1));
    await new Promise<void>((r) => setImmediate(r));
    const t0 = performance.now();
    await n.shutdown();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(150);
    expect(c.ended).toBe("terminate");
  });
});
