import { describe, expect, test } from "bun:test";
import {
  A_CNXN,
  A_OKAY,
  A_WRTE,
  checksum,
  chunks,
  commandName,
  decodeHeader,
  encodePacket,
  encodeShellExit,
  encodeShellPacket,
  PacketReader,
  ShellId,
  ShellPacketReader,
  WireError,
} from "./wire.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("wire packets", () => {
  test("encodePacket writes six little-endian words then the payload when checksums are on", () => {
    const bytes = encodePacket({ command: A_CNXN, arg0: 0x01000001, arg1: 0x100000, data: enc("host::") });
    expect(Buffer.from(bytes).toString("hex")).toBe(
      "434e584e" +
        "01000001" +
        "00001000" +
        "06000000" +
        "32020000" +
        "bcb1a7b1" +
        Buffer.from("host::").toString("hex"),
    );
    expect(decodeHeader(bytes)).toEqual({
      command: A_CNXN,
      arg0: 0x01000001,
      arg1: 0x100000,
      length: 6,
      check: 562,
      magic: 0xb1a7b1bc,
    });
  });

  test("encodePacket writes a zero checksum when checksums are skipped", () => {
    expect(decodeHeader(encodePacket({ command: A_WRTE, arg0: 1, arg1: 2, data: enc("hi") }, false)).check).toBe(0);
  });

  test("checksum is the unsigned byte sum, not a crc32", () => {
    expect(checksum(Uint8Array.of(0xff, 0xff, 1))).toBe(511);
    expect(checksum(new Uint8Array(0))).toBe(0);
  });

  test("commandName names adb commands and shows others in hex", () => {
    expect([commandName(A_OKAY), commandName(0x12345678)]).toEqual(["OKAY", "0x12345678"]);
  });

  test("PacketReader returns packets split across chunks and several per chunk", () => {
    const a = encodePacket({ command: A_WRTE, arg0: 5, arg1: 1, data: enc("hello") });
    const b = encodePacket({ command: A_OKAY, arg0: 5, arg1: 1, data: new Uint8Array(0) });
    const stream = new Uint8Array([...a, ...b, ...a]);
    const reader = new PacketReader();
    const got = [
      reader.push(stream.subarray(0, 10)),
      reader.push(stream.subarray(10, 60)),
      reader.push(stream.subarray(60)),
    ];
    expect(
      got.map((ps) => ps.map((p) => [commandName(p.command), p.arg0, p.arg1, new TextDecoder().decode(p.data)])),
    ).toEqual([
      [],
      [
        ["WRTE", 5, 1, "hello"],
        ["OKAY", 5, 1, ""],
      ],
      [["WRTE", 5, 1, "hello"]],
    ]);
  });

  test("PacketReader throws when the magic is wrong", () => {
    const bad = encodePacket({ command: A_OKAY, arg0: 0, arg1: 0, data: new Uint8Array(0) });
    bad[20] = 0;
    expect(() => new PacketReader().push(bad)).toThrow(new WireError("bad magic for OKAY"));
  });

  test("PacketReader throws when a payload exceeds maxData", () => {
    const big = encodePacket({ command: A_WRTE, arg0: 1, arg1: 1, data: new Uint8Array(5000) });
    expect(() => new PacketReader(4096).push(big)).toThrow(new WireError("WRTE payload of 5000 bytes exceeds 4096"));
  });

  test("chunks cuts data to the size and keeps a single view when it fits", () => {
    expect(chunks(Uint8Array.of(1, 2, 3, 4, 5), 2).map((c) => [...c])).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks(new Uint8Array(0), 2).map((c) => c.length)).toEqual([0]);
  });
});

describe("wire shell_v2", () => {
  test("encodeShellPacket writes id, little-endian length and data", () => {
    expect([...encodeShellPacket(ShellId.stdout, enc("hi\n"))]).toEqual([1, 3, 0, 0, 0, 104, 105, 10]);
    expect([...encodeShellPacket(ShellId.closeStdin)]).toEqual([4, 0, 0, 0, 0]);
  });

  test("encodeShellExit masks the status to one byte", () => {
    expect([...encodeShellExit(257)]).toEqual([3, 1, 0, 0, 0, 1]);
  });

  test("ShellPacketReader parses packets spanning and sharing chunks", () => {
    const bytes = new Uint8Array([
      ...encodeShellPacket(ShellId.stdin, enc("abc")),
      ...encodeShellPacket(ShellId.closeStdin),
    ]);
    const r = new ShellPacketReader();
    const got = [r.push(bytes.subarray(0, 3)), r.push(bytes.subarray(3, 7)), r.push(bytes.subarray(7))];
    expect(got.map((ps) => ps.map((p) => [p.id, new TextDecoder().decode(p.data)]))).toEqual([
      [],
      [],
      [
        [0, "abc"],
        [4, ""],
      ],
    ]);
  });
});
