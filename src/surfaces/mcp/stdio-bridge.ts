/**
 * `devicerail mcp`: MCP on stdio for hosts that spawn their servers, carried to the machine's
 * daemon's /mcp. The server and all its state live in the daemon; this process only relays
 * messages, so a host that respawns it loses nothing but the process, and the daemon notices
 * its death (the event stream it holds closes) and frees its devices.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  isInitializeRequest,
  isJSONRPCRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { type Endpoint, hostText } from "../../client/endpoint.ts";
import { LIFETIME_HEADER } from "./http.ts";

/** The daemon the bridge relays to (the client's one endpoint type). */
export type DaemonEndpoint = Endpoint;

/** fetch to the daemon, over its Unix socket when it has one. */
function daemonFetch(endpoint: DaemonEndpoint): typeof fetch {
  if (!("socket" in endpoint)) return fetch;
  return ((input: string | URL | Request, init?: RequestInit) =>
    fetch(input, { ...init, unix: endpoint.socket } as RequestInit)) as typeof fetch;
}

const urlOf = (endpoint: DaemonEndpoint) =>
  "socket" in endpoint
    ? new URL("http://localhost/mcp")
    : new URL(`http://${hostText(endpoint.host)}:${endpoint.port}/mcp`);

/**
 * Relays until stdin ends (then the MCP session is ended with DELETE) or the daemon goes. Returns
 * the exit code. Diagnostics go to `warn` (the CLI's stderr); stdout carries MCP messages only.
 */
export async function bridgeStdio(
  endpoint: DaemonEndpoint,
  token: string | null,
  warn: (what: string) => void,
): Promise<number> {
  const headers: Record<string, string> = { [LIFETIME_HEADER]: "stream" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const daemon = new StreamableHTTPClientTransport(urlOf(endpoint), {
    fetch: daemonFetch(endpoint),
    requestInit: { headers },
  });
  const host = new StdioServerTransport();

  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => (done = resolve));
  let initialize: string | number | null = null;
  // Until the session exists (the answer to initialize), later messages wait, in order.
  let ready: Promise<void> = Promise.resolve();

  const answerError = (m: JSONRPCMessage, message: string) => {
    if (isJSONRPCRequest(m))
      void host.send({ jsonrpc: "2.0", id: m.id, error: { code: ErrorCode.InternalError, message } }).catch(() => {});
  };

  // Requests relayed and not yet answered: stdin ending (a piped script) waits for their answers.
  const pending = new Set<string | number>();
  let stdinEnded = false;

  host.onmessage = (m) => {
    if (isJSONRPCRequest(m)) pending.add(m.id);
    if (isInitializeRequest(m)) initialize = (m as { id: string | number }).id;
    const send = () =>
      daemon.send(m).catch((err: Error) => {
        warn(`the daemon did not take a message: ${err.message}`);
        answerError(m, `devicerail daemon unreachable: ${err.message}`);
      });
    if (isInitializeRequest(m)) ready = send();
    else void ready.then(send);
  };
  daemon.onmessage = (m) => {
    // The SDK client would do this itself after initialize; a relay must, so later requests carry the version header.
    if ("id" in m && m.id === initialize && "result" in m)
      daemon.setProtocolVersion((m.result as { protocolVersion: string }).protocolVersion);
    const answered = ("result" in m || "error" in m) && "id" in m ? m.id : undefined;
    void host.send(m).then(
      () => {
        if (answered !== undefined && pending.delete(answered) && stdinEnded && pending.size === 0) void close();
      },
      () => done(0),
    );
  };
  daemon.onerror = (err) => warn(err.message);
  daemon.onclose = () => done(1);

  const close = async () => {
    if (daemon.sessionId) await daemon.terminateSession().catch(() => {});
    done(0);
  };
  const inputEnded = () => {
    stdinEnded = true;
    if (pending.size === 0) void close();
  };
  process.stdin.on("end", inputEnded);
  process.stdin.on("close", inputEnded);
  process.on("SIGTERM", () => void close());
  process.on("SIGINT", () => void close());

  await daemon.start();
  await host.start();
  const code = await finished;
  await daemon.close().catch(() => {});
  return code;
}
