/**
 * TCP_USER_TIMEOUT (RFC 5482) on an accepted socket: how long data the daemon sent may stay
 * unacknowledged before the kernel gives up on the connection.
 *
 * Keepalive alone finds a vanished peer only while nothing is in flight. A peer that vanishes as an
 * answer is on its way (a CI runner killed mid-call, a NAT entry dropped) leaves that answer
 * unacknowledged; Linux then retransmits with back-off for tcp_retries2 (15 by default, about 15
 * minutes) before it reports the connection dead, and the peer's device stays leased all that time.
 * With this option the connection ends after `ms` instead, in both cases.
 *
 * Neither Bun nor Node exposes the option, so it is set through libc's setsockopt with bun:ffi on
 * Linux (option 18) and macOS (TCP_RXT_CONNDROPTIME, 0x80, in seconds). Elsewhere, or when libc
 * cannot be loaded, nothing is set and keepalive remains the only guard.
 */
import { FFIType, dlopen, ptr } from "bun:ffi";

const IPPROTO_TCP = 6;

interface Native {
  setsockopt(fd: number, level: number, name: number, value: ReturnType<typeof ptr>, length: number): number;
  getsockopt(
    fd: number,
    level: number,
    name: number,
    value: ReturnType<typeof ptr>,
    length: ReturnType<typeof ptr>,
  ): number;
  option: number;
  /** The option's unit, in milliseconds. */
  unitMs: number;
}

const SIGNATURES = {
  setsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  getsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
} as const;

function load(): Native | null {
  const [names, option, unitMs] =
    process.platform === "linux"
      ? [["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`], 18, 1]
      : process.platform === "darwin"
        ? [["libSystem.B.dylib"], 0x80, 1000]
        : [[], 0, 1];
  for (const name of names) {
    try {
      const { symbols } = dlopen(name, SIGNATURES);
      return { setsockopt: symbols.setsockopt, getsockopt: symbols.getsockopt, option, unitMs } as Native;
    } catch {}
  }
  return null;
}

let native: Native | null | undefined;
const lib = () => (native === undefined ? (native = load()) : native);

/** Sets the timeout on a TCP socket's descriptor; false where it cannot be set (then nothing changed). */
export function setTcpUserTimeout(fd: number, ms: number): boolean {
  const n = lib();
  if (!n || !Number.isInteger(fd) || fd < 0) return false;
  const value = new Uint32Array([Math.max(1, Math.ceil(ms / n.unitMs))]);
  return n.setsockopt(fd, IPPROTO_TCP, n.option, ptr(value), 4) === 0;
}

/** The timeout set on a descriptor, in milliseconds (0: none); null where it cannot be read. */
export function tcpUserTimeout(fd: number): number | null {
  const n = lib();
  if (!n) return null;
  const value = new Uint32Array(1);
  const length = new Uint32Array([4]);
  return n.getsockopt(fd, IPPROTO_TCP, n.option, ptr(value), ptr(length)) === 0
    ? (value[0] as number) * n.unitMs
    : null;
}
