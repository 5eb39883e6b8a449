import { type CallContext, budgetMs, whenAborted } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";

export interface ToolResult {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

export const platformError = (platformCode: string, retryable: boolean, detail?: string, message?: string) =>
  new DriverError("platform_error", {
    platformCode,
    retryable,
    ...(detail ? { detail } : {}),
    ...(message ? { message } : {}),
  });

/**
 * Runs a command-line tool (axe, xcrun for what node-simctl cannot do) under the context: killed
 * on abort or at the earlier of the deadline and `ceilingMs`, with `stdin` as its only input —
 * the one way a secret may reach it.
 */
export async function runTool(
  argv: string[],
  ctx: CallContext,
  opts: { stdin?: string; ceilingMs: number; env?: Record<string, string | undefined> },
): Promise<ToolResult> {
  if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(argv, {
      stdin: opts.stdin === undefined ? "ignore" : "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: opts.env,
    });
  } catch (err) {
    throw platformError("ios_tool_not_found", false, `${argv[0]}: ${(err as Error).message}`);
  }
  if (opts.stdin !== undefined) {
    const sink = proc.stdin as import("bun").FileSink;
    sink.write(opts.stdin);
    await sink.end();
  }
  let why: "cancelled" | "timeout" | null = null;
  const kill = (reason: "cancelled" | "timeout") => {
    why ??= reason;
    proc.kill("SIGKILL");
  };
  // Also when it was aborted while stdin was being written.
  const unlisten = whenAborted(ctx.signal, () => kill("cancelled"));
  const budget = budgetMs(ctx, opts.ceilingMs);
  const timer = setTimeout(() => kill("timeout"), budget);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout as ReadableStream).bytes(),
      new Response(proc.stderr as ReadableStream).text(),
      proc.exited,
    ]);
    if (why === "cancelled") throw new DriverError("driver_cancelled");
    if (why === "timeout") throw new DriverError("driver_timed_out");
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    unlisten();
  }
}
