/**
 * Who is on the other end of an accepted Unix-socket connection, as the kernel recorded it at
 * connect(2): the peer's uid, gid and (where the platform says) pid. A peer cannot forge these, so
 * the listener can refuse another user even when the socket's file modes were loosened.
 *
 * Neither Bun nor Node exposes them, so they are read through libc with bun:ffi, like
 * tcp-user-timeout.ts: on Linux getsockopt(SOL_SOCKET, SO_PEERCRED) fills a struct ucred
 * {pid, uid, gid}; on macOS getpeereid(2) gives uid and gid, and getsockopt(SOL_LOCAL,
 * LOCAL_PEERPID) the pid. Elsewhere, or when libc cannot be loaded, nothing can be read and only
 * the file modes protect the socket (`peerCredentialsSupported()` says which).
 */
import { FFIType, dlopen, ptr } from "bun:ffi";

export interface PeerCredentials {
  uid: number;
  gid: number;
  /** Null where the platform does not report it. */
  pid: number | null;
}

type Pointer = ReturnType<typeof ptr>;

interface Native {
  read(fd: number): PeerCredentials | null;
}

const GETSOCKOPT = {
  args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr],
  returns: FFIType.i32,
} as const;

/** getsockopt(2) as bun:ffi calls it. */
type GetSockOpt = (fd: number, level: number, option: number, value: Pointer, length: Pointer) => number;

/** Linux: SOL_SOCKET 1, SO_PEERCRED 17; struct ucred is three 32-bit integers on every architecture. */
function linux(names: string[]): Native | null {
  for (const name of names) {
    try {
      const { symbols } = dlopen(name, { getsockopt: GETSOCKOPT });
      const getsockopt = symbols.getsockopt as GetSockOpt;
      return {
        read(fd) {
          const ucred = new Int32Array(3);
          const length = new Uint32Array([12]);
          if (getsockopt(fd, 1, 17, ptr(ucred), ptr(length)) !== 0 || length[0] !== 12) return null;
          const [pid, uid, gid] = ucred as unknown as [number, number, number];
          // A socket without a Unix peer (unconnected, or TCP) reports uid -1, no user at all.
          if (uid === -1) return null;
          // pid 0: the peer is in another pid namespace, or the kernel had no pid for it.
          return { uid: uid >>> 0, gid: gid >>> 0, pid: pid > 0 ? pid : null };
        },
      };
    } catch {}
  }
  return null;
}

/** macOS: getpeereid(2); SOL_LOCAL 0, LOCAL_PEERPID 2 (sys/un.h). */
function darwin(): Native | null {
  try {
    const { symbols } = dlopen("libSystem.B.dylib", {
      getpeereid: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
      getsockopt: GETSOCKOPT,
    });
    const getpeereid = symbols.getpeereid as (fd: number, uid: Pointer, gid: Pointer) => number;
    const getsockopt = symbols.getsockopt as GetSockOpt;
    return {
      read(fd) {
        const uid = new Uint32Array(1);
        const gid = new Uint32Array(1);
        if (getpeereid(fd, ptr(uid), ptr(gid)) !== 0) return null;
        const pid = new Int32Array(1);
        const length = new Uint32Array([4]);
        const gotPid = getsockopt(fd, 0, 2, ptr(pid), ptr(length)) === 0 && (pid[0] as number) > 0;
        return { uid: uid[0] as number, gid: gid[0] as number, pid: gotPid ? (pid[0] as number) : null };
      },
    };
  } catch {
    return null;
  }
}

function load(): Native | null {
  if (process.platform === "linux")
    return linux(["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`]);
  if (process.platform === "darwin") return darwin();
  return null;
}

let native: Native | null | undefined;
const lib = () => (native === undefined ? (native = load()) : native);

/** Whether this platform's peer credentials can be read at all (Linux and macOS with their libc). */
export function peerCredentialsSupported(): boolean {
  return lib() !== null;
}

/**
 * The credentials of the peer of a connected Unix-socket descriptor; null when they cannot be read
 * (an unsupported platform, a descriptor that is not a connected Unix socket).
 */
export function peerCredentials(fd: number): PeerCredentials | null {
  const n = lib();
  if (!n || !Number.isInteger(fd) || fd < 0) return null;
  return n.read(fd);
}
