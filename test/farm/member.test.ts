import { describe, expect, test } from "bun:test";
import { FarmMember, farmWhere } from "../../src/farm/member.ts";
import { until } from "../support/wait.ts";

/** A logger that keeps what it is told. */
function memoryLog() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    void lines.push({ level, fields, msg });
  return { lines, log: { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") } as never };
}

describe("farm member", () => {
  test("a database that accepts connections and never answers is reported unreachable, and the heartbeat goes on", async () => {
    // A silent peer: the TCP handshake succeeds, no byte ever comes back.
    let connections = 0;
    const silent = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: { open: () => void connections++, data() {} },
    });
    const { lines, log } = memoryLog();
    const member = new FarmMember({
      url: `postgres://farm:secret-pw@127.0.0.1:${silent.port}/farm`,
      hostId: crypto.randomUUID(),
      hostName: "test",
      version: "0",
      endpoint: "127.0.0.1:1",
      heartbeatMs: 100,
      log,
      devices: async () => [],
    });
    try {
      await member.start();
      await until("the outage reported", () => lines.find((l) => l.level === "warn"), 10_000);
      const warn = lines.find((l) => l.level === "warn");
      expect([warn?.msg, warn?.fields.farm]).toEqual([
        "farm database unreachable; serving local clients, retrying",
        `127.0.0.1:${silent.port}/farm`,
      ]);
      expect(JSON.stringify(lines)).not.toContain("secret-pw");
      expect(member.currentEpoch).toBeNull();
      // It keeps trying: later heartbeats open new connections.
      const seen = connections;
      await until("another attempt", () => connections > seen, 10_000);
    } finally {
      await member.stop();
      silent.stop(true);
    }
  }, 30_000);

  test("names the database by host, port and name only", () => {
    expect([
      farmWhere("postgres://u:p@db.example:6543/farm?sslmode=require"),
      farmWhere("postgresql://db/farm"),
      farmWhere("::"),
    ]).toEqual(["db.example:6543/farm", "db/farm", "(unparsable URL)"]);
  });
});
