/**
 * The ADB transport wire format: 24-byte packet headers, an incremental packet reader, the
 * payload checksum and the shell_v2 packet codec. Pure functions and small stateful readers; no I/O.
 */

export const A_SYNC = 0x434e5953;
export const A_CNXN = 0x4e584e43;
export const A_AUTH = 0x48545541;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;
export const A_STLS = 0x534c5453;

export const A_VERSION_MIN = 0x01000000;
/** Also adb 29.0.6's A_VERSION: at or above it neither side needs to send real checksums. */
export const A_VERSION_SKIP_CHECKSUM = 0x01000001;
/** Packets before the CNXN exchange (banner, AUTH) must fit in this. */
export const MAX_PAYLOAD_V1 = 4096;
export const MAX_PAYLOAD = 1024 * 1024;
export const HEADER_SIZE = 24;

export const AUTH_TOKEN = 1;
export const AUTH_SIGNATURE = 2;
export const AUTH_RSAPUBLICKEY = 3;

export interface Packet {
  command: number;
  arg0: number;
  arg1: number;
  data: Uint8Array;
}

export interface Header {
  command: number;
  arg0: number;
  arg1: number;
  length: number;
  check: number;
  magic: number;
}

const NAMES: Record<number, string> = {
  [A_SYNC]: "SYNC",
  [A_CNXN]: "CNXN",
  [A_AUTH]: "AUTH",
  [A_OPEN]: "OPEN",
  [A_OKAY]: "OKAY",
  [A_CLSE]: "CLSE",
  [A_WRTE]: "WRTE",
  [A_STLS]: "STLS",
};

/** The four-letter name of a command, or its hex value when it is not one adb defines. */
export function commandName(command: number): string {
  return NAMES[command] ?? `0x${command.toString(16).padStart(8, "0")}`;
}

/** protocol.txt calls this a crc32, but adb computes the unsigned sum of the payload bytes. */
export function checksum(data: Uint8Array): number {
  let sum = 0;
  for (const b of data) sum = (sum + b) >>> 0;
  return sum;
}

/** Header plus payload. `withChecksum` false writes 0, as adbd does once A_VERSION_SKIP_CHECKSUM is negotiated. */
export function encodePacket(p: Packet, withChecksum = true): Uint8Array {
  const out = new Uint8Array(HEADER_SIZE + p.data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, p.command >>> 0, true);
  v.setUint32(4, p.arg0 >>> 0, true);
  v.setUint32(8, p.arg1 >>> 0, true);
  v.setUint32(12, p.data.length, true);
  v.setUint32(16, withChecksum ? checksum(p.data) : 0, true);
  v.setUint32(20, (p.command ^ 0xffffffff) >>> 0, true);
  out.set(p.data, HEADER_SIZE);
  return out;
}

export function decodeHeader(bytes: Uint8Array): Header {
  if (bytes.length < HEADER_SIZE) throw new WireError(`header needs ${HEADER_SIZE} bytes, got ${bytes.length}`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, HEADER_SIZE);
  const u = (o: number) => v.getUint32(o, true);
  return { command: u(0), arg0: u(4), arg1: u(8), length: u(12), check: u(16), magic: u(20) };
}

export class WireError extends Error {
  override name = "WireError";
}

/** Grows a byte buffer from chunks and hands out whole records; shared by every stream parser here. */
export class ByteQueue {
  private buf = new Uint8Array(0);
  private start = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const rest = this.buf.subarray(this.start);
    const next = new Uint8Array(rest.length + chunk.length);
    next.set(rest, 0);
    next.set(chunk, rest.length);
    this.buf = next;
    this.start = 0;
  }

  get length(): number {
    return this.buf.length - this.start;
  }

  /** The next `n` bytes without consuming them (a view, valid until the next push). */
  peek(n: number): Uint8Array {
    return this.buf.subarray(this.start, this.start + n);
  }

  /** Consumes and returns a copy of the next `n` bytes. */
  take(n: number): Uint8Array {
    const out = this.buf.slice(this.start, this.start + n);
    this.start += n;
    return out;
  }
}

/**
 * Splits a TCP byte stream into packets. Throws WireError on a bad magic or a payload above
 * `maxData`, the two checks adb's `check_header` makes before it drops a transport.
 */
export class PacketReader {
  private readonly queue = new ByteQueue();
  private header: Header | null = null;

  constructor(public maxData = MAX_PAYLOAD) {}

  push(chunk: Uint8Array): Packet[] {
    this.queue.push(chunk);
    const out: Packet[] = [];
    for (;;) {
      if (!this.header) {
        if (this.queue.length < HEADER_SIZE) break;
        const h = decodeHeader(this.queue.take(HEADER_SIZE));
        if (h.magic !== (h.command ^ 0xffffffff) >>> 0) throw new WireError(`bad magic for ${commandName(h.command)}`);
        if (h.length > this.maxData)
          throw new WireError(`${commandName(h.command)} payload of ${h.length} bytes exceeds ${this.maxData}`);
        this.header = h;
      }
      if (this.queue.length < this.header.length) break;
      const { command, arg0, arg1, length } = this.header;
      out.push({ command, arg0, arg1, data: this.queue.take(length) });
      this.header = null;
    }
    return out;
  }
}

/** shell_v2 packet ids (adb shell_protocol.h). */
export const ShellId = { stdin: 0, stdout: 1, stderr: 2, exit: 3, closeStdin: 4, windowSize: 5 } as const;
export type ShellIdValue = (typeof ShellId)[keyof typeof ShellId];

export interface ShellPacket {
  id: number;
  data: Uint8Array;
}

/** `[id:u8][length:u32 LE][data]`. */
export function encodeShellPacket(id: number, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(5 + data.length);
  out[0] = id;
  new DataView(out.buffer).setUint32(1, data.length, true);
  out.set(data, 5);
  return out;
}

/** The exit packet carries one byte: the status masked to 8 bits, as a process exit code is. */
export function encodeShellExit(status: number): Uint8Array {
  return encodeShellPacket(ShellId.exit, Uint8Array.of(status & 0xff));
}

/** shell_v2 packets may span WRTEs and several may share one, so this parses a byte stream. */
export class ShellPacketReader {
  private readonly queue = new ByteQueue();

  push(chunk: Uint8Array): ShellPacket[] {
    this.queue.push(chunk);
    const out: ShellPacket[] = [];
    while (this.queue.length >= 5) {
      const head = this.queue.peek(5);
      const length = new DataView(head.buffer, head.byteOffset, 5).getUint32(1, true);
      if (this.queue.length < 5 + length) break;
      const id = head[0] as number;
      this.queue.take(5);
      out.push({ id, data: this.queue.take(length) });
    }
    return out;
  }
}

/** Splits `data` into views of at most `size` bytes (at least one, possibly empty, view). */
export function chunks(data: Uint8Array, size: number): Uint8Array[] {
  if (data.length <= size) return [data];
  const out: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += size) out.push(data.subarray(i, Math.min(data.length, i + size)));
  return out;
}
