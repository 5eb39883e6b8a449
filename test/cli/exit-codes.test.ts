/**
 * One exit-code mapping and one `--json` error shape for every command (README: CLI): 0 ok,
 * 1 runtime failure, 2 usage or configuration error, 3 no daemon running, 130 interrupted; on
 * stdout `{"error": {code, message, data: {code, message, retryable, details}}}`.
 */
import { describe, expect, test } from "bun:test";
import { tempDataDir } from "../support/daemon.ts";
import { cli } from "./run.ts";

const shape = (numeric: number, code: string) => ({
  error: {
    code: numeric,
    message: expect.any(String),
    data: { code, message: expect.any(String), retryable: expect.any(Boolean), details: null },
  },
});
const jsonOf = (stdout: string) => {
  const j = JSON.parse(stdout);
  // message and data.message are one text, as on the wire.
  expect(j.error.data.message).toBe(j.error.message);
  return j;
};

describe("exit codes and the --json error shape", () => {
  test("a command line commander refuses: 2, usage_error", async () => {
    const r = await cli(["sessions", "--limit", "0", "--json"]);
    expect(r.code).toBe(2);
    expect(jsonOf(r.stdout)).toEqual(shape(-32097, "usage_error"));
  });

  test("a usage error a command finds: 2, usage_error, the same shape", async () => {
    const r = await cli(["sessions", "prune", "--json"]);
    expect([r.code, r.stderr]).toEqual([
      2,
      "devicerail: say which Sessions to delete: --older-than AGE or --keep N (one of them)\n",
    ]);
    expect(jsonOf(r.stdout)).toEqual(shape(-32097, "usage_error"));
  });

  test("a configuration the background daemon refuses is a usage error for the command too: 2", async () => {
    const r = await cli(["daemon", "start", "--json"], { DEVICERAIL_LOG_LEVEL: "loud" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid DEVICERAIL_LOG_LEVEL="loud"');
    expect(jsonOf(r.stdout)).toEqual(shape(-32097, "usage_error"));
  }, 30_000);

  test("daemon status with none running: 3", async () => {
    const r = await cli(["daemon", "status", "--json"], { DEVICERAIL_DATA_DIR: tempDataDir() });
    expect([r.code, JSON.parse(r.stdout).running]).toEqual([3, false]);
  });

  test("a daemon's error: 1, the daemon's JSON-RPC error as it came, and no method or number for people", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    try {
      const r = await cli(["report", "00000000-0000-4000-8000-000000000000", "--junit", "x.xml", "--json"], env);
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(/JSON-RPC|-32\d{3}|session\.export|devicerail\.sessions/);
      expect(jsonOf(r.stdout).error.code).toBeLessThan(-32000);
    } finally {
      await cli(["daemon", "stop"], env);
    }
  }, 30_000);
});
