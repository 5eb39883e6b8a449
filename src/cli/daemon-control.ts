/**
 * One daemon per data directory, every command its client (the adb model): finding the daemon
 * through `<data dir>/listen.json`, starting one in the background when none answers, stopping it,
 * and recovering what a dead one left behind.
 */
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "../client/client.ts";
import { type Endpoint, endpointText } from "../client/endpoint.ts";
import { hello } from "../client/hello.ts";
import { type SocketChannel, openSocketClient } from "../client/socket.ts";
import type { HelloResult } from "../protocol/types/handshake.ts";
import { ensurePrivateDir } from "../server/data-dir.ts";
import { VERSION } from "../server/version.ts";
import { type DaemonRecord, isAlive, readRecord, recordPath } from "../server/daemon-record.ts";
import { readLocalToken } from "../server/local-token.ts";
import { CliError, EXIT } from "./output.ts";

/** sun_path holds 108 bytes on Linux and 104 on macOS; a longer data directory gets a TCP port only. */
const MAX_SOCKET_PATH = 100;
/** How long a command waits for a daemon it started to answer. */
export const START_WAIT_MS = 15_000;
/**
 * How long a command whose daemon lost the data directory's lock waits for the winner's record
 * (written right after it takes the lock, so a missing one means a daemon of an older version).
 */
const RACE_WAIT_MS = 3_000;

export const logPath = (dataDir: string) => join(dataDir, "daemon.log");

/** The socket a daemon started by a command listens on, or null where none can be (Windows, a long path). */
export function defaultSocket(dataDir: string): string | null {
  const path = join(dataDir, "daemon.sock");
  return process.platform === "win32" || Buffer.byteLength(path) > MAX_SOCKET_PATH ? null : path;
}

const endpointsOf = (r: DaemonRecord): Endpoint[] => [
  ...(r.socket ? [{ socket: r.socket }] : []),
  ...(r.host !== undefined && r.port !== undefined ? [{ host: r.host, port: r.port }] : []),
];

export interface Attached {
  /** The connection the hello was said on, for the command's calls. */
  client: Client;
  channel: SocketChannel;
  hello: HelloResult;
  record: DaemonRecord;
  endpoint: Endpoint;
  /** The credential `endpoint` was opened with, for the command's other requests there (HTTP, MCP); never printed. */
  token: string | null;
  /** True when this command started the daemon. */
  started: boolean;
}

async function helloOn(
  endpoint: Endpoint,
  token: string | null,
): Promise<{ client: Client; channel: SocketChannel; hello: HelloResult }> {
  const { client, channel } = await openSocketClient(endpoint, token);
  try {
    return { client, channel, hello: await hello(client, { name: "devicerail-cli", version: VERSION }, "cli") };
  } catch (e) {
    channel.terminate();
    throw e;
  }
}

/**
 * What a client presents on one of the record's endpoints. A daemon whose TCP port requires the
 * data directory's token names its file; its Unix socket needs none (it checks the peer's uid).
 * Otherwise DEVICERAIL_TOKEN, when set, is what the daemon was given (and it wins on both).
 */
export function credentialFor(
  record: DaemonRecord,
  endpoint: Endpoint,
  env: Record<string, string | undefined>,
): string | null {
  if (record.tokenFile) return "socket" in endpoint ? null : readLocalToken(record.tokenFile);
  return env.DEVICERAIL_TOKEN || null;
}

/**
 * Whether the endpoint serves a hello to a client that presents nothing, as any other local user
 * could; false when it refuses or closes the connection, or says nothing within `ms`.
 */
export async function answersWithoutCredential(endpoint: Endpoint, ms = 2_000): Promise<boolean> {
  const attempt = helloOn(endpoint, null).then(({ client }) => {
    void client.close();
    return true;
  });
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref?.());
  return Promise.race([attempt.catch(() => false), timeout]);
}

/** Connects to the daemon the record names; null when none of its endpoints answers a hello. */
async function reach(
  record: DaemonRecord,
  env: Record<string, string | undefined>,
): Promise<Omit<Attached, "started"> | null> {
  for (const endpoint of endpointsOf(record)) {
    const token = credentialFor(record, endpoint, env);
    try {
      return { ...(await helloOn(endpoint, token)), record, endpoint, token };
    } catch {}
  }
  return null;
}

