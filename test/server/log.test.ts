import { describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rotatingSink } from "../../src/server/log.ts";

describe("rotatingSink", () => {
  test("keeps the file under the size and three older files when much more is written", () => {
    const dir = mkdtempSync(join(tmpdir(), "devicerail-log-"));
    const path = join(dir, "daemon.log");
    // Opened as the CLI opens it for its background daemon: appending.
    const fd = openSync(path, "a", 0o600);
    try {
      const sink = rotatingSink(fd, path, 1_000, 3);
      const line = (i: number) => `${String(i).padStart(4, "0")} ${"x".repeat(94)}\n`;
      for (let i = 0; i < 100; i++) sink.write(line(i));
      // A write that bypasses the sink (the process's own stderr) lands in the current file.
      writeSync(fd, "stray\n");
      expect(readdirSync(dir).sort()).toEqual(["daemon.log", "daemon.log.1", "daemon.log.2", "daemon.log.3"]);
      for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).size).toBeLessThanOrEqual(1_000 + 6);
      // The newest lines, in order and none lost, across the kept files.
      const kept = ["daemon.log.3", "daemon.log.2", "daemon.log.1", "daemon.log"]
        .map((f) => readFileSync(join(dir, f), "utf8"))
        .join("");
      expect(kept).toBe(`${Array.from({ length: 30 }, (_, i) => line(70 + i)).join("")}stray\n`);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
