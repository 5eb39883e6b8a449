import { homedir } from "node:os";
import { MockDriver } from "../../drivers/mock/index.ts";
import type { Core } from "../core/core.ts";
import { DeviceService } from "../core/devices/device-service.ts";
import { FileEvidenceStore } from "../core/evidence/evidence-store.ts";
import { ObjectStore } from "../core/evidence/object-store.ts";
import { connectionPolicy } from "../core/connection-policy.ts";
import { createHandlers } from "../core/handlers/index.ts";
import { QUICK_CHECK_MAX_BYTES, openDatabase, storeProblem } from "../core/sessions/db.ts";
import { EventLog } from "../core/sessions/event-log.ts";
import { EventStreams } from "../core/streams/event-stream.ts";
import { listenEventPlane } from "../transports/event-websocket.ts";
import type { EvidenceSource } from "../client/in-process.ts";
import { DriverError } from "../driver/driver-error.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import type { Config } from "./config.ts";
import { type DataPaths, ensurePrivateDir, resolveDataPaths } from "./data-dir.ts";
import { SERVER_NAME, VERSION } from "./version.ts";

/** A driver the configuration requires could not start; the message says what to fix. */
export class StartupError extends Error {}

export interface Daemon {
  core: Core;
  dispatcher: Dispatcher;
  services: ServerServices;
  paths: DataPaths;
  /** Stored Evidence with its media type, for the HTTP API's GET /evidence/{sha256}. */
  evidence: EvidenceSource;
  /** Stops drivers and closes the store after every connection has been closed. */
  shutdown(): Promise<void>;
}

const errorText = (err: unknown) =>
  err instanceof Error ? ((err as { detail?: string }).detail ?? err.message) : String(err);

/** What the server needs of a driver: start with a device listener, stop. */
type StartableDriver = Parameters<DeviceService["attach"]>[0];

/**
 * The drivers, in the order they attach: when each is wanted, how it is loaded (Android's and
 * iOS's code only when used: adbkit and its dependencies are most of the start-up cost otherwise),
 * and what a failure to start means. `required` turns that failure into a StartupError naming the
 * fix; `auto` logs it and serves without the platform.
 */
const DRIVERS: {
  variable: string;
  wanted(config: Config): "off" | "auto" | "required";
  /** The Mock's devices stand back while a real device is present (DEVICERAIL_MOCK=auto). */
  fallback?(config: Config): boolean;
  load(config: Config, log: Logger): Promise<StartableDriver>;
  /**
   * What a failure to start means: the platform that is then unavailable, what went wrong and its
   * fix. Without it, the error itself stops the start (the Mock's would be a bug).
   */
  failure?: { unavailable: string; explain(config: Config, err: unknown): { why: string; fix: string } };
}[] = [
  {
    variable: "DEVICERAIL_MOCK",
    wanted: (c) => (c.mock === "off" ? "off" : "required"),
    fallback: (c) => c.mock === "auto",
    load: async (c) => new MockDriver({ count: c.mockDevices, hang: c.mockHang, idPrefix: c.mockIdPrefix ?? null }),
  },
  {
    variable: "DEVICERAIL_ANDROID",
    wanted: (c) => c.android,
    load: async (c, log) => {
      const AndroidDriver = await (await import("../../drivers/android/index.ts")).loadAndroidDriver();
      return new AndroidDriver({ adbPath: c.adbPath, serverPort: c.adbServerPort, helper: c.androidHelper, log });
    },
    failure: {
      unavailable: "Android devices are unavailable",
      explain: (c, err) => ({
        why: `no adb server on port ${c.adbServerPort} and ${c.adbPath} could not start one (${errorText(err)})`,
        fix: "install Android platform-tools or set DEVICERAIL_ADB_PATH",
      }),
    },
  },
  {
    variable: "DEVICERAIL_IOS",
    wanted: (c) => {
      if (c.ios === "off" || c.xcrunPath || Bun.which("xcrun")) return c.ios;
      if (c.ios === "required")
        throw new StartupError(
          "DEVICERAIL_IOS=required: xcrun was not found; install Xcode and its command-line tools, or set DEVICERAIL_XCRUN_PATH",
        );
      return "off";
    },
    load: async (c, log) => {
      const IosSimulatorDriver = await (await import("../../drivers/ios-simulator/index.ts")).loadIosSimulatorDriver();
      return new IosSimulatorDriver({ xcrunPath: c.xcrunPath, axePath: c.axePath, wdaEndpoint: c.wdaEndpoint, log });
    },
    failure: {
      unavailable: "iOS Simulators are unavailable",
      explain: (_c, err) => ({
        why: `xcrun simctl failed (${errorText(err)})`,
        // A typed driver error carries its own fix (ios_xcode_not_selected: the xcode-select command).
        fix:
          err instanceof DriverError && err.platformCode === "ios_xcode_not_selected"
            ? err.message
            : "install Xcode and its command-line tools",
      }),
    },
  },
];

