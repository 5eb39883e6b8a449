/** Runs the real CLI (source, or DEVICERAIL_TEST_BIN's binary) as a person or script would. */
import { daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temporary working directory for the files commands write by default (removed after the run). */
export const tempCwd = tempDataDir;

/**
 * Runs `devicerail <args>` to completion. The environment is the test daemon's (Android off, quiet
 * logs) on `env.DEVICERAIL_DATA_DIR` or a fresh data directory; colour settings of the outer
 * shell are removed so outputs compare exactly. `input`, when given, is all of stdin.
 */
export async function cli(
  args: string[],
  env: Record<string, string> = {},
  cwd = tempCwd(),
  input?: string,
): Promise<CliRun> {
  const base = daemonEnv({ DEVICERAIL_DATA_DIR: env.DEVICERAIL_DATA_DIR ?? tempDataDir(), ...env });
  if (!("NO_COLOR" in env)) delete base.NO_COLOR;
  if (!("FORCE_COLOR" in env)) delete base.FORCE_COLOR;
  const proc = Bun.spawn(daemonCommand(args), {
    cwd,
    env: base,
    stdin: input === undefined ? "ignore" : new Blob([input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Runs a command that must succeed with JSON on stdout, and returns it parsed. */
export async function cliJson<T = any>(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<T> {
  const r = await cli([...args, "--json"], env, cwd);
  if (r.code !== 0) throw new Error(`devicerail ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
