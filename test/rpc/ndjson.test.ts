import { describe, expect, test } from "bun:test";
import { LineSplitter, MAX_LINE_BYTES, decodeUtf8Line } from "../../src/rpc/ndjson.ts";
import type { Frame } from "../../src/rpc/ndjson.ts";

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const line = (text: string): Frame => ({ kind: "line", bytes: bytes(text) });
const oversized = (bytesAtLeast: number): Frame => ({ kind: "oversized", bytesAtLeast });

function splitChunks(chunks: Uint8Array[], maxLineBytes?: number): Frame[] {
  const splitter = new LineSplitter(maxLineBytes);
  const frames: Frame[] = [];
  for (const chunk of chunks) frames.push(...splitter.push(chunk));
  frames.push(...splitter.end());
  return frames;
}

function chunksOf(payload: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < payload.length; i += size) chunks.push(payload.subarray(i, i + size));
  return chunks;
}

const PAYLOAD = bytes('{"id":1}\r\n\n{"m":"héllo 中文 😀"}\nplain\r\r\nmid\rcr\n\r\nlast');
const PAYLOAD_FRAMES = [
  line('{"id":1}'),
  line(""),
  line('{"m":"héllo 中文 😀"}'),
  line("plain\r"),
  line("mid\rcr"),
  line(""),
  line("last"),
];

// With a limit of 8: "12345678\r\n" holds 9 bytes before its LF yet fits, because
// the CR belongs to the terminator; "12345678\r\r\n" keeps one CR and does not.
const LIMITED_PAYLOAD = bytes("123456789\n12345678\r\nabc\n12345678\r\r\nxy\n123456789012345678901234\r\nz");
const LIMITED_FRAMES = [
  oversized(9),
  line("12345678"),
  line("abc"),
  oversized(9),
  line("xy"),
  oversized(24),
  line("z"),
];

