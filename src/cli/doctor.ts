/** `devicerail doctor [--smoke]`: what is wrong and how to fix it, and the latency figures of one device. */
import { type Config, ConfigError, loadConfig } from "../server/config.ts";
import type { Observation } from "../protocol/types/observation.ts";
import {
  type CoreClient,
  capabilities,
  execute,
  inSession,
  observe,
  route,
  selectedDevice,
  withClient,
} from "./client.ts";
import { type Check, accessChecks, adbChecks, dataDirCheck, listenCheck, iosChecks } from "./doctor-checks.ts";
import { RemoteError } from "../client/remote-error.ts";
import { CliError, EXIT, out, printJson, withSpinner } from "./output.ts";
import { stdout } from "./std-streams.ts";

type Env = Record<string, string | undefined>;

/**
 * The configuration, with each invalid setting reported as a failed check and left at its
 * default, so one typo does not hide every other finding.
 */
function configChecks(env: Env): { config: Config; checks: Check[] } {
  const checks: Check[] = [];
  const rest = { ...env };
  for (;;) {
    try {
      return { config: loadConfig(rest), checks };
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const key = /^invalid ([A-Za-z0-9_]+)=/.exec(e.message)?.[1];
      checks.push({
        name: "configuration",
        status: "fail",
        detail: e.message,
        fix: `correct ${key ?? "the setting"} or unset it`,
      });
      if (!key || !(key in rest)) return { config: loadConfig({}), checks };
      delete rest[key];
    }
  }
}

export interface OperationStats {
  p50Ms: number;
  p95Ms: number;
}
export interface SmokeResult {
  deviceId: string;
  cycles: number;
  observe: OperationStats;
  /** Null unless `--tap X,Y` asked for taps: doctor touches nothing on a device by default. */
  tap: OperationStats | null;
  /** Where each cycle tapped (`--tap`), or null. */
  tapAt: { x: number; y: number } | null;
  /**
   * What a bug report needs from the device side (docs/ios-on-a-mac.md asks for this paste): the
   * device as listed, the actions it offers, the last observation's viewport, omissions and
   * driver metadata (backend, tool versions, scale and its source, tree errors), and the last
   * tap's output.
   */
  report: {
    device: { name: string; platform: string; osVersion: string | null } | null;
    actions: string[];
    observation: {
      viewport: Observation["viewport"];
      screenshotOmission: string | null;
      uiSnapshotOmission: string | null;
      uiNodes: number | null;
      metadata: Observation["metadata"];
    };
    tapOutput: unknown;
  };
}

/** Nearest-rank percentile of ascending samples, to 0.1 ms. */
export function percentile(sorted: number[], p: number): number {
  const v = sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return Math.round(v * 10) / 10;
}

const stats = (samples: number[]): OperationStats => {
  const s = [...samples].sort((a, b) => a - b);
  return { p50Ms: percentile(s, 50), p95Ms: percentile(s, 95) };
};

/**
 * N cycles in one Session: an observation each, and a tap at `tapAt` when given. A tap on an
 * unknown screen can press anything (a "Delete" button, a payment), so there is none by default.
 */
async function smoke(
  c: CoreClient,
  deviceId: string | undefined,
  cycles: number,
  tapAt: { x: number; y: number } | null,
): Promise<SmokeResult> {
  await route(c, deviceId);
  const times = { observe: [] as number[], tap: [] as number[] };
  let last: Observation | null = null;
  let tapOutput: unknown = null;
  let actions: string[] = [];
  await inSession(c, async () => {
    actions = (await capabilities(c)).map((a) => a.name);
    for (let i = 0; i < cycles; i++) {
      let t = performance.now();
      const o = await observe(c);
      last = o;
      times.observe.push(performance.now() - t);
      if (!tapAt) continue;
      t = performance.now();
      tapOutput = (await execute(c, "tap", tapAt)).output;
      times.tap.push(performance.now() - t);
    }
  });
  const id = await selectedDevice(c);
  const listed = (await c.call("devices.list")).devices.find((d) => d.id === id);
  const o = last as Observation | null;
  return {
    deviceId: id,
    cycles,
    observe: stats(times.observe),
    tap: tapAt ? stats(times.tap) : null,
    tapAt,
    report: {
      device: listed
        ? { name: listed.name, platform: listed.platform.kind, osVersion: listed.osVersion ?? null }
        : null,
      actions,
      observation: {
        viewport: o?.viewport ?? { width: 0, height: 0, scaleFactor: 1 },
        screenshotOmission: o?.screenshotOmission ?? null,
        uiSnapshotOmission: o?.uiSnapshotOmission ?? null,
        uiNodes: o?.uiSnapshot?.nodeCount ?? null,
        metadata: o?.metadata ?? {},
      },
      tapOutput,
    },
  };
}

