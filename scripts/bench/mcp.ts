/**
 * The cost of observing through MCP against JSON-RPC, both in this run, on one daemon (TCP) and
 * its Mock device: BENCH_MCP_CALLS (default 200) `device_observe` tool calls over Streamable HTTP
 * in one MCP session, then as many observations over one NDJSON JSON-RPC connection; 10 warm-up
 * calls each first.
 *
 *   bun scripts/bench/mcp.ts
 *
 * Fairness: `device_observe` (screenshot and tree by default) answers the tree as text and the
 * screenshot inline, so the JSON-RPC side fetches the tree too: `device.observe` and then
 * `ui.snapshot.get` for that observation, two round trips per iteration. The screenshot is where
 * the two differ by design: JSON-RPC answers a reference to the stored PNG, MCP the JPEG bytes in
 * base64, downscaled to its limits (cached by digest, so an unchanged screen is encoded once).
 * That transfer is part of what an MCP client pays, and it is measured. The device lease is
 * exclusive, so the phases run one after the other; the MCP session is ended (DELETE) before the
 * JSON-RPC Session starts. Then Bun.Image's encode time, uncached, for the Mock's screenshot and
 * for the same picture at a phone's 1080x2400: what a changed screen adds to an MCP observation.
 *
 * Last line: `mcp: observe p50 X ms, rpc p50 Y ms, ratio R` (R = X / Y).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEFAULT_IMAGE_SETTINGS, encodeForModel } from "../../src/surfaces/mcp/image.ts";
import { ROOT, daemonCommand } from "../../test/support/daemon.ts";
import { helloParams } from "../../test/support/hello.ts";
import { TcpClient, listeningPort } from "../../test/support/tcp-client.ts";

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 200);
const WARMUP = 10;
const dataDir = mkdtempSync(join(tmpdir(), "devicerail-bench-mcp-"));
const daemon = Bun.spawn(daemonCommand(["serve", "--listen", "127.0.0.1:0"]), {
  cwd: ROOT,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "inherit",
  env: {
    ...process.env,
    DEVICERAIL_DATA_DIR: dataDir,
    DEVICERAIL_LOG_LEVEL: "error",
    DEVICERAIL_ANDROID: "off",
    DEVICERAIL_IOS: "off",
    DEVICERAIL_MOCK_DEVICES: "1",
  },
});
const port = await listeningPort(daemon.stdout);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const f = (n: number) => n.toFixed(2);

type ToolResult = { content: { type: string; text?: string }[]; structuredContent?: any; isError?: boolean };

/** `device_observe` over Streamable HTTP; returns the timings and the encoded image sizes seen. */
async function mcpPhase(): Promise<{
  deviceId: string;
  times: number[];
  images: Map<string, number>;
  sha256: string | null;
}> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  const client = new Client({ name: "devicerail-bench", version: "0.0.0" });
  await client.connect(transport);
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as ToolResult;
    if (r.isError) throw new Error(`${name}: ${r.content[0]?.text}`);
    return r;
  };
  const deviceId = (await tool("devices_list", {})).structuredContent.devices[0].id as string;
  const images = new Map<string, number>();
  const times: number[] = [];
  let sha256: string | null = null;
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const t = performance.now();
    const r = await tool("device_observe", { deviceId });
    const ms = performance.now() - t;
    if (i < WARMUP) continue;
    times.push(ms);
    const img = r.structuredContent.image as {
      width: number;
      height: number;
      bytes: number;
      mimeType: string;
      scale: number;
      sha256: string;
    } | null;
    sha256 = img?.sha256 ?? sha256;
    const key = img
      ? `${img.mimeType} ${img.width}x${img.height} (scale ${img.scale}), ${img.bytes} bytes; result ${Buffer.byteLength(JSON.stringify(r))} bytes`
      : "no image";
    images.set(key, (images.get(key) ?? 0) + 1);
  }
  await transport.terminateSession();
  await client.close();
  return { deviceId, times, images, sha256 };
}

/** The same observation over JSON-RPC on TCP: device.observe, then ui.snapshot.get of it. */
async function rpcPhase(deviceId: string): Promise<{ times: number[]; nodes: number }> {
  const c = await TcpClient.connect(port);
  const must = async (method: string, params?: unknown) => {
    const r = await c.call(method, params);
    if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
    return r.result;
  };
  await must("system.hello", helloParams());
  await must("device.select", { deviceId });
  await must("device.connect");
  // The MCP session's lease is freed as its session ends, which may trail the DELETE a little.
  const deadline = Date.now() + 5_000;
  for (;;) {
    const r = await c.call("session.start");
    if (r.result) break;
    if (Date.now() > deadline) throw new Error(`session.start: ${JSON.stringify(r.error)}`);
  }
  const times: number[] = [];
  let nodes = 0;
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const t = performance.now();
    const obs = await must("device.observe");
    const snapshot = await must("ui.snapshot.get", { observationId: obs.id });
    const ms = performance.now() - t;
    nodes = snapshot.nodes.length;
    if (i >= WARMUP) times.push(ms);
  }
  await must("session.end");
  c.close();
  return { times, nodes };
}

/**
 * Bun.Image's cost for one screenshot, uncached: the Mock's stored PNG as it is, and the same
 * picture at a phone's 1080x2400 (scaled to the 1568 px long edge on the way).
 */
async function encodeTimes(sha256: string | null): Promise<string[]> {
  if (!sha256) return ["encode: no screenshot to time"];
  const png = new Uint8Array(await (await fetch(`http://127.0.0.1:${port}/evidence/${sha256}`)).arrayBuffer());
  const phone = await new Bun.Image(png).resize(1080, 2400).png().bytes();
  const lines: string[] = [];
  for (const [name, bytes] of [
    ["mock 1280x720", png],
    ["phone 1080x2400", phone],
  ] as const) {
    const ms: number[] = [];
    let out = "";
    for (let i = 0; i < 25; i++) {
      const img = await encodeForModel(bytes, DEFAULT_IMAGE_SETTINGS);
      if (i >= 5) ms.push(img.encodeMs);
      out = `${img.width}x${img.height} ${img.mimeType} q${img.quality}, ${img.data.length} bytes`;
    }
    lines.push(`encode ${name} PNG (${bytes.length} bytes) → ${out}: p50 ${f(quantile(ms, 0.5))} ms`);
  }
  return lines;
}

try {
  const mcp = await mcpPhase();
  const rpc = await rpcPhase(mcp.deviceId);
  const [mcp50, rpc50] = [quantile(mcp.times, 0.5), quantile(rpc.times, 0.5)];
  process.stdout.write(`device ${mcp.deviceId}, ${CALLS} calls each after ${WARMUP} warm-up calls\n`);
  for (const [size, n] of mcp.images) process.stdout.write(`mcp image: ${size} (${n} calls)\n`);
  for (const line of await encodeTimes(mcp.sha256)) process.stdout.write(`${line}\n`);
  process.stdout.write(`mcp device_observe: p50 ${f(mcp50)} ms, p95 ${f(quantile(mcp.times, 0.95))} ms\n`);
  process.stdout.write(
    `rpc device.observe + ui.snapshot.get (${rpc.nodes} nodes): p50 ${f(rpc50)} ms, p95 ${f(quantile(rpc.times, 0.95))} ms\n`,
  );
  process.stdout.write(`mcp: observe p50 ${f(mcp50)} ms, rpc p50 ${f(rpc50)} ms, ratio ${f(mcp50 / rpc50)}\n`);
} finally {
  daemon.kill("SIGTERM");
  await daemon.exited;
  rmSync(dataDir, { recursive: true, force: true });
}
