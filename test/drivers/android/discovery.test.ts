import { describe, expect, test } from "bun:test";
import type { AdbkitPort, TrackHandlers } from "../../../drivers/android/adbkit-port.ts";
import { Discovery } from "../../../drivers/android/discovery.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";

/** An adb server that answers once, then is gone: every later request fails. */
function vanishingServer() {
  const calls: string[] = [];
  let up = true;
  let handlers: TrackHandlers | null = null;
  const answer = async <T>(name: string, value: T): Promise<T> => {
    calls.push(name);
    if (!up) throw new Error("connect ECONNREFUSED 127.0.0.1:5037");
    return value;
  };
  const port = {
    opts: { port: 5037, bin: "adb" },
    version: () => answer("version", 41),
    startServer: () => answer("startServer", undefined),
    clientVersion: () => answer("clientVersion", 41),
    listDevices: () => answer("listDevices", []),
    properties: () => answer("properties", {}),
    track: async (h: TrackHandlers) => {
      handlers = h;
      return answer("track", { stop: () => {} });
    },
  };
  return {
    port: port as unknown as AdbkitPort,
    calls,
    /** The server dies: the tracking connection ends. */
    kill() {
      up = false;
      handlers?.onEnd(new Error("socket closed"));
    },
  };
}

describe("Discovery", () => {
  test("stop ends the wait before the next recovery attempt at once when the adb server went away", async () => {
    const server = vanishingServer();
    const discovery = new Discovery(server.port, () => {}, silentLogger);
    await discovery.start();
    server.kill();
    const t0 = performance.now();
    await discovery.stop();
    const elapsed = performance.now() - t0;
    // The first wait is 250 ms; stop must not sit it out, and no attempt follows it.
    expect([elapsed < 200 ? "at once" : `${elapsed} ms`, server.calls]).toEqual([
      "at once",
      ["version", "clientVersion", "track", "listDevices"],
    ]);
  });
});