const SYMBOL = { ok: "ok  ", warn: "warn", fail: "fail", skip: "skip" } as const;

function printChecks(checks: Check[]): void {
  const st = out();
  const paint = { ok: st.green, warn: st.yellow, fail: st.red, skip: st.dim };
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(`${paint[c.status](SYMBOL[c.status])}  ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.fix) lines.push(`${" ".repeat(width + 8)}${st.dim("fix:")} ${c.fix}`);
  }
  const count = (s: Check["status"]) => checks.filter((c) => c.status === s).length;
  lines.push("", `${count("fail")} failed, ${count("warn")} warning(s), ${count("ok")} ok`);
  stdout.write(`${lines.join("\n")}\n`);
}

function printSmoke(r: SmokeResult): void {
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  stdout.write(
    [
      "",
      `smoke: ${r.cycles} ${r.tap ? "observe + tap" : "observe"} cycles on ${r.deviceId}`,
      `  observe  p50 ${ms(r.observe.p50Ms)}  p95 ${ms(r.observe.p95Ms)}`,
      r.tap && r.tapAt
        ? `  tap      p50 ${ms(r.tap.p50Ms)}  p95 ${ms(r.tap.p95Ms)}  (at ${r.tapAt.x},${r.tapAt.y})`
        : "  tap      none: nothing on the device was touched (--tap X,Y times a tap there)",
      "",
    ].join("\n"),
  );
}

export async function doctorCommand(
  opts: { json?: boolean; smoke?: boolean; device?: string; cycles?: number; tap?: { x: number; y: number } },
  env: Env = process.env,
): Promise<number> {
  if (!opts.smoke && (opts.device !== undefined || opts.cycles !== undefined || opts.tap !== undefined))
    throw new CliError("-d, -n and --tap belong to --smoke", EXIT.usage);
  const { config, checks } = configChecks(env);
  checks.push(...(await withSpinner("asking adb…", () => adbChecks(config, env))));
  checks.push(...(await iosChecks(config, env)));
  checks.push(dataDirCheck(env));
  checks.push(await listenCheck(config));
  checks.push(...(await accessChecks(env)));
  let result: SmokeResult | undefined;
  if (opts.smoke) {
    const cycles = opts.cycles ?? 10;
    try {
      const tapAt = opts.tap ?? null;
      result = await withSpinner(`running ${cycles} ${tapAt ? "observe + tap" : "observe"} cycles…`, () =>
        withClient((c) => smoke(c, opts.device, cycles, tapAt), env),
      );
      const r = result;
      const tap = r.tap ? `tap p50 ${r.tap.p50Ms} ms` : "no taps (--tap X,Y to time one)";
      checks.push({
        name: "smoke",
        status: "ok",
        detail: `${r.cycles} cycles on ${r.deviceId}: observe p50 ${r.observe.p50Ms} ms, ${tap}`,
        fix: null,
      });
    } catch (e) {
      if (!(e instanceof RemoteError || e instanceof CliError)) throw e;
      if (e instanceof CliError && e.exitCode === EXIT.usage) throw e;
      checks.push({
        name: "smoke",
        status: "fail",
        detail: e.message,
        fix: "fix the failures above, or choose a device with -d ID (see devicerail devices)",
      });
    }
  }
  if (opts.json) printJson(result ? { checks, smoke: result } : { checks });
  else {
    printChecks(checks);
    if (result) printSmoke(result);
  }
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}
