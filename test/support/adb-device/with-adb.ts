/**
 * `describe` for suites that need the real adb binary. Present: the suite runs. Missing under
 * CI=true (or 1): one failing test says so (a CI image without adb must not pass by skipping). Missing
 * elsewhere: the suite is skipped with a message.
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { ADB_PATH, type AdbServer, startAdbServer } from "./adb-server.ts";

export const adbInstalled = existsSync(ADB_PATH);
let warned = false;

export function describeWithAdb(name: string, body: () => void): void {
  if (adbInstalled) return describe(name, body);
  if (["true", "1"].includes((process.env.CI ?? "").toLowerCase())) {
    return describe(name, () => {
      test(`adb is installed at ${ADB_PATH}`, () => {
        throw new Error(
          `${ADB_PATH} is missing: install Debian's adb package (apt-get install -y adb); these tests must not be skipped in CI`,
        );
      });
    });
  }
  if (!warned)
    console.warn(
      `skipping adb-device tests: ${ADB_PATH} is missing (apt-get install -y adb); under CI=true they fail instead`,
    );
  warned = true;
  describe.skip(name, body);
}

/**
 * A private adb server for the calling test file (started before its tests, stopped after them)
 * and the daemon settings that use it: a daemon under test never reaches the machine's server on 5037.
 */
export function adbServerForFile(): { server: () => AdbServer; androidEnv: () => Record<string, string> } {
  let server: AdbServer | undefined;
  beforeAll(async () => {
    if (adbInstalled) server = await startAdbServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const current = () => {
    if (!server) throw new Error("the file's adb server is not running");
    return server;
  };
  return {
    server: current,
    androidEnv: () => ({
      DEVICERAIL_ANDROID: "auto",
      DEVICERAIL_ADB_PATH: ADB_PATH,
      ANDROID_ADB_SERVER_PORT: String(current().port),
    }),
  };
}
