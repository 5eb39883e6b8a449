import { describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig } from "../../../src/server/config.ts";
import { McpHttp } from "../../../src/surfaces/mcp/http.ts";
import { localConnect } from "../../../src/server/local-connect.ts";
import { McpHub } from "../../../src/surfaces/mcp/server.ts";
import { createDaemon } from "../../../src/server/server.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import { selectorMatcher } from "../../../src/core/devices/semantic/index.ts";
import { tempDataDir } from "../../support/daemon.ts";

/** The daemon's MCP endpoint in this process, so what it keeps can be counted on its heap. */
async function inProcessMcp() {
  const env = {
    DEVICERAIL_DATA_DIR: tempDataDir(),
    DEVICERAIL_ANDROID: "off",
    DEVICERAIL_IOS: "off",
    DEVICERAIL_MOCK_DEVICES: "1",
  };
  const daemon = await createDaemon(loadConfig(env), silentLogger, env);
  const hub = new McpHub({
    connect: localConnect(daemon.dispatcher, daemon.services, silentLogger),
    log: silentLogger,
    serverVersion: "test",
    evidence: daemon.evidence,
    references: (sessionId, sha) => daemon.core.log.references(sessionId, sha),
    actionTimeoutMs: 10_000,
    matchSelector: selectorMatcher,
  });
  const mcp = new McpHttp(hub, { log: silentLogger, idleMs: 60_000, graceMs: 5_000, maxSessions: 4 });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => mcp.handle(req, req.method === "POST" ? await req.text() : ""),
  });
  return {
    url: new URL(`http://127.0.0.1:${server.port}/mcp`),
    async [Symbol.asyncDispose]() {
      await mcp.stop();
      await server.stop(true);
      await daemon.shutdown();
    },
  };
}

/** Live objects of a type after a full collection. */
function live(type: string): number {
  Bun.gc(true);
  return heapStats().objectTypeCounts[type] ?? 0;
}

describe("McpHttp", () => {
  test("keeps no request of an answered tool call when one MCP session makes many calls", async () => {
    await using endpoint = await inProcessMcp();
    const client = new Client({ name: "many-calls", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(endpoint.url));
    const listed = await client.callTool({ name: "devices_list", arguments: {} });
    const deviceId = (listed.structuredContent as { devices: { id: string }[] }).devices[0]?.id as string;
    const summary = "s".repeat(16_000);
    const verdicts = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await client.callTool({ name: "session_verdict", arguments: { deviceId, status: "pass", summary } });
        expect(r.isError).toBeFalsy();
      }
    };
    await verdicts(20);
    const before = { requests: live("Request"), heap: heapStats().heapSize };
    await verdicts(300);
    const after = { requests: live("Request"), heap: heapStats().heapSize };
    // Each kept call would be one Request and its 16,000-character arguments: 300 and about 10 MB.
    expect(after.requests - before.requests).toBeLessThan(30);
    expect(after.heap - before.heap).toBeLessThan(3_000_000);
    await client.close();
  });
});
