/**
 * The state file and command log behind sim-state.ts. Every change goes through `transact` (a
 * mkdir lock, taken over when its holder died, plus write-and-rename), so concurrent fake
 * invocations never lose an update; plain reads see the last complete file.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { SimState } from "./sim-state.ts";

export const STATE_ENV = "DEVICERAIL_FAKE_IOS_STATE";

const statePath = (dir: string) => join(dir, "state.json");
const lockPath = (dir: string) => join(dir, "state.lock");
export const logPath = (dir: string) => join(dir, "log.jsonl");

export function stateDirFromEnv(): string {
  const dir = process.env[STATE_ENV];
  if (!dir)
    throw new Error(`${STATE_ENV} is not set: the fake iOS tools need a state directory (startFakeSimulators sets it)`);
  return dir;
}

export function writeState(dir: string, state: SimState): void {
  const tmp = join(dir, `state.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`);
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, statePath(dir));
}

/** Booting devices whose boot time has passed are Booted; a reader never sees a stale `Booting`. */
function settle(state: SimState, now = Date.now()): boolean {
  let changed = false;
  for (const d of state.devices) {
    if (d.state === "Booting" && d.bootCompletesAt !== null && now >= d.bootCompletesAt) {
      d.state = "Booted";
      d.bootCompletesAt = null;
      changed = true;
    }
  }
  return changed;
}

export function readState(dir: string): SimState {
  const state = JSON.parse(readFileSync(statePath(dir), "utf8")) as SimState;
  settle(state);
  return state;
}

const LOCK_TIMEOUT_MS = 10_000;
const STALE_LOCK_MS = 5_000;
/** A lock whose owner is gone is taken over once it is this old (a live holder keeps it for milliseconds). */
const DEAD_OWNER_LOCK_MS = 250;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function acquire(dir: string): void {
  const lock = lockPath(dir);
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "owner"), String(process.pid));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    // A holder that died (killed mid-transaction) leaves the lock behind: take it over. The lock's
    // age is read after its owner: an owner that just finished and exited may already have been
    // followed by a new holder, whose fresh lock must not be taken for the dead one's.
    let stale = false;
    try {
      const owner = Number(readFileSync(join(lock, "owner"), "utf8"));
      stale =
        owner > 0 &&
        owner !== process.pid &&
        !pidAlive(owner) &&
        Date.now() - statSync(lock).mtimeMs > DEAD_OWNER_LOCK_MS;
    } catch {
      try {
        stale = Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS;
      } catch {
        continue;
      }
    }
    if (stale) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`fake Simulator: state lock ${lock} held for more than ${LOCK_TIMEOUT_MS} ms`);
    Bun.sleepSync(2);
  }
}

/** Runs `fn` on the current state under the lock and saves what it leaves. */
export function transact<T>(dir: string, fn: (state: SimState) => T): T {
  acquire(dir);
  try {
    const state = JSON.parse(readFileSync(statePath(dir), "utf8")) as SimState;
    settle(state);
    const result = fn(state);
    writeState(dir, state);
    return result;
  } finally {
    rmSync(lockPath(dir), { recursive: true, force: true });
  }
}

export function initStateDir(dir: string, state: SimState): void {
  mkdirSync(dir, { recursive: true });
  writeState(dir, state);
  if (!existsSync(logPath(dir))) writeFileSync(logPath(dir), "");
}

// ---- command log ----

export type Tool = "xcrun" | "axe" | "wda";

/** One invocation as the device saw it. */
export interface CommandRecord {
  id: string;
  tool: Tool;
  /** For xcrun and axe the argv after the program name; for WDA `[METHOD, path]`. */
  argv: string[];
  /** Every byte read from stdin (UTF-8), or the request body for WDA; null when nothing was read. */
  stdin: string | null;
  /** `SIMCTL_CHILD_*` variables the caller passed (simctl hands them to the launched app). */
  childEnv: Record<string, string>;
  pid: number;
  /** null while running, or when it never finished (hang, killed). */
  exitCode: number | null;
  signal?: string | null;
}

type LogLine =
  | { t: "start"; id: string; tool: Tool; argv: string[]; childEnv: Record<string, string>; pid: number }
  | { t: "stdin"; id: string; data: string }
  | { t: "end"; id: string; exitCode: number | null; signal?: string | null };

export function appendLog(dir: string, line: LogLine): void {
  appendFileSync(logPath(dir), `${JSON.stringify(line)}\n`);
}

export function readLog(dir: string): CommandRecord[] {
  const records = new Map<string, CommandRecord>();
  for (const raw of readFileSync(logPath(dir), "utf8").split("\n")) {
    if (!raw) continue;
    const line = JSON.parse(raw) as LogLine;
    if (line.t === "start")
      records.set(line.id, {
        id: line.id,
        tool: line.tool,
        argv: line.argv,
        stdin: null,
        childEnv: line.childEnv,
        pid: line.pid,
        exitCode: null,
      });
    const rec = records.get(line.id);
    if (!rec) continue;
    if (line.t === "stdin") rec.stdin = (rec.stdin ?? "") + line.data;
    if (line.t === "end") {
      rec.exitCode = line.exitCode;
      if (line.signal) rec.signal = line.signal;
    }
  }
  return [...records.values()];
}
