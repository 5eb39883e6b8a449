/**
 * Helpers for testing drivers/android through the Driver port against a simulated phone on a
 * private adb server. Kept out of index.ts: the simulated device itself knows nothing of the driver.
 */
import { expect } from "bun:test";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import type { CallContext, DeviceChange, Driver, ElementInput, Logger } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { ADB_PATH, type AdbServer } from "./adb-server.ts";
import { DEMO_PACKAGE, demoScenario } from "./demo-scenario.ts";
import { type FakeDevice, type FakeDeviceOptions, startFakeDevice } from "./fake-device.ts";
import type { FakePhone } from "./fake-phone.ts";

export const ctx = (
  signal: AbortSignal = new AbortController().signal,
  deadline: number | null = null,
  log: Logger = silentLogger,
): CallContext => ({
  signal,
  deadline,
  log,
});

/** The DriverError a promise rejects with, as {code, data}; fails the test when it resolves or throws anything else. */
export async function driverError(
  p: Promise<unknown>,
): Promise<{ code: string; data: { code: string; message: string; retryable: boolean; details: unknown } }> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof DriverError))
      throw new Error(`expected a DriverError, got ${err instanceof Error ? err.stack : String(err)}`);
    return { code: err.driverCode, data: err.error.data as never };
  }
  throw new Error("expected the call to fail with a DriverError");
}

export const platformError = (platformCode: string, retryable: boolean, message = "platform operation failed") => ({
  code: "platform_error",
  data: { code: "platform_error", message, retryable, details: { platformCode } },
});

/** The refusal of an action's arguments; what `details` says to fix beyond the action is tested with the action space. */
export const invalidArguments = (action: string) => ({
  code: "invalid_arguments",
  data: {
    code: "invalid_arguments",
    message: `invalid arguments for action ${action}`,
    retryable: false,
    details: expect.objectContaining({ action }),
  },
});

export { until } from "../wait.ts";

/** Marks the status trailer the driver appends to every command (`echo "\n<marker>$?"`). */
export const TRAILER = "<exit trailer>";
const isTrailer = (argv: string[]) =>
  argv.length === 2 && argv[0] === "echo" && /^\n__[A-Za-z0-9_]+\d{1,3}$/.test(argv[1] as string);

/** The argv of every command the phone ran, the driver's exit trailers shown as TRAILER. */
export const ran = (phone: FakePhone): (string[] | string)[] =>
  phone.commandLog.map((r) => (isTrailer(r.argv) ? TRAILER : r.argv));

/**
 * `ran(phone)` without the shell invocations that dumped the UI tree (each one's commands up to
 * and including its trailer), for tests of what typing sent: the driver reads typed text back
 * from a dump, whatever commands that dump takes.
 */
export function withoutDumps(commands: (string[] | string)[]): (string[] | string)[] {
  const out: (string[] | string)[] = [];
  let shell: (string[] | string)[] = [];
  for (const c of commands) {
    shell.push(c);
    if (c !== TRAILER) continue;
    if (!shell.some((s) => s !== TRAILER && s[0] === "uiautomator")) out.push(...shell);
    shell = [];
  }
  return [...out, ...shell];
}

/** How many shell invocations dumped the UI tree. */
export const dumpsIn = (commands: (string[] | string)[]): number =>
  commands.filter((c) => c !== TRAILER && c[0] === "uiautomator").length;

export function clearLogs(phone: FakePhone): void {
  phone.commandLog.length = 0;
  phone.serviceLog.length = 0;
  phone.inputLog.length = 0;
}

/** Records every log line the driver writes, for leak searches. */
export function recordingLogger(lines: unknown[] = []): Logger & { lines: unknown[] } {
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  const log: Logger & { lines: unknown[] } = {
    lines,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => log,
  };
  return log;
}

/** Runs one action through the Driver port of an attached phone. */
export const exec = (a: Attached, name: string, args: unknown = {}) =>
  a.driver.execute(a.id, { name, arguments: args }, ctx());

/** The demo app's state on the simulated phone (what it was typed, tapped, switched). */
export const demo = (phone: FakePhone) => phone.runtime(DEMO_PACKAGE).state;

export interface Attached extends AsyncDisposable {
  device: FakeDevice;
  phone: FakePhone;
  /** Used through the Driver port only. */
  driver: Driver & { elements: ElementInput };
  id: string;
  changes: DeviceChange[];
}

/**
 * A simulated phone (the demo app in front unless told otherwise) on `server`, and a started
 * AndroidDriver that has connected to it; the phone's logs are cleared after connecting.
 */
export async function attach(
  server: AdbServer,
  options: FakeDeviceOptions & {
    dumpAttemptMs?: number;
    knownAwakeMs?: number;
    nullRootBackoffMs?: readonly number[];
    rotationConfirmMs?: number;
    log?: Logger;
    connect?: boolean;
    /** DEVICERAIL_ANDROID_HELPER (the driver's default: use). */
    helper?: "off" | "use" | "install";
    imeSettleMs?: number;
    helperStartMs?: number;
  } = {},
): Promise<Attached> {
  const device = await startFakeDevice(server, { scenario: demoScenario, ...options });
  const driver = new AndroidDriver({
    adbPath: ADB_PATH,
    serverPort: server.port,
    log: options.log ?? silentLogger,
    ...(options.dumpAttemptMs ? { dumpAttemptMs: options.dumpAttemptMs } : {}),
    ...(options.knownAwakeMs !== undefined ? { knownAwakeMs: options.knownAwakeMs } : {}),
    ...(options.nullRootBackoffMs ? { nullRootBackoffMs: options.nullRootBackoffMs } : {}),
    ...(options.rotationConfirmMs !== undefined ? { rotationConfirmMs: options.rotationConfirmMs } : {}),
    helper: options.helper,
    // A simulated IME binds at once; real phones get IME_SETTLE_MS.
    imeSettleMs: options.imeSettleMs ?? 0,
    helperStartMs: options.helperStartMs,
  });
  const changes: DeviceChange[] = [];
  const id = `android-adb:${device.serial}`;
  try {
    await driver.start((c) => changes.push(c), ctx());
    if (options.connect !== false) {
      expect((await driver.connect(id, ctx())).connected).toBe(true);
      clearLogs(device.phone);
    }
  } catch (e) {
    await driver.stop();
    await device[Symbol.asyncDispose]();
    throw e;
  }
  return {
    device,
    phone: device.phone,
    driver,
    id,
    changes,
    async [Symbol.asyncDispose]() {
      await driver.stop();
      await device[Symbol.asyncDispose]();
    },
  };
}
