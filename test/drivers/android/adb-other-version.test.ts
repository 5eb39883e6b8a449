/**
 * AndroidDriver and an adb server of another version than its adb (one a user's own adb started):
 * the real adb's `start-server` kills such a server and starts its own, so a user's adb and
 * devicerail's would keep replacing each other's. devicerail uses the running server as it is,
 * never asks it to die, and says so once in its log.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdbkitPort } from "../../../drivers/android/adbkit-port.ts";
import { AndroidDriver } from "../../../drivers/android/android-driver.ts";
import type { DeviceChange } from "../../../src/driver/driver.ts";
import { ADB_PATH, describeWithAdb } from "../../support/adb-device/index.ts";
import { freePort } from "../../support/adb-device/adb-server.ts";
import { ctx, driverError, recordingLogger, until } from "../../support/adb-device/driver-harness.ts";
import { OtherVersionServer } from "../../support/adb-device/other-version-server.ts";

let dir: string;
/** The installed adb's server version (41 for 1.0.41); the stand-in server reports one less. */
let mine: number;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "devicerail-adb-version-"));
  const m = /^Android Debug Bridge version \d+\.\d+\.(\d+)$/m.exec(
    Bun.spawnSync([ADB_PATH, "version"]).stdout.toString(),
  );
  mine = Number(m?.[1] ?? 41);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An adb that records its arguments and runs the real one with a private HOME and TMPDIR. */
function wrapper(name: string): { bin: string; invocations: () => string } {
  const bin = join(dir, `adb-${name}`);
  const log = join(dir, `${name}.invocations`);
  writeFileSync(bin, `#!/bin/sh\necho "$@" >> '${log}'\nHOME='${dir}' TMPDIR='${dir}' exec '${ADB_PATH}' "$@"\n`);
  chmodSync(bin, 0o755);
  return { bin, invocations: () => (existsSync(log) ? readFileSync(log, "utf8") : "") };
}

const mismatchWarnings = (lines: unknown[]) =>
  (lines as { level: string; obj: object; msg?: string }[]).filter(
    (l) => l.level === "warn" && /is version \d+ but .* is version \d+/.test(l.msg ?? ""),
  );

describeWithAdb("AndroidDriver and an adb server of another version", () => {
  test("the real adb's start-server kills a server of another version (what devicerail must never run against it)", async () => {
    await using other = await OtherVersionServer.start(mine - 1);
    // Spawned, not spawnSync: the stand-in server answers from this process's event loop.
    const proc = Bun.spawn([ADB_PATH, "-P", String(other.port), "start-server"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TMPDIR: dir },
      stderr: "pipe",
      timeout: 15_000,
    });
    const [stderr] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(stderr).toStartWith(`adb server version (${mine - 1}) doesn't match this client (${mine}); killing...\n`);
    expect(other.requests.slice(0, 2)).toEqual(["host:version", "host:kill"]);
  }, 30_000);

  test("uses a running server of another version as it is, never kills or restarts it, and warns once when it is followed again", async () => {
    await using other = await OtherVersionServer.start(mine - 1);
    const adb = wrapper("running");
    const log = recordingLogger();
    const driver = new AndroidDriver({ adbPath: adb.bin, serverPort: other.port, log });
    const changes: DeviceChange[] = [];
    try {
      await driver.start((c) => changes.push(c), ctx());
      expect(other.requests).toEqual(["host:version", "host:track-devices", "host:devices"]);
      // The server went away and came back (another adb restarted it): followed again, not replaced.
      other.dropTrackers();
      await until(
        "the driver to follow the server again",
        () => other.requests.filter((r) => r === "host:track-devices").length === 2,
        10_000,
      );
      await until(
        "the driver to list its devices again",
        () => other.requests.filter((r) => r === "host:devices").length === 2,
        10_000,
      );
    } finally {
      await driver.stop();
    }
    expect([other.killed, adb.invocations()]).toEqual([false, "version\n"]);
    const warnings = mismatchWarnings(log.lines);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toEqual({
      level: "warn",
      obj: { port: other.port, serverVersion: mine - 1, clientVersion: mine, adb: adb.bin },
      msg:
        `the adb server on port ${other.port} is version ${mine - 1} but ${adb.bin} is version ${mine}: devicerail uses that server as it is and never restarts it. ` +
        "adb clients of another version than the server kill it and start their own, so use one adb for everything: " +
        "the one that started this server, or set DEVICERAIL_ADB_PATH to the adb you run yourself (devicerail doctor shows both)",
    });
  }, 30_000);

  test("does not replace a server of another version that did not answer at first: it starts none over it and uses it once it answers", async () => {
    await using other = await OtherVersionServer.start(mine - 1);
    other.unanswered = 1;
    const adb = wrapper("busy");
    const log = recordingLogger();
    const driver = new AndroidDriver({ adbPath: adb.bin, serverPort: other.port, log });
    try {
      await driver.start(() => {}, ctx());
    } finally {
      await driver.stop();
    }
    // `adb server` found the port taken and gave up; `start-server` would have sent host:kill.
    expect([other.killed, other.requests, adb.invocations()]).toEqual([
      false,
      ["host:version", "host:version", "host:track-devices", "host:devices"],
      `-P ${other.port} server\nversion\n`,
    ]);
    expect(mismatchWarnings(log.lines).length).toBe(1);
  }, 30_000);

  test("a refused connection starts no server behind devicerail's back (adbkit's own start-server is off)", async () => {
    const port = await freePort();
    const adb = wrapper("refused");
    const adbkit = new AdbkitPort({ port, bin: adb.bin });
    try {
      const err = await driverError(adbkit.listDevices(ctx()));
      expect([err.data.details, adb.invocations()]).toEqual([{ platformCode: "android_adb_process_failed" }, ""]);
    } finally {
      // Before the fix adbkit ran `<bin> -P <port> start-server` here: stop what it started.
      if (adb.invocations())
        Bun.spawnSync([ADB_PATH, "-P", String(port), "kill-server"], {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TMPDIR: dir },
        });
    }
  }, 30_000);
});
