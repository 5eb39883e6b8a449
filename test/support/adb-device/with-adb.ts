/**
 * `describe` for suites that need the real adb binary. Present: the suite runs. Missing under
 * CI=true (or 1): one failing test says so (a CI image without adb must not pass by skipping). Missing
 * elsewhere: the suite is skipped with a message.
 */
import { describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { ADB_PATH } from "./adb-server.ts";

export const adbInstalled = existsSync(ADB_PATH);
let warned = false;

export function describeWithAdb(name: string, body: () => void): void {
  if (adbInstalled) return describe(name, body);
  if (["true", "1"].includes((process.env.CI ?? "").toLowerCase())) {
    return describe(name, () => {
      test(`adb is installed at ${ADB_PATH}`, () => {
        throw new Error(`${ADB_PATH} is missing: install Debian's adb package (apt-get install -y adb); these tests must not be skipped in CI`);
      });
    });
  }
  if (!warned) console.warn(`skipping adb-device tests: ${ADB_PATH} is missing (apt-get install -y adb); under CI=true they fail instead`);
  warned = true;
  describe.skip(name, body);
}