/** A dead daemon's record and socket would make the next one look taken; only files of a pid that is gone are removed. */
function clearStale(dataDir: string, record: DaemonRecord): void {
  if (isAlive(record.pid)) return;
  for (const path of [recordPath(dataDir), record.socket]) {
    try {
      if (path && existsSync(path)) unlinkSync(path);
    } catch {}
  }
}

/** The command line that runs this same devicerail: the compiled binary, or Bun with the entry script. */
function selfCommand(): string[] {
  return Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main)
    ? [process.execPath]
    : [process.execPath, Bun.main];
}

/**
 * Starts `devicerail serve` on the data directory in the background: its own session and process
 * group (a Ctrl-C in this terminal does not reach it), output to daemon.log, the environment of
 * this command (the daemon is configured like the first command that started it).
 */
function spawnDaemon(
  dataDir: string,
  env: Record<string, string | undefined>,
): { pid: number | undefined; exited: Promise<number | null> } {
  const socket = defaultSocket(dataDir);
  // The TCP port is for what cannot use the socket (a browser, Windows, a long path): with a token
  // only. DEVICERAIL_RPC_LISTEN picks its address, as it does for `serve` (config.ts); serve checks it.
  const listen = env.DEVICERAIL_RPC_LISTEN || "127.0.0.1:0";
  const args = ["serve", "--listen", listen, "--local-token", ...(socket ? ["--socket", socket] : [])];
  // The daemon makes (and checks) the folder itself; the log just needs it to exist first.
  ensurePrivateDir(dataDir);
  const log = openSync(logPath(dataDir), "a", 0o600);
  const [cmd, ...rest] = selfCommand();
  // Bun.spawn rather than node:child_process, which alone costs a client command about 2 MiB at start.
  const child = Bun.spawn([cmd as string, ...rest, ...args], {
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...env, DEVICERAIL_DATA_DIR: dataDir },
  });
  closeSync(log);
  child.unref();
  return { pid: child.pid, exited: child.exited.then((code) => code) };
}

/** The last lines the daemon logged, for a start-up failure's message. */
function logTail(dataDir: string, from: number): string {
  try {
    const text = readFileSync(logPath(dataDir), "utf8").slice(from);
    const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.startsWith('{"listening"'));
    const messages = lines.map((l) => {
      try {
        const j = JSON.parse(l) as { msg?: string };
        return j.msg ?? l;
      } catch {
        return l;
      }
    });
    return messages.slice(-3).join("\n  ");
  } catch {
    return "";
  }
}

const logSize = (dataDir: string) => {
  try {
    return statSync(logPath(dataDir)).size;
  } catch {
    return 0;
  }
};

/** Why a daemon may have refused this command's credential. */
function tokenHint(record: DaemonRecord, env: Record<string, string | undefined>): string {
  if (record.tokenFile)
    return readLocalToken(record.tokenFile) === null ? ` (its token file ${record.tokenFile} cannot be read)` : "";
  return env.DEVICERAIL_TOKEN ? "" : " (if it requires a token, set DEVICERAIL_TOKEN)";
}

const unreachable = (dataDir: string, pid?: number) =>
  new CliError(
    `${dataDir} is held by a devicerail daemon${pid ? ` (pid ${pid}) serving stdio only` : " that commands cannot reach (one serving stdio only?)"}; stop it, or set DEVICERAIL_DATA_DIR to another folder`,
  );

/**
 * The daemon of this data directory, connected and greeted: the one that runs (or is starting),
 * else (with `start`) a new one started in the background. A record left by a dead daemon is
 * cleared. Two commands may start daemons at once: the one that takes the data directory's lock
 * serves both, and the other's daemon exits.
 */
