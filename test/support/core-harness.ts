import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Core } from "../../src/core/core.ts";
import { DeviceService } from "../../src/core/devices/device-service.ts";
import { FileEvidenceStore } from "../../src/core/evidence/evidence-store.ts";
import { ObjectStore } from "../../src/core/evidence/object-store.ts";
import { connectionPolicy } from "../../src/core/connection-policy.ts";
import { createHandlers } from "../../src/core/handlers/index.ts";
import { openDatabase } from "../../src/core/sessions/db.ts";
import { EventLog } from "../../src/core/sessions/event-log.ts";
import type { Driver } from "../../src/driver/driver.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { silentLogger } from "../../src/protocol/rpc-error.ts";
import { MemoryConnection } from "../../src/transports/memory.ts";
import { FakeDriver } from "./fake-driver.ts";

/**
 * The real dispatcher, handlers, event log and file evidence store over a driver (by default a
 * scriptable fake), with media streams offered and connections over the in-memory transport.
 * `screenshotPolicy` is the core's runtime policy only: hello still negotiates as if screenshots
 * were captured, so the handlers' own runtime check can be reached.
 */
export function coreHarness<D extends Driver>(opts: {
  screenshotPolicy?: "capture" | "omit";
  driver: D;
  evidenceInlineBytes?: number;
}): ReturnType<typeof harnessWith<D>>;
// Last, so that ReturnType<typeof coreHarness> is the harness over the fake driver.
export function coreHarness(opts?: {
  screenshotPolicy?: "capture" | "omit";
  evidenceInlineBytes?: number;
}): ReturnType<typeof harnessWith<FakeDriver>>;
/** `evidenceInlineBytes`: the largest object kept in the database (the daemon's default unless given; 0 = every object a file). */
export function coreHarness(
  opts: { screenshotPolicy?: "capture" | "omit"; driver?: Driver; evidenceInlineBytes?: number } = {},
) {
  return harnessWith(opts.driver ?? new FakeDriver(), opts.screenshotPolicy ?? "capture", opts.evidenceInlineBytes);
}

async function harnessWith<D extends Driver>(
  driver: D,
  screenshotPolicy: "capture" | "omit",
  evidenceInlineBytes?: number,
) {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-core-"));
  const opened = openDatabase(join(dir, "db.sqlite"));
  const objects = await ObjectStore.open(join(dir, "evidence"));
  const devices = new DeviceService(silentLogger);
  await devices.attach(driver, { signal: new AbortController().signal, deadline: null, log: silentLogger });
  const log = new EventLog(opened);
  const core: Core = {
    devices,
    evidence: new FileEvidenceStore(objects, log, evidenceInlineBytes),
    log,
    screenshotPolicy,
  };
  const dispatcher = new Dispatcher({
    handlers: createHandlers(core),
    policy: connectionPolicy(core, silentLogger),
    server: { name: "t", version: "0" },
    log: silentLogger,
  });
  const services = {
    eventStreamListener: false,
    screenshotPolicy: "capture" as const,
    evidenceStore: true,
    mediaStreams: true,
  };
  let nextId = 1;
  /**
   * One connection offering `features` up to protocol 1.`maxMinor`; `call` resolves with that
   * request's response (responses may come out of order).
   */
  const connect = async (features: string[], maxMinor = 5) => {
    const waiting = new Map<unknown, (r: any) => void>();
    const memory = new MemoryConnection(dispatcher, services);
    memory.onFrame((frame) => {
      const r = JSON.parse(frame);
      waiting.get(r.id)?.(r);
    });
    const call = (method: string, params?: unknown, extra: object = {}) => {
      const id = nextId++;
      const p = new Promise<any>((resolve) => waiting.set(id, resolve));
      void memory.send(
        JSON.stringify({ jsonrpc: "2.0", id, method, ...extra, ...(params === undefined ? {} : { params }) }),
      );
      return { id, response: p };
    };
    const ask = (method: string, params?: unknown, extra: object = {}) => call(method, params, extra).response;
    await ask("system.hello", {
      client: { name: "t", version: "1" },
      protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor }] },
      features: { optional: features },
    });
    return {
      conn: memory.connection,
      call,
      ask,
      close: (reason?: Parameters<MemoryConnection["close"]>[0]) => memory.close(reason),
    };
  };
  return {
    dir,
    core,
    driver,
    objects,
    raw: opened.raw,
    dispatcher,
    connect,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
