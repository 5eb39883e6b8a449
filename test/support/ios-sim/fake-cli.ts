/**
 * The process side of a fake tool: argv and stdin recorded in the shared log, stdout and stderr
 * buffered and written at exit (so the malformed-output fault can cut stdout), and the fault
 * switches applied once the command and device are known.
 */
import { appendLog, type Fault, readState, stateDirFromEnv, type Tool, takeFaults, transact } from "./sim-state.ts";
import { shutdownDevice } from "./lifecycle.ts";

export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export interface CliContext {
  readonly tool: Tool;
  readonly dir: string;
  readonly id: string;
  readonly argv: string[];
  out(data: string | Uint8Array): void;
  err(text: string): void;
  /** Reads all of stdin (once) and records it in the log. */
  stdin(): Promise<string>;
  /** Applies the faults for this call; returns only if none of them ends it. */
  faults(
    command: string,
    udid: string | null,
    midCall: (udid: string) => { stderr: string; exitCode: number },
  ): Promise<void>;
  /** Cut stdout in half at exit (malformed-json fault). */
  malformed: boolean;
  /** Set by a command that must not exit yet (recordVideo); it resolves with the exit code. */
  finishing?: Promise<number>;
}

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Never settles; the process stays until a signal ends it. */
export function hangForever(): Promise<never> {
  setInterval(() => undefined, 1 << 30);
  return new Promise<never>(() => undefined);
}

export async function runCli(tool: Tool, main: (ctx: CliContext) => Promise<number>): Promise<never> {
  const dir = stateDirFromEnv();
  const argv = process.argv.slice(2);
  const id = `${tool}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const childEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith("SIMCTL_CHILD_")) as [string, string][],
  );
  appendLog(dir, { t: "start", id, tool, argv, childEnv, pid: process.pid });
  const stdout: Uint8Array[] = [];
  let stderr = "";
  let stdinText: string | null = null;

  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(sig, () => {
      if (sig === "SIGINT" && ctx.finishing) return;
      appendLog(dir, { t: "end", id, exitCode: null, signal: sig });
      process.removeAllListeners(sig);
      process.kill(process.pid, sig);
    });
  }

  const ctx: CliContext = {
    tool,
    dir,
    id,
    argv,
    malformed: false,
    out: (data) => void stdout.push(typeof data === "string" ? encoder.encode(data) : data),
    err: (text) => void (stderr += text),
    async stdin() {
      if (stdinText === null) {
        stdinText = await Bun.stdin.text();
        appendLog(dir, { t: "stdin", id, data: stdinText });
      }
      return stdinText;
    },
    async faults(command, udid, midCall) {
      let hits: Fault[] = [];
      if (readState(dir).faults.length > 0) hits = transact(dir, (s) => takeFaults(s, tool, command, udid));
      for (const f of hits) if (f.mode === "slow") await sleep(f.ms ?? 1000);
      if (hits.some((f) => f.mode === "hang")) await hangForever();
      const fail = hits.find((f) => f.mode === "fail");
      if (fail) {
        if (fail.stdout) ctx.out(fail.stdout);
        ctx.err(fail.stderr ?? "");
        throw new CliExit(fail.exitCode ?? 1);
      }
      const down = hits.find((f) => f.mode === "shutdown-mid-call");
      if (down && udid) {
        await sleep(down.ms ?? 20);
        transact(dir, (s) => {
          const d = s.devices.find((x) => x.udid === udid);
          if (d) shutdownDevice(d);
        });
        const e = midCall(udid);
        ctx.err(e.stderr);
        throw new CliExit(e.exitCode);
      }
      if (hits.some((f) => f.mode === "malformed-json")) ctx.malformed = true;
    },
  };

  let code: number;
  try {
    code = await main(ctx);
    if (ctx.finishing) code = await ctx.finishing;
  } catch (e) {
    if (e instanceof CliExit) code = e.code;
    else {
      ctx.err(`fake ${tool}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      code = 70;
    }
  }
  let bytes = Bun.concatArrayBuffers(stdout, Infinity, true);
  if (ctx.malformed) bytes = bytes.subarray(0, Math.floor(bytes.length / 2));
  if (bytes.length > 0) await Bun.write(Bun.stdout, bytes);
  if (stderr) await Bun.write(Bun.stderr, stderr);
  appendLog(dir, { t: "end", id, exitCode: code });
  process.exit(code);
}