export async function attach(
  dataDir: string,
  env: Record<string, string | undefined>,
  opts: { start: boolean; waitMs?: number },
): Promise<Attached> {
  const waitMs = opts.waitMs ?? START_WAIT_MS;
  const deadline = Date.now() + waitMs;
  let child: { pid: number | undefined; exited: Promise<number | null> } | null = null;
  let exitCode: number | null | undefined;
  let from = 0;
  let lockedSince: number | undefined;
  for (;;) {
    const record = readRecord(dataDir);
    if (record && isAlive(record.pid)) {
      const reached = await reach(record, env);
      if (reached) return { ...reached, started: child !== null && child.pid === record.pid };
      if (record.stdio) throw unreachable(dataDir, record.pid);
      if (record.state !== "starting")
        throw new CliError(
          `a devicerail daemon (pid ${record.pid}) holds ${dataDir} but does not answer on ${endpointsOf(record).map(endpointText).join(" or ") || "any socket"}${tokenHint(record, env)}`,
        );
      // Starting: its record names endpoints once it listens.
    } else {
      if (record) clearStale(dataDir, record);
      if (child === null) {
        if (!opts.start)
          throw new CliError(
            `no devicerail daemon runs on ${dataDir}; start one with \`devicerail daemon start\``,
            EXIT.notRunning,
          );
        from = logSize(dataDir);
        child = spawnDaemon(dataDir, env);
        void child.exited.then((code) => (exitCode = code));
      } else if (exitCode !== undefined) {
        const why = logTail(dataDir, from);
        if (!/another devicerail daemon is using/.test(why))
          // A daemon that refused its configuration (exit 2) is the same usage error for this command.
          throw new CliError(
            `the devicerail daemon could not start (exit ${exitCode})${why ? `:\n  ${why}` : ""}\n  (its log: ${logPath(dataDir)})`,
            exitCode === EXIT.usage ? EXIT.usage : EXIT.runtime,
          );
        // The lock's holder writes its record at once; one that never does predates records.
        lockedSince ??= Date.now();
        if (Date.now() - lockedSince > RACE_WAIT_MS) throw unreachable(dataDir);
      }
    }
    if (Date.now() > deadline)
      throw new CliError(
        `the devicerail daemon did not answer within ${Math.round(waitMs / 1000)} s; see ${logPath(dataDir)}`,
      );
    await Bun.sleep(25);
  }
}

/** Stops the daemon of this data directory (SIGTERM, then waits for it to exit); false when none ran. */
export async function stopDaemon(dataDir: string, waitMs = 10_000): Promise<{ stopped: boolean; pid?: number }> {
  const record = readRecord(dataDir);
  if (!record || !isAlive(record.pid)) {
    if (record) clearStale(dataDir, record);
    return { stopped: false };
  }
  process.kill(record.pid, "SIGTERM");
  const deadline = Date.now() + waitMs;
  while (isAlive(record.pid)) {
    if (Date.now() > deadline)
      throw new CliError(`the devicerail daemon (pid ${record.pid}) did not stop within ${waitMs / 1000} s`);
    await Bun.sleep(25);
  }
  clearStale(dataDir, record);
  return { stopped: true, pid: record.pid };
}

/**
 * Whether two devicerail versions may differ in what they do: their package versions differ, or
 * both carry a commit (`0.1.0+abc1234`, stamped into binaries by scripts/build.ts) and the commits
 * differ. A run from source has no commit ("unknown": a binary built outside a checkout), so a
 * binary and a source run of the same package version count as the same: the usual case is a
 * binary built from the checkout whose daemon is running.
 */
export function versionsDiffer(a: string, b: string): boolean {
  const split = (v: string) => {
    const [base, commit] = v.split("+", 2);
    return { base, commit: commit && commit !== "unknown" ? commit : null };
  };
  const x = split(a);
  const y = split(b);
  return x.base !== y.base || (x.commit !== null && y.commit !== null && x.commit !== y.commit);
}

/** The warning for a daemon of another version (it may lack what this CLI expects). */
export function versionMismatch(hello: HelloResult, mine = VERSION): string | null {
  const theirs = hello.server.version;
  return !versionsDiffer(theirs, mine)
    ? null
    : `the running devicerail daemon is version ${theirs}, this command is ${mine}; restart it with \`devicerail daemon stop\``;
}