/**
 * The composition root: the data directory (locked: one daemon per directory), the durable event
 * log recovered from an unclean exit, the Evidence files with orphans of a crash swept, the
 * drivers, and the dispatcher.
 */
export async function createDaemon(
  config: Config,
  log: Logger,
  env: Record<string, string | undefined> = process.env,
  hooks: {
    /** Called once the data directory's lock is held, before the slower start-up steps. */ held?: (
      paths: DataPaths,
    ) => void;
  } = {},
): Promise<Daemon> {
  const paths = resolveDataPaths(env, process.platform, homedir(), process.cwd());
  ensurePrivateDir(paths.dataDir);
  const opened = openDatabase(paths.databasePath);
  if (opened.integrity === "skipped")
    log.info(
      { database: paths.databasePath, maxBytes: QUICK_CHECK_MAX_BYTES },
      "integrity check skipped: the database is larger than the start-up check covers",
    );
  const { raw } = opened;
  let started: EventLog | null = null;
  // A full disk or a damaged file met while starting is the user's to fix: name the file and the fix.
  const storeStep = async <T>(path: string, step: () => T | Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (err) {
      started?.dispose();
      raw.close();
      throw storeProblem(path, err) ?? err;
    }
  };
  await storeStep(paths.dataDir, () => hooks.held?.(paths));
  const eventLog = await storeStep(paths.databasePath, () => (started = new EventLog(opened)));
  const recovered = await storeStep(paths.databasePath, () => eventLog.recover());
  if (recovered.sealed.length)
    log.warn(
      { sealed: recovered.sealed.length, interruptedActions: recovered.interruptedActions },
      "sealed Sessions left open by an unclean exit",
    );
  const objects = await storeStep(paths.evidenceDir, async () => {
    ensurePrivateDir(paths.evidenceDir);
    const store = await ObjectStore.open(paths.evidenceDir);
    // Before any new put: an object without a database row is a leftover of a crash mid-operation.
    const swept = await store.sweep((sha) => eventLog.hasEvidence(sha));
    if (swept.length) log.info({ removed: swept.length }, "removed unreferenced Evidence objects");
    return store;
  });

  const devices = new DeviceService(log);
  const core: Core = {
    devices,
    evidence: new FileEvidenceStore(objects, eventLog, config.evidenceInlineBytes),
    log: eventLog,
    screenshotPolicy: config.screenshotPolicy,
  };
  const never = new AbortController().signal;
  const ctx = { signal: never, deadline: null, log };
  for (const entry of DRIVERS) {
    const wanted = entry.wanted(config);
    if (wanted === "off") continue;
    const driver = await entry.load(config, log);
    try {
      await devices.attach(driver, ctx, { fallback: entry.fallback?.(config) ?? false });
    } catch (err) {
      await driver.stop();
      if (!entry.failure) throw err;
      const { why, fix } = entry.failure.explain(config, err);
      if (wanted === "required") throw new StartupError(`${entry.variable}=required: ${why}; ${fix}`);
      log.warn({ reason: why, fix }, `${entry.failure.unavailable} (${entry.variable}=auto)`);
    }
  }

  const dispatcher = new Dispatcher({
    handlers: createHandlers(core),
    policy: connectionPolicy(core, log),
    server: { name: SERVER_NAME, version: VERSION },
    log,
  });
  // The event plane: one loopback WebSocket listener per daemon; without it events.stream.v1 is off.
  const streams = new EventStreams(eventLog);
  let plane: ReturnType<typeof listenEventPlane> | null = null;
  try {
    plane = listenEventPlane(streams, { log, serverVersion: VERSION });
    core.eventPlane = { streams, endpoint: plane.endpoint };
  } catch (err) {
    log.warn({ err: errorText(err) }, "event stream plane unavailable; events.stream.v1 is off");
  }
  // The media type lives only in the evidence metadata row; EventLog has no reader for it.
  const mediaTypeOf = raw.prepare<{ media_type: string }, [string]>("SELECT media_type FROM evidence WHERE sha256 = ?");
  const evidence: EvidenceSource = {
    read: async (sha256) => {
      const row = mediaTypeOf.get(sha256);
      if (!row) return null;
      const bytes = await core.evidence.read(sha256);
      return bytes ? { bytes, mediaType: row.media_type } : null;
    },
  };
  const services: ServerServices = {
    eventStreamListener: plane !== null,
    mediaStreams: true,
    screenshotPolicy: config.screenshotPolicy,
    evidenceStore: true,
  };
  return {
    core,
    dispatcher,
    services,
    paths,
    evidence,
    shutdown: async () => {
      streams.shutdown();
      await plane?.stop();
      await devices.stop();
      await eventLog.close();
      // Still refused by the store at exit: the next start records them as it does interrupted actions.
      if (eventLog.owedOutcomes())
        log.warn({ actions: eventLog.owedOutcomes() }, "actions whose outcome could not be written before shutdown");
      eventLog.dispose();
      mediaTypeOf.finalize();
      raw.close();
    },
  };
}
