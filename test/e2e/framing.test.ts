import { describe, expect, test } from "bun:test";
import { spawnDaemon } from "../support/daemon.ts";
import { daemonOnUnreadFifo } from "../support/unread-fifo.ts";
import { within } from "./serve-daemon.ts";

const MiB = 1_048_576;

/** Resident memory of a process in MiB (Linux). */
async function rssMiB(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
  return kb / 1024;
}

describe("NDJSON framing on stdio", () => {
  test("one payload split at every byte offset is answered identically when written in two parts", async () => {
    await using d = spawnDaemon();
    await d.hello();
    // Non-ASCII id: some offsets fall inside a multi-byte UTF-8 sequence, which must not matter
    // because lines are split on the newline byte before decoding.
    const id = "ü-ñ-🚀-id";
    const bytes = new TextEncoder().encode(
      `${JSON.stringify({ jsonrpc: "2.0", id, method: "sessions.list", params: {} })}\n`,
    );
    const expected = { jsonrpc: "2.0" as const, id, result: [] };
    for (let cut = 1; cut < bytes.length; cut++) {
      d.writeRaw(bytes.subarray(0, cut));
      // A deliberate pause between the parts, so that the daemon mostly reads them apart: no signal
      // tells the client that the first part was read, as none is sent before the newline.
      await Bun.sleep(0);
      d.writeRaw(bytes.subarray(cut));
      expect(await d.next()).toEqual(expected);
    }
  });

  test("many pipelined requests in one write are answered in order", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const n = 2000;
    let batch = "";
    for (let i = 0; i < n; i++) batch += `{"jsonrpc":"2.0","id":${i},"method":"sessions.list"}\n`;
    d.writeRaw(batch);
    for (let i = 0; i < n; i++) expect(await d.next()).toEqual({ jsonrpc: "2.0", id: i, result: [] });
  });

  test("CRLF line endings are accepted and empty or whitespace-only lines are ignored", async () => {
    await using d = spawnDaemon();
    await d.hello();
    d.writeRaw('\n\r\n   \n\t\r\n{"jsonrpc":"2.0","id":"crlf","method":"sessions.list"}\r\n\n');
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: "crlf", result: [] });
    d.writeRaw('{"jsonrpc":"2.0","id":"after","method":"sessions.list"}\n');
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: "after", result: [] });
  });

  test("a line of exactly 1 MiB is processed and one byte more is refused with a null id when sent", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const line = (len: number) => {
      const head = '{"jsonrpc":"2.0","id":"big","method":"sessions.list"';
      return `${head}${" ".repeat(len - head.length - 1)}}`;
    };
    expect(new TextEncoder().encode(line(MiB)).length).toBe(MiB);
    d.writeRaw(`${line(MiB)}\r\n`);
    expect(await d.next()).toEqual({ jsonrpc: "2.0", id: "big", result: [] });
    d.writeRaw(`${line(MiB + 1)}\n`);
    expect(await d.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "request line exceeds the 1048576-byte limit",
        data: {
          code: "invalid_request",
          message: "request line exceeds the 1048576-byte limit",
          retryable: false,
          details: { actualBytesAtLeast: MiB + 1, limitBytes: MiB },
        },
      },
    });
    expect((await d.call("sessions.list")).result).toEqual([]);
  });

  test("memory stays bounded while a line without newline grows far past the limit", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const before = await rssMiB(d.proc.pid);
    const chunk = "x".repeat(256 * 1024);
    const chunks = 800;
    let peak = 0;
    for (let i = 0; i < chunks; i++) {
      d.writeRaw(chunk);
      if (i % 32 === 0) {
        // Sampled once the daemon has taken all that was written so far.
        await d.proc.stdin.flush();
        peak = Math.max(peak, await rssMiB(d.proc.pid));
      }
    }
    peak = Math.max(peak, await rssMiB(d.proc.pid));
    d.writeRaw("\n");
    const r = await d.next();
    peak = Math.max(peak, await rssMiB(d.proc.pid));
    expect(r.error?.data.details).toEqual({ actualBytesAtLeast: chunks * chunk.length, limitBytes: MiB });
    expect(r.id).toBeNull();
    // 200 MiB went in. Keeping the line would grow the daemon by at least that much; what it does
    // keep is one line's worth plus chunks the collector has not reclaimed yet.
    expect(peak - before).toBeLessThan(50);
    expect((await d.call("sessions.list")).result).toEqual([]);
  });

  test("a line that is not valid UTF-8 is answered with a null id and the connection keeps working", async () => {
    await using d = spawnDaemon();
    await d.hello();
    const invalid = [[0x7b, 0xc3, 0x28, 0x7d], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff]];
    for (const seq of invalid) {
      d.writeRaw(new Uint8Array([...seq, 0x0a]));
      expect(await d.next()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32700,
          message: "request line is not valid UTF-8",
          data: {
            code: "parse_error",
            message: "request line is not valid UTF-8",
            retryable: false,
            details: { reason: "invalidUtf8" },
          },
        },
      });
    }
    expect((await d.call("sessions.list")).result).toEqual([]);
  });

  test("a response over 1 MiB is replaced by response_frame_too_large for the same id", async () => {
    await using d = spawnDaemon();
    const r = await d.call("system.hello", {
      client: { name: "n".repeat(600_000), version: "v".repeat(400_000) },
      protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    });
    expect(r.result).toBeDefined();
    const describeId = "d".repeat(100_000);
    const big = await d.call("system.describe", undefined, { id: describeId });
    expect(big.id).toBe(describeId);
    expect(big.error?.code).toBe(-32012);
    expect(big.error?.data).toEqual({
      code: "response_frame_too_large",
      message: "response frame exceeds the 1048576-byte limit",
      retryable: false,
      details: { actualBytes: expect.any(Number), limitBytes: MiB },
    });
    expect(big.error?.data.details.actualBytes).toBeGreaterThan(MiB);
    expect((await d.call("sessions.list")).error?.data.code).toBe("method_not_found");
  });

  test("the output queue is bounded by backpressure when the client stops reading stdout", async () => {
    const n = 150_000;
    let lines = "";
    for (let i = 1; i <= n; i++) lines += `{"jsonrpc":"2.0","id":${i},"method":"system.describe"}\n`;
    const f = daemonOnUnreadFifo(lines, { DEVICERAIL_LOG_LEVEL: "warn" });
    try {
      // Deliberately unread for this long: memory must stay bounded over a span in which the daemon,
      // without backpressure, would have produced ~90 MB of responses.
      await Bun.sleep(1500);
      expect(await rssMiB(f.proc.pid)).toBeLessThan(80);
      // Then read to the end: the FIFO opened again through the daemon's stdout (Linux), as a stream
      // that waits for output, where the helper only reads what is there.
      const output = await within(
        new Response(Bun.file(`/proc/${f.proc.pid}/fd/1`)).text(),
        30_000,
        "the daemon's output did not end",
      );
      const ids = output
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l).id as number);
      expect(ids).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
      expect(await f.proc.exited).toBe(0);
    } finally {
      f.cleanup();
    }
  }, 40_000);
});
