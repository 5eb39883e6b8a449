import { describe, expect, test } from "bun:test";
import { LogLimiter } from "../../src/transports/log-limiter.ts";
import type { Logger } from "../../src/protocol/rpc-error.ts";

function recording() {
  const lines: [string, object, string | undefined][] = [];
  const summary = Promise.withResolvers<void>();
  const log: Logger = {
    debug: (o, m) => void lines.push(["debug", o, m]),
    info: (o, m) => void lines.push(["info", o, m]),
    warn: (o, m) => {
      lines.push(["warn", o, m]);
      if ("suppressed" in o) summary.resolve();
    },
    error: (o, m) => void lines.push(["error", o, m]),
    child: () => log,
  };
  return { log, lines, summary: summary.promise };
}

describe("LogLimiter", () => {
  test("writes the first lines of an interval and sums up the rest when the interval ends", async () => {
    const { log, lines, summary } = recording();
    const limiter = new LogLimiter(log, 3, 50);
    for (let i = 0; i < 10; i++) limiter.warn({ i }, "refused");
    expect(lines.map(([level, o]) => [level, o])).toEqual([
      ["warn", { i: 0 }],
      ["warn", { i: 1 }],
      ["warn", { i: 2 }],
    ]);
    await summary;
    expect(lines[3]).toEqual([
      "warn",
      { suppressed: 7, intervalMs: 50 },
      "suppressed 7 more log lines about refused requests",
    ]);
  });
});
