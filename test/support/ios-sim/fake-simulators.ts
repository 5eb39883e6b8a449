/**
 * The fixture: a state directory, a bin directory with `xcrun` and `axe` wrappers (sh scripts that
 * exec Bun on the fake's entry file, so they work from any spawner: Bun.spawn, Node's execFile,
 * a shell), an environment with that bin directory first on PATH, and optionally a fake
 * WebDriverAgent on 127.0.0.1:0.
 *
 *   await using sim = await startFakeSimulators({ tools: ["xcrun", "axe"], wda: true });
 *   const r = await sim.run("xcrun", ["simctl", "list", "devices", "-j"]);
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeWda, type FakeWdaOptions, startFakeWda } from "./fake-wda.ts";
import { bootDevice, launchApp, shutdownDevice } from "./lifecycle.ts";
import {
  type CommandRecord,
  createState,
  DEMO_BUNDLE,
  type Fault,
  initStateDir,
  readLog,
  readState,
  type SimDevice,
  type SimState,
  STATE_ENV,
  type StateOptions,
  type Tool,
  transact,
} from "./sim-state.ts";

const HERE = import.meta.dir;
const ROOT = join(HERE, "../../..");
const ENTRY: Record<"xcrun" | "axe", string> = { xcrun: join(HERE, "xcrun-cli.ts"), axe: join(HERE, "axe-cli.ts") };

/** Bun itself when the fixture runs under Bun; the project's pinned Bun otherwise (e.g. from Node). */
export const BUN_PATH = process.versions.bun ? process.execPath : join(ROOT, "node_modules/.bin/bun");

export interface FakeSimulatorsOptions extends StateOptions {
  /** Which fake executables go into binDir. Default both. */
  tools?: ("xcrun" | "axe")[];
  /** Start a fake WebDriverAgent for a booted device (the first one unless `udid` says otherwise). */
  wda?: boolean | FakeWdaOptions;
}

export interface RunResult {
  exitCode: number | null;
  signalCode: string | null;
  stdout: Uint8Array;
  stderr: string;
  /** stdout decoded as UTF-8. */
  text: string;
}

export interface FakeSimulators extends AsyncDisposable {
  readonly binDir: string;
  readonly stateDir: string;
  /** process.env with binDir first on PATH and the state variable set: pass it to whatever spawns xcrun/axe. */
  readonly env: Record<string, string>;
  readonly wda: FakeWda | null;
  state(): SimState;
  /** A device by UDID; without one, the first booted device. */
  device(udid?: string): SimDevice;
  update<T>(fn: (state: SimState) => T): T;
  boot(udid: string): void;
  shutdown(udid: string): void;
  /** Starts the app (default the demo app) in front, as `simctl launch` does. */
  launch(udid: string, bundleId?: string): number;
  setFault(fault: Fault): void;
  clearFaults(): void;
  /** Every command the fakes received, oldest first, optionally for one tool. */
  readLog(tool?: Tool): CommandRecord[];
  /** Runs a fake by name through PATH (as a driver would) with optional stdin. */
  run(
    tool: "xcrun" | "axe",
    args: string[],
    options?: { stdin?: string | Uint8Array; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<RunResult>;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

function writeWrapper(binDir: string, tool: "xcrun" | "axe", stateDir: string): void {
  const path = join(binDir, tool);
  writeFileSync(
    path,
    `#!/bin/sh\n: "\${${STATE_ENV}:=${stateDir}}"\nexport ${STATE_ENV}\nexec ${shellQuote(BUN_PATH)} ${shellQuote(ENTRY[tool])} "$@"\n`,
  );
  chmodSync(path, 0o755);
}

/** A fake process that never finished (hang fault, recordVideo) is ended when the fixture goes, by its pid, and only if it still runs our entry file. */
function killLeftovers(dir: string): void {
  for (const r of readLog(dir)) {
    if (r.exitCode !== null || r.signal || r.tool === "wda") continue;
    try {
      const cmdline = readFileSync(`/proc/${r.pid}/cmdline`, "utf8");
      if (cmdline.includes(ENTRY.xcrun) || cmdline.includes(ENTRY.axe)) process.kill(r.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

export async function startFakeSimulators(options: FakeSimulatorsOptions = {}): Promise<FakeSimulators> {
  const root = mkdtempSync(join(tmpdir(), "devicerail-ios-sim-"));
  const stateDir = join(root, "state");
  const binDir = join(root, "bin");
  initStateDir(stateDir, createState(options));
  mkdirSync(binDir);
  for (const tool of options.tools ?? ["xcrun", "axe"]) writeWrapper(binDir, tool, stateDir);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH: `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    [STATE_ENV]: stateDir,
  };

  let wda: FakeWda | null = null;
  if (options.wda) {
    const wdaOptions = options.wda === true ? {} : options.wda;
    const udid = wdaOptions.udid ?? readState(stateDir).devices.find((d) => d.state === "Booted")?.udid;
    if (!udid) throw new Error("startFakeSimulators: wda needs a booted device (or an explicit udid)");
    wda = await startFakeWda(stateDir, { ...wdaOptions, udid });
  }

  const update = <T>(fn: (s: SimState) => T) => transact(stateDir, fn);
  const deviceIn = (s: SimState, udid?: string) => {
    const d = udid ? s.devices.find((x) => x.udid === udid) : s.devices.find((x) => x.state === "Booted");
    if (!d) throw new Error(`fake Simulator: no device ${udid ?? "booted"}`);
    return d;
  };

  return {
    binDir,
    stateDir,
    env,
    wda,
    state: () => readState(stateDir),
    device: (udid) => deviceIn(readState(stateDir), udid),
    update,
    boot: (udid) => update((s) => bootDevice(deviceIn(s, udid))),
    shutdown: (udid) => update((s) => shutdownDevice(deviceIn(s, udid))),
    launch: (udid, bundleId = DEMO_BUNDLE) => update((s) => launchApp(s, deviceIn(s, udid), bundleId)),
    setFault: (fault) => update((s) => void s.faults.push(fault)),
    clearFaults: () => update((s) => void (s.faults = [])),
    readLog: (tool) => readLog(stateDir).filter((r) => tool === undefined || r.tool === tool),
    async run(tool, args, runOptions = {}) {
      const proc = Bun.spawn([tool, ...args], {
        env,
        stdin: runOptions.stdin === undefined ? "ignore" : new Blob([runOptions.stdin]),
        stdout: "pipe",
        stderr: "pipe",
        ...(runOptions.signal ? { signal: runOptions.signal } : {}),
        ...(runOptions.timeoutMs ? { timeout: runOptions.timeoutMs } : {}),
      });
      const [stdout, stderr] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text()]);
      await proc.exited;
      return {
        exitCode: proc.exitCode,
        signalCode: proc.signalCode === null ? null : String(proc.signalCode),
        stdout,
        stderr,
        text: new TextDecoder().decode(stdout),
      };
    },
    async [Symbol.asyncDispose]() {
      await wda?.close();
      if (existsSync(stateDir)) killLeftovers(stateDir);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
