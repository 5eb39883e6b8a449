import { chmodSync, lstatSync, mkdirSync, type Stats, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Socket, UnixSocketListener } from "bun";
import { withinGrace } from "../rpc/grace.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { type PublicListenerOptions, startHttpFrontend } from "./http.ts";
import { AcceptTable, DEFAULT_LIMITS, socketFd } from "./accept-table.ts";
import { peerCredentials, peerCredentialsSupported } from "./peer-credentials.ts";
import type { AcceptOptions, Accepted } from "./sniff.ts";
import { messageOf } from "../protocol/errors.ts";

/** The socket path cannot be served (unsafe directory, a live daemon on it): start-up fails with exit 1. */
export class SocketPathError extends Error {}

export interface UnixOptions extends PublicListenerOptions {
  path: string;
}

export interface UnixListener {
  path: string;
  stop(): Promise<void>;
}

const LIVE_PROBE_MS = 1_000;

const codeOf = (e: unknown) => (typeof e === "object" && e !== null && "code" in e ? String(e.code) : undefined);

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if (codeOf(e) === "ENOENT") return null;
    throw new SocketPathError(`cannot inspect ${path}: ${messageOf(e)}`);
  }
}

/**
 * The socket's directory must be ours alone to change: created 0700 when missing; refused when it
 * is a symlink, not a directory, owned by another uid, or writable by group or others (anyone who
 * can write there can swap the socket for their own).
 */
export function checkSocketDirectory(dir: string, uid: number | undefined = process.getuid?.()): void {
  let st = lstatOrNull(dir);
  if (st === null) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // mkdir's mode is filtered by the umask.
      chmodSync(dir, 0o700);
    } catch (e) {
      throw new SocketPathError(`cannot create the socket directory ${dir}: ${messageOf(e)}`);
    }
    st = lstatOrNull(dir);
    if (st === null) throw new SocketPathError(`${dir} disappeared right after it was created`);
  }
  if (st.isSymbolicLink())
    throw new SocketPathError(
      `the socket directory ${dir} is a symbolic link; use a real directory that only you can write`,
    );
  if (!st.isDirectory()) throw new SocketPathError(`the socket directory ${dir} exists but is not a directory`);
  if (uid !== undefined && st.uid !== uid)
    throw new SocketPathError(
      `the socket directory ${dir} is owned by uid ${st.uid}, not by the current user (uid ${uid}); use a directory you own`,
    );
  if ((st.mode & 0o022) !== 0)
    throw new SocketPathError(
      `the socket directory ${dir} is writable by other users (mode ${(st.mode & 0o777).toString(8)}); use a directory only you can write (chmod 700)`,
    );
}

/** True when something accepts connections on the socket path. */
async function answers(path: string): Promise<boolean> {
  const probe = Bun.connect({ unix: path, socket: { data() {} } }).then(
    (s) => {
      s.terminate();
      return true;
    },
    (e: unknown) => {
      if (codeOf(e) === "ECONNREFUSED" || codeOf(e) === "ENOENT") return false;
      throw new SocketPathError(`cannot probe the existing socket ${path}: ${messageOf(e)}`);
    },
  );
  // A listener whose backlog is full does not answer at once, but it is live.
  if (!(await withinGrace(probe, LIVE_PROBE_MS))) return true;
  return probe;
}

/** Makes `path` free for a new socket: a stale socket is removed, a live one or any other file refused. */
async function claimPath(path: string): Promise<void> {
  const st = lstatOrNull(path);
  if (st === null) return;
  if (!st.isSocket())
    throw new SocketPathError(`${path} exists and is not a socket; remove it or choose another --socket path`);
  if (await answers(path))
    throw new SocketPathError(
      `another process (a running devicerail daemon?) is listening on ${path}; stop it or choose another --socket path`,
    );
  try {
    unlinkSync(path);
  } catch (e) {
    if (codeOf(e) !== "ENOENT") throw new SocketPathError(`cannot remove the stale socket ${path}: ${messageOf(e)}`);
  }
}

/** Refusals logged one by one, per second; past that they are summed into one line a second. */
const REFUSAL_LINES_PER_SECOND = 10;

/**
 * The peer check of every accepted connection: the kernel's record of who connected must be this
 * daemon's uid or root (root can read the data directory's files anyway, so refusing it would
 * protect nothing). Another uid is closed in the open handler, before any byte of it is read.
 */
