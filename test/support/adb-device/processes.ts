/**
 * The simulated phone's process table: every shell adbd starts and every command it runs is a
 * process with a pid, listed by `ps -A` and ended by `kill <pid>`. A process ends when its command
 * returns or when a signal reaches it; which signals a closed adb stream sends is decided by
 * adbd-services.ts (legacy `shell:` sends none, see there).
 */

export type Signal = "SIGTERM" | "SIGKILL" | "SIGPIPE" | "SIGHUP";

/** 128 + the signal number: the status sh reports for a process a signal ended. */
export const SIGNAL_STATUS: Readonly<Record<Signal, number>> = {
  SIGHUP: 129,
  SIGKILL: 137,
  SIGPIPE: 141,
  SIGTERM: 143,
};

export interface PhoneProcess {
  readonly pid: number;
  readonly ppid: number;
  user: string;
  /** What `ps` shows as NAME; changes on `exec`. */
  name: string;
  /** Aborted with the Signal that ends the process. */
  readonly controller: AbortController;
  /** A process that only sits in the table (another tool's agent); nothing runs in it. */
  readonly resident: boolean;
}

/**
 * `ps -A` as toybox prints it on Android 8+ (no -o): header and column widths as in the Nexus 6P /
 * Android 8.1 output quoted in openstf/stf#806 ("USER           PID  PPID     VSZ    RSS WCHAN
 * ADDR S NAME", NAME padded to 27 columns in the header, rows unpadded), WCHAN and ADDR `0` as in
 * the `ps -A` rows of remote-android/redroid-doc#27. VSZ and RSS are made-up sizes of the right shape.
 */
export const PS_HEADER = `USER           PID  PPID     VSZ    RSS WCHAN            ADDR S ${"NAME".padEnd(27)}`;

export function psRow(p: {
  user: string;
  pid: number;
  ppid: number;
  vsz: number;
  rss: number;
  wchan: string;
  addr: string;
  state: string;
  name: string;
}): string {
  return `${p.user.padEnd(8)} ${String(p.pid).padStart(9)} ${String(p.ppid).padStart(5)} ${String(p.vsz).padStart(7)} ${String(p.rss).padStart(6)} ${p.wchan.padEnd(10)} ${p.addr.padStart(10)} ${p.state} ${p.name}`;
}

/** Processes that are always there: what a phone's `ps -A` starts with (a small part of it). */
const SYSTEM: readonly { user: string; pid: number; ppid: number; name: string }[] = [
  { user: "root", pid: 1, ppid: 0, name: "init" },
  { user: "root", pid: 562, ppid: 1, name: "zygote64" },
  { user: "system", pid: 1105, ppid: 562, name: "system_server" },
  { user: "shell", pid: 3187, ppid: 1, name: "adbd" },
];
export const ADBD_PID = 3187;

export class ProcessTable {
  private nextPid = 7000;
  readonly running = new Map<number, PhoneProcess>();

  /**
   * A new process. With `follow` (its parent's signal) it ends with the parent when the session
   * ends (the stream's close where that hangs up, SIGPIPE), but not when `kill` reaches only the
   * parent: signalling a shell does not end the command it waits for.
   */
  spawn(
    name: string,
    ppid: number,
    opts: { user?: string; follow?: AbortSignal; resident?: boolean } = {},
  ): PhoneProcess {
    const controller = new AbortController();
    const p: PhoneProcess = {
      pid: this.nextPid++,
      ppid,
      user: opts.user ?? "shell",
      name,
      controller,
      resident: opts.resident ?? false,
    };
    const follow = opts.follow;
    if (follow) {
      const killedOnly = () => follow.reason === "SIGTERM" || follow.reason === "SIGKILL" || follow.reason === "SIGHUP";
      if (follow.aborted) {
        if (!killedOnly()) controller.abort(follow.reason);
      } else follow.addEventListener("abort", () => killedOnly() || controller.abort(follow.reason), { once: true });
    }
    this.running.set(p.pid, p);
    return p;
  }

  exit(p: PhoneProcess): void {
    if (this.running.get(p.pid) === p) this.running.delete(p.pid);
  }

  /** Delivers `signal`; false when there is no such process. A resident process just leaves the table. */
  kill(pid: number, signal: Signal = "SIGTERM"): boolean {
    const p = this.running.get(pid);
    if (!p) return false;
    if (!p.controller.signal.aborted) p.controller.abort(signal);
    if (p.resident) this.running.delete(pid);
    return true;
  }

  /** Ends everything (the simulated phone is thrown away), so no hung command outlives a test. */
  killAll(): void {
    for (const pid of [...this.running.keys()]) this.kill(pid, "SIGKILL");
  }

  byName(name: string): PhoneProcess[] {
    return [...this.running.values()].filter((p) => p.name === name);
  }

  /** The full `ps -A` text, `self` (the ps process itself) shown running. */
  ps(self: number | null): string {
    const rows = [
      ...SYSTEM.map((s) => ({ ...s, state: "S" })),
      ...[...this.running.values()].map((p) => ({
        user: p.user,
        pid: p.pid,
        ppid: p.ppid,
        name: p.name,
        state: p.pid === self ? "R" : "S",
      })),
    ].sort((a, b) => a.pid - b.pid);
    return `${[PS_HEADER, ...rows.map((r) => psRow({ ...r, vsz: r.pid === 1 ? 14772 : 10488, rss: r.pid === 1 ? 2836 : 1936, wchan: "0", addr: "0" }))].join("\n")}\n`;
  }
}