describe("LineSplitter", () => {
  test("returns every frame when the payload arrives as one chunk", () => {
    expect(splitChunks([PAYLOAD])).toEqual(PAYLOAD_FRAMES);
    expect(splitChunks([LIMITED_PAYLOAD], 8)).toEqual(LIMITED_FRAMES);
  });

  test("returns the same frames when the payload is split into two chunks at any byte offset", () => {
    for (let offset = 0; offset <= PAYLOAD.length; offset++) {
      const frames = splitChunks([PAYLOAD.subarray(0, offset), PAYLOAD.subarray(offset)]);
      expect({ offset, frames }).toEqual({ offset, frames: PAYLOAD_FRAMES });
    }
  });

  test("returns the same frames when a limited payload is split at any byte offset", () => {
    for (let offset = 0; offset <= LIMITED_PAYLOAD.length; offset++) {
      const frames = splitChunks([LIMITED_PAYLOAD.subarray(0, offset), LIMITED_PAYLOAD.subarray(offset)], 8);
      expect({ offset, frames }).toEqual({ offset, frames: LIMITED_FRAMES });
    }
  });

  test("returns the same frames when every byte is fed separately", () => {
    expect(splitChunks(chunksOf(PAYLOAD, 1))).toEqual(PAYLOAD_FRAMES);
    expect(splitChunks(chunksOf(LIMITED_PAYLOAD, 1), 8)).toEqual(LIMITED_FRAMES);
  });

  test("strips exactly one CR when a line ends with CRLF", () => {
    expect(splitChunks([bytes("a\r\nb\r\r\n\r\n")])).toEqual([line("a"), line("b\r"), line("")]);
  });

  test("keeps a CR when it is not directly before the LF", () => {
    expect(splitChunks([bytes("a\rb\n\rc\n")])).toEqual([line("a\rb"), line("\rc")]);
  });

  test("keeps a trailing CR when input ends without LF", () => {
    expect(splitChunks([bytes("a\r")])).toEqual([line("a\r")]);
  });

  test("returns empty line frames when lines are empty", () => {
    expect(splitChunks([bytes("\n\n\r\n")])).toEqual([line(""), line(""), line("")]);
  });

  test("returns views into the chunk when many lines lie within it", () => {
    const lines = Array.from(
      { length: 600 },
      (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"system.describe","params":{"pad":"${"x".repeat(30)}"}}`,
    );
    const chunk = bytes(lines.join("\n") + "\n");
    const frames = new LineSplitter().push(chunk);
    expect(frames).toEqual(lines.map(line));
    expect(frames.every((frame) => frame.kind === "line" && frame.bytes.buffer === chunk.buffer)).toBe(true);
  });

  test("keeps the spanning line intact when the caller reuses the chunk buffer", () => {
    const splitter = new LineSplitter();
    const chunk = bytes("a\nbcd");
    const first = splitter.push(chunk);
    chunk.fill(0x7a);
    expect([...first.map((frame) => frame.kind), ...splitter.push(bytes("e\n"))]).toEqual(["line", line("bcde")]);
  });

  test("returns an oversized frame followed by the next line when a line exceeds the limit", () => {
    const payload = bytes("x".repeat(20) + "\nok\n");
    expect(splitChunks([payload], 16)).toEqual([oversized(20), line("ok")]);
    expect(splitChunks(chunksOf(payload, 3), 16)).toEqual([oversized(20), line("ok")]);
  });

  test("accepts the line when it is exactly the limit and rejects it when one byte longer", () => {
    const exact = "a".repeat(16);
    expect(splitChunks([bytes(`${exact}\n${exact}\r\n${exact}b\n${exact}b\r\n`)], 16)).toEqual([
      line(exact),
      line(exact),
      oversized(17),
      oversized(17),
    ]);
    expect(splitChunks([bytes(`${exact}\r`), bytes("\n"), bytes(`${exact}\r`), bytes("x\n")], 16)).toEqual([
      line(exact),
      oversized(18),
    ]);
  });

  test("accepts the line when it is exactly the real 1 MiB limit and rejects it when one byte longer", () => {
    const exact = new Uint8Array(MAX_LINE_BYTES).fill(0x61);
    const payload = new Uint8Array(2 * MAX_LINE_BYTES + 3);
    payload.set(exact);
    payload[MAX_LINE_BYTES] = 0x0a;
    payload.set(exact, MAX_LINE_BYTES + 1);
    payload[2 * MAX_LINE_BYTES + 1] = 0x61;
    payload[2 * MAX_LINE_BYTES + 2] = 0x0a;
    const frames = splitChunks(chunksOf(payload, 65_536));
    expect(frames).toEqual([{ kind: "line", bytes: exact }, oversized(MAX_LINE_BYTES + 1)]);
  });

  test("keeps memory bounded when 50 MiB arrive without any LF", () => {
    const splitter = new LineSplitter();
    const chunk = new Uint8Array(65_536).fill(0x61);
    const chunkCount = (50 * 1024 * 1024) / chunk.length;
    let maxBuffered = 0;
    const framesDuring: Frame[] = [];
    for (let i = 0; i < chunkCount; i++) {
      framesDuring.push(...splitter.push(chunk));
      maxBuffered = Math.max(maxBuffered, splitter.bufferedBytes);
    }
    const framesAfter = splitter.push(bytes("\nok\n"));
    expect({
      framesDuring,
      bounded: maxBuffered <= MAX_LINE_BYTES + chunk.length,
      framesAfter,
      left: splitter.bufferedBytes,
    }).toEqual({
      framesDuring: [],
      bounded: true,
      framesAfter: [oversized(50 * 1024 * 1024), line("ok")],
      left: 0,
    });
  });

  test("returns the partial line when input ends without LF", () => {
    const splitter = new LineSplitter();
    expect([splitter.push(bytes("a\nbc")), splitter.bufferedBytes, splitter.end(), splitter.end()]).toEqual([
      [line("a")],
      2,
      [line("bc")],
      [],
    ]);
  });

  test("returns nothing at end when nothing is pending", () => {
    const splitter = new LineSplitter();
    expect([splitter.end(), splitter.push(bytes("a\n")), splitter.end()]).toEqual([[], [line("a")], []]);
  });

  test("returns an oversized frame at end when the unterminated line exceeds the limit", () => {
    expect([
      splitChunks([bytes("abcdef")], 4),
      splitChunks([bytes("abcd\r")], 4),
      splitChunks([bytes("abcd")], 4),
    ]).toEqual([[oversized(6)], [oversized(5)], [line("abcd")]]);
  });

  test("throws when the limit is not a non-negative integer", () => {
    expect(() => new LineSplitter(-1)).toThrow(RangeError);
    expect(() => new LineSplitter(1.5)).toThrow(RangeError);
  });
});

describe("decodeUtf8Line", () => {
  test("returns the text when bytes are valid multi-byte UTF-8", () => {
    expect([decodeUtf8Line(bytes("héllo 中文 😀")), decodeUtf8Line(new Uint8Array(0))]).toEqual(["héllo 中文 😀", ""]);
  });

  test("returns null when bytes are not valid UTF-8", () => {
    const invalid = [[0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0x7b, 0x80, 0x7d]];
    expect(invalid.map((seq) => decodeUtf8Line(Uint8Array.from(seq)))).toEqual([null, null, null, null, null, null]);
  });

  test("keeps the BOM when the line starts with one", () => {
    expect(decodeUtf8Line(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe("\ufeff{}");
  });

  test("decodes correctly when called after a failed decode", () => {
    expect([decodeUtf8Line(Uint8Array.from([0xe2, 0x82])), decodeUtf8Line(bytes("ok €"))]).toEqual([null, "ok €"]);
  });
});