export class PeerCheck {
  private readonly uid: number | undefined = process.getuid?.();
  private window = { startMs: 0, logged: 0, suppressed: 0 };
  private summary: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly log: Logger) {}

  /** Null where the platform reports no peer credentials: then the file modes alone protect the socket. */
  static create(log: Logger): PeerCheck | null {
    return peerCredentialsSupported() && process.getuid ? new PeerCheck(log) : null;
  }

  admit(socket: Socket<unknown>): boolean {
    const peer = peerCredentials(socketFd(socket));
    if (peer && (peer.uid === this.uid || peer.uid === 0)) return true;
    socket.terminate();
    this.refused(
      peer
        ? { peerUid: peer.uid, peerGid: peer.gid, peerPid: peer.pid }
        : { reason: "the peer's credentials could not be read" },
    );
    return false;
  }

  stop(): void {
    if (this.summary) clearTimeout(this.summary);
    this.summary = null;
    this.flush();
  }

  private refused(fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.window.startMs >= 1_000) {
      this.flush();
      this.window = { startMs: now, logged: 0, suppressed: 0 };
    }
    if (this.window.logged < REFUSAL_LINES_PER_SECOND) {
      this.window.logged++;
      this.log.warn(fields, "Unix socket connection from another user refused");
      return;
    }
    this.window.suppressed++;
    this.summary ??= setTimeout(() => {
      this.summary = null;
      this.flush();
    }, 1_000);
  }

  private flush(): void {
    if (this.window.suppressed === 0) return;
    this.log.warn({ refused: this.window.suppressed }, "more Unix socket connections from other users refused");
    this.window.suppressed = 0;
  }
}

/**
 * Serves NDJSON, HTTP and WebSocket on a Unix socket, exactly like the TCP port. The socket is
 * 0600 in a directory only this uid can write (connect(2) needs write permission on the socket, so
 * another uid gets EACCES), and where the platform reports peer credentials (Linux, macOS) every
 * connection's peer is checked as well, so loosened modes do not let another user in.
 */
export async function listenUnix(opts: UnixOptions): Promise<UnixListener> {
  const { log } = opts;
  const path = resolve(opts.path);
  const token = opts.token ?? null;
  checkSocketDirectory(dirname(path));
  await claimPath(path);
  const { services } = opts;
  // Any Host: no browser can reach a Unix socket, so DNS rebinding does not apply; Origin still does.
  const http = startHttpFrontend({
    ...opts,
    services,
    policy: { hosts: null, origins: new Set(opts.allowedOrigins ?? []), token, viewer: opts.viewer ?? null },
  });
  const accept: AcceptOptions = {
    label: "Unix socket",
    transport: { kind: "unix", framing: "ndjson" },
    dispatcher: opts.dispatcher,
    services,
    log,
    token,
    httpPath: http.path,
    endOfInputMs: opts.endOfInputMs,
  };
  const peers = PeerCheck.create(log);
  const table = new AcceptTable(accept, {
    limits: { ...DEFAULT_LIMITS, ...opts.limits, keepAliveMs: null },
    log,
    logKey: "unixConnection",
    ...(peers ? { admit: (socket: Socket<unknown>) => peers.admit(socket) } : {}),
  });

  // bind(2) creates the file with the umask's mode; 0177 keeps it 0600 from the first instant.
  const umask = process.umask(0o177);
  let listener: UnixSocketListener<Accepted | undefined>;
  try {
    listener = Bun.listen<Accepted | undefined>({
      unix: path,
      allowHalfOpen: true,
      data: undefined,
      socket: table.handlers,
    });
    chmodSync(path, 0o600);
  } catch (err) {
    await http.stop();
    throw new SocketPathError(`cannot listen on ${path}: ${messageOf(err)}`);
  } finally {
    process.umask(umask);
  }
  const ino = lstatSync(path).ino;
  log.info(
    { socket: path, authentication: token ? "token" : "none", peerCheck: peers ? "uid" : "unavailable" },
    "Unix socket listener accepting (NDJSON, HTTP, WebSocket)",
  );
  if (!peers)
    log.warn(
      { socket: path, platform: process.platform },
      "peer credentials cannot be read here: the socket's file modes alone keep other users out",
    );

  const stop = async () => {
    await table.close(listener, http);
    peers?.stop();
    // Bun unlinks the path on stop; this covers runtimes that do not, and never removes a successor's socket.
    try {
      if (lstatOrNull(path)?.ino === ino) unlinkSync(path);
    } catch {}
  };
  return { path, stop };
}
