/**
 * `<data dir>/listen.json`: which daemon holds the data directory and where it can be reached.
 * The daemon writes it as soon as it holds the database lock (`state: "starting"`), again once it
 * listens (`"serving"`, with its endpoints), and removes it on a clean stop. A daemon serving stdio
 * writes one with `stdio: true` and no endpoints: commands then know at once that they cannot
 * reach it, instead of guessing from a refused lock.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "./version.ts";
import { replacePrivateFile } from "./private-file.ts";

export interface DaemonRecord {
  pid: number;
  version?: string;
  startedAtMs: number;
  /** Missing in records of older daemons: read as "serving". */
  state?: "starting" | "serving";
  /** Serves one client on stdin/stdout; no command can attach to it. */
  stdio?: boolean;
  host?: string;
  port?: number;
  socket?: string;
  /**
   * Set when the TCP port requires the data directory's token: the file to read it from
   * (local-token.ts). The record is read by tools that need no secret, so it never holds one.
   */
  tokenFile?: string;
}

export type Endpoints = Pick<DaemonRecord, "host" | "port" | "socket" | "tokenFile">;

export const recordPath = (dataDir: string) => join(dataDir, "listen.json");

export function readRecord(dataDir: string): DaemonRecord | null {
  try {
    const r = JSON.parse(readFileSync(recordPath(dataDir), "utf8")) as DaemonRecord;
    return Number.isInteger(r.pid) ? r : null;
  } catch {
    return null;
  }
}

/**
 * Whether the process runs. A daemon that has exited stays a zombie until its parent reaps it, and
 * a daemon started by a command has init as its parent: in a container whose PID 1 does not reap
 * (a shell, a test runner) that is forever, so on Linux a zombie counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; comm may hold spaces and parentheses, so the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/** This process's record (0600; a reader sees no file or a whole one). */
export function writeRecord(
  dataDir: string,
  fields: { state: "starting" | "serving"; stdio?: boolean } & Endpoints,
  startedAtMs: number,
): void {
  const record: DaemonRecord = { pid: process.pid, version: VERSION, startedAtMs, ...fields };
  replacePrivateFile(recordPath(dataDir), `${JSON.stringify(record)}\n`);
}

/** Removed on a clean stop, unless another daemon has written its own meanwhile. */
export function removeRecord(dataDir: string): void {
  if (readRecord(dataDir)?.pid !== process.pid) return;
  try {
    unlinkSync(recordPath(dataDir));
  } catch {}
}
