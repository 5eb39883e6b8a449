/**
 * Shared pieces of the fake simctl: CoreSimulator's error texts (which exit with their code modulo
 * 256: 405 → 149, 3 → 3, as the recorded samples show), device lookup and the per-call wrapper
 * that applies faults before the state transaction.
 */
import { CliExit, type CliContext } from "./fake-cli.ts";
import { findDevice, readState, type SimDevice, type SimState, transact } from "./sim-state.ts";

export type SimctlHandler = (ctx: CliContext, args: string[]) => Promise<number>;

export function simError(domain: string, code: number, ...lines: string[]): { stderr: string; exitCode: number } {
  return {
    stderr: `An error was encountered processing the command (domain=${domain}, code=${code}):\n${lines.join("\n")}\n`,
    exitCode: code & 0xff,
  };
}
export const SIM = "com.apple.CoreSimulator.SimError";
export const lookupError = (state: string) => simError(SIM, 405, `Unable to lookup in current state: ${state}`);
export const invalidDevice = (ref: string) => ({ stderr: `Invalid device: ${ref}\n`, exitCode: 148 });
export const NO_BOOTED = { stderr: "No devices are booted.\n", exitCode: 149 };

export function fail(ctx: CliContext, e: { stderr: string; exitCode: number }): never {
  ctx.err(e.stderr);
  throw new CliExit(e.exitCode);
}

export function unhandled(ctx: CliContext, what: string): never {
  fail(ctx, { stderr: `fake xcrun: unhandled ${what}\n`, exitCode: 1 });
}

/** The device a subcommand names, or the exit it fails with; `booted` requires it to be Booted. */
export function deviceIn(ctx: CliContext, state: SimState, ref: string | undefined, booted: boolean): SimDevice {
  if (!ref) unhandled(ctx, `simctl ${ctx.argv.slice(1).join(" ")} (missing device)`);
  const d = findDevice(state, ref);
  if (!d) fail(ctx, ref === "booted" ? NO_BOOTED : invalidDevice(ref));
  if (booted && d.state !== "Booted") fail(ctx, lookupError(d.state));
  return d;
}

/** Resolves the device, applies faults, then runs `fn` on it inside one state transaction. */
export async function onDevice<T>(
  ctx: CliContext,
  sub: string,
  ref: string | undefined,
  booted: boolean,
  fn: (d: SimDevice, s: SimState) => T,
): Promise<T> {
  const udid = deviceIn(ctx, readState(ctx.dir), ref, false).udid;
  await ctx.faults(sub, udid, () => lookupError("Shutdown"));
  return transact(ctx.dir, (s) => fn(deviceIn(ctx, s, udid, booted), s));
}

export function option(args: string[], name: string): { value: string | undefined; rest: string[] } {
  let value: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
    else if (a === name && i + 1 < args.length) value = args[++i];
    else rest.push(a);
  }
  return { value, rest };
}
