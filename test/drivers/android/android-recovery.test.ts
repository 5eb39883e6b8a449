/**
 * AndroidDriver when the adb server it uses is killed: it starts a new one on the same port by
 * itself and keeps reporting devices, without being restarted. Its own file: the crash takes this
 * file's adb server away.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import type { DeviceChange } from "../../../src/driver/driver.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import {
  ADB_PATH,
  type AdbServer,
  describeWithAdb,
  startAdbServer,
  startFakeDevice,
} from "../../support/adb-device/index.ts";
import { ctx, until } from "../../support/adb-device/driver-harness.ts";

let server: AdbServer;
let dir: string;
beforeAll(async () => {
  server = await startAdbServer();
  dir = mkdtempSync(join(tmpdir(), "devicerail-adb-wrapper-"));
});
afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * An adb that records its arguments and runs the real one with a private HOME and TMPDIR, so the
 * server the driver starts keeps its key and log out of the user's ~/.android and /tmp.
 */
function wrapper(): string {
  const path = join(dir, "adb");
  writeFileSync(
    path,
    `#!/bin/sh\necho "$@" >> '${dir}/invocations'\nHOME='${dir}' TMPDIR='${dir}' exec '${ADB_PATH}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });

/** adb servers forked by `server` (or `start-server`) for `port` (`adb -L tcp:<port> fork-server server …`). */
const forkedServers = (port: number) =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      } catch {
        return [];
      }
    })
    .filter((argv) => argv.includes("fork-server") && argv.includes(`tcp:${port}`));

describeWithAdb("AndroidDriver and a killed adb server", () => {
  test("starts a server on the same port itself and reports the reattached phone present again when the server is killed", async () => {
    const driver = new AndroidDriver({ adbPath: wrapper(), serverPort: server.port, log: silentLogger });
    const changes: DeviceChange[] = [];
    await using device = await startFakeDevice(server);
    const id = `android-adb:${device.serial}`;
    const mine = () => changes.filter((c) => (c.type === "present" ? c.device.id : c.deviceId) === id);
    try {
      await driver.start((c) => changes.push(c), ctx());
      await driver.connect(id, ctx());
      const before = mine().length;

      await server.crash();
      // The new server knows nothing of the phone, so the driver's reconciliation reports it gone.
      await until("the driver to report the phone gone after recovering", () => mine().at(-1)?.type === "gone", 10_000);
      // `server`, not `start-server`: it never kills a server that came up meanwhile (of another
      // version, start-server would); `version` is the check of the adb's own version at start.
      expect(readFileSync(join(dir, "invocations"), "utf8")).toBe(`version\n-P ${server.port} server\n`);
      expect(forkedServers(server.port).length).toBe(1);

      await device.connect();
      await until("the phone reported present again", () => {
        const last = mine().at(-1);
        return last?.type === "present" && last.device.name === "Fake Pixel";
      });
      expect(
        mine()
          .slice(before)
          .map((c) => c.type),
      ).toEqual(expect.arrayContaining(["gone", "present"]));
      expect(mine().at(-1)).toEqual({
        type: "present",
        device: { id, name: "Fake Pixel", platform: { kind: "android" }, osVersion: "10", connected: false },
      });
      expect((await driver.connect(id, ctx())).connected).toBe(true);
      expect((await driver.observe(id, { screenshot: true, uiTree: false }, ctx())).screenshot).toEqual(
        device.phone.screenshot(),
      );
    } finally {
      await driver.stop();
      await server.stop();
    }
    // kill-server stopped the server the driver started: nothing answers on the port any more.
    await until(
      "the adb server on the port to exit",
      async () => !(await answers(server.port)) && forkedServers(server.port).length === 0,
    );
    expect([await answers(server.port), forkedServers(server.port)]).toEqual([false, []]);
  });
});
