/**
 * MCP clients for the e2e tests, built on the official SDK's Client: `devicerail mcp` over stdio
 * (a child process that attaches to, or starts, the daemon of its data directory) and Streamable
 * HTTP against a daemon's `/mcp`. Every tool result passes through `call`, which keeps it for the
 * size and secret checks.
 */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readRecord } from "../../src/server/daemon-record.ts";
import { ROOT, daemonCommand, daemonEnv, tempDataDir } from "./daemon.ts";
import { until } from "./wait.ts";

export interface ToolResult {
  content: (
    | { type: "text"; text: string }
    | { type: "image"; data: string; mimeType: string }
    | { type: string; [k: string]: unknown }
  )[];
  structuredContent?: any;
  isError?: boolean;
}

/** Every tool result of the run, as the client received it (for the 1 MB bound and the canary checks). */
export const allResults: { tool: string; bytes: number; result: ToolResult }[] = [];

export interface McpPeer extends AsyncDisposable {
  readonly kind: "stdio" | "http";
  readonly client: Client;
  /** The data directory of the daemon behind this client. */
  readonly dataDir: string;
  /** Errors the SDK reported on the transport (a stray line on stdout would land here). */
  readonly transportErrors: string[];
  /** The results of this client's tool calls, in order. */
  readonly results: ToolResult[];
  /** What the client process wrote to stderr (stdio only; empty for HTTP). */
  stderr(): string;
  /** The stdio child's pid (stdio only). */
  pid(): number | null;
  /** Ends the MCP session the way the transport does it: stdin closed (stdio) or DELETE /mcp (HTTP). */
  close(): Promise<void>;
}

/** The base URL of the HTTP side of the daemon serving `dataDir` (from its listen.json). */
export function daemonBase(dataDir: string): string {
  const r = readRecord(dataDir);
  if (!r?.port) throw new Error(`no TCP endpoint in ${dataDir}/listen.json: ${JSON.stringify(r)}`);
  return `http://127.0.0.1:${r.port}`;
}

/**
 * The headers the owner's own clients send to the TCP port of the daemon serving `dataDir`: a
 * daemon started by a command requires its data directory's token (listen.json names the file).
 */
export function ownerAuth(dataDir: string): Record<string, string> {
  const token = ownerToken(dataDir);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** The data directory's token the daemon serving `dataDir` requires on TCP; undefined when it requires none. */
export function ownerToken(dataDir: string): string | undefined {
  const file = readRecord(dataDir)?.tokenFile;
  return file ? readFileSync(file, "utf8").trim() : undefined;
}

/** Waits until the daemon serving `dataDir` has written a record with a TCP port. */
export async function daemonReady(dataDir: string): Promise<string> {
  await until("the daemon's listen.json with a port", () => readRecord(dataDir)?.port !== undefined, 15_000);
  return daemonBase(dataDir);
}

function track(client: Client): string[] {
  const errors: string[] = [];
  client.onerror = (e) => errors.push(String(e?.stack ?? e));
  return errors;
}

/** `devicerail mcp` over stdio on `dataDir` (a fresh one unless given), connected and initialized. */
export async function stdioPeer(opts: { dataDir?: string; env?: Record<string, string> } = {}): Promise<McpPeer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const [command, ...args] = daemonCommand(["mcp"]);
  const transport = new StdioClientTransport({
    command: command as string,
    args,
    cwd: ROOT,
    env: daemonEnv({ ...opts.env, DEVICERAIL_DATA_DIR: dataDir }),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "devicerail-e2e", version: "0.0.0" });
  const transportErrors = track(client);
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`devicerail mcp did not initialize: ${e}; stderr:\n${stderr}`);
  }
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close();
  };
  return {
    kind: "stdio",
    client,
    dataDir,
    transportErrors,
    results: [],
    stderr: () => stderr,
    pid: () => transport.pid,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A Streamable HTTP client on `base` (the daemon's http://host:port), with extra request headers. */
export async function httpPeer(base: string, dataDir: string, headers: Record<string, string> = {}): Promise<McpPeer> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: "devicerail-e2e", version: "0.0.0" });
  const transportErrors = track(client);
  await client.connect(transport);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    // DELETE /mcp ends the MCP session on the server; close() alone only drops the client's side.
    await transport.terminateSession();
    await client.close();
  };
  return {
    kind: "http",
    client,
    dataDir,
    transportErrors,
    results: [],
    stderr: () => "",
    pid: () => null,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** tools/call, keeping the result (and its serialized size) for the run-wide checks. */
export async function call(
  peer: McpPeer,
  tool: string,
  args: Record<string, unknown> = {},
  opts: { timeoutMs?: number } = {},
): Promise<ToolResult> {
  const result = (await peer.client.callTool({ name: tool, arguments: args }, undefined, {
    timeout: opts.timeoutMs ?? 60_000,
  })) as ToolResult;
  allResults.push({ tool, bytes: Buffer.byteLength(JSON.stringify(result)), result });
  peer.results.push(result);
  return result;
}

/** The text of a result's first content item (every devicerail result starts with text). */
export function textOf(result: ToolResult): string {
  const first = result.content[0];
  if (first?.type !== "text") throw new Error(`first content is not text: ${JSON.stringify(result).slice(0, 500)}`);
  return (first as { text: string }).text;
}

/** The decoded bytes and MIME type of a result's image content; null when it has none. */
export function imageOf(result: ToolResult): { bytes: Uint8Array; mimeType: string } | null {
  const image = result.content.find((c) => c.type === "image") as { data: string; mimeType: string } | undefined;
  return image ? { bytes: new Uint8Array(Buffer.from(image.data, "base64")), mimeType: image.mimeType } : null;
}

/** The `@eN` ref of the first tree line that matches `line` (e.g. /Button "Sign in"/). */
export function refIn(text: string, line: RegExp): string {
  for (const l of text.split("\n")) {
    const m = /^\s*(@e\d+)\s/.exec(l);
    if (m && line.test(l)) return m[1] as string;
  }
  throw new Error(`no tree line with a ref matches ${line}:\n${text}`);
}

/** A failing result's parts: the first line's code, the retryable line, and the structured error. */
export function errorOf(result: ToolResult): {
  isError: boolean | undefined;
  code: string | undefined;
  retryable: string | undefined;
  error: any;
  text: string;
} {
  const text = textOf(result);
  return {
    isError: result.isError,
    code: /^([a-z_]+):/.exec(text)?.[1],
    retryable: /^retryable: (true|false)$/m.exec(text)?.[1],
    error: result.structuredContent?.error,
    text,
  };
}
