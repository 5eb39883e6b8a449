import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { until } from "../support/wait.ts";

const MiB = 1024 * 1024;

describe("daemon.log", () => {
  test("is rotated to daemon.log.1 and continues empty when the daemon logs past 10 MiB", async () => {
    const dataDir = tempDataDir();
    const log = join(dataDir, "daemon.log");
    const filler = "an earlier run's line\n";
    writeFileSync(log, filler.repeat(Math.ceil((10 * MiB) / filler.length)), { mode: 0o600 });
    // As the CLI starts its background daemon: stdout and stderr are daemon.log, opened for appending.
    const fd = openSync(log, "a", 0o600);
    const proc = Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
      cwd: ROOT,
      stdin: "ignore",
      stdout: fd,
      stderr: fd,
      env: daemonEnv({ DEVICERAIL_DATA_DIR: dataDir, DEVICERAIL_LOG_LEVEL: "info" }),
    });
    closeSync(fd);
    try {
      await until(
        "the daemon serving after a rotation",
        () => existsSync(`${log}.1`) && readFileSync(log, "utf8").includes('"msg":"devicerail serving"'),
        15_000,
      );
      const rotated = readFileSync(`${log}.1`, "utf8");
      expect(rotated.startsWith(filler)).toBe(true);
      expect(statSync(`${log}.1`).size).toBeGreaterThanOrEqual(10 * MiB);
      expect(statSync(log).size).toBeLessThan(64 * 1024);
      expect(existsSync(`${log}.2`)).toBe(false);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
