import * as v from "valibot";
import { tokenProblem } from "../transports/token.ts";
import { ENV_SCHEMA, type ListenAddress, ListenAddressSchema } from "./environment.ts";

export type { ListenAddress };

export type Config = {
  screenshotPolicy: "capture" | "omit";
  logLevel: string;
  /** TCP control listener (DEVICERAIL_RPC_LISTEN); null = serve stdio. */
  listen?: ListenAddress | null;
  /** Unix socket control listener (DEVICERAIL_RPC_SOCKET); null = none. */
  socket?: string | null;
  /** Shared secret every socket connection must present (DEVICERAIL_TOKEN); never logged. */
  token?: string | null;
  /** Exact Origins the HTTP API and JSON-RPC WebSocket accept (DEVICERAIL_ALLOWED_ORIGINS); empty = none. */
  allowedOrigins?: readonly string[];
  /** How long a socket connection may take to say hello or send its first HTTP request head (DEVICERAIL_HANDSHAKE_TIMEOUT_MS). */
  handshakeMs: number;
  /** TCP keepalive idle time before probes start (DEVICERAIL_TCP_KEEPALIVE_MS): a vanished peer is closed about 10 s after it. */
  keepAliveMs: number;
  /** After a client's input ends, how long a request without timeoutMs may still run. */
  endOfInputMs: number;
  /** How many mock devices (mock-1 … mock-N) to register: a device farm in a box for multi-client use. */
  mockDevices: number;
  /** Largest Evidence object kept in the database instead of a file (DEVICERAIL_EVIDENCE_INLINE_BYTES); 0 = every object a file. */
  evidenceInlineBytes?: number;
  /** Mock observations/actions hang until aborted: for cancellation and timeout tests. */
  mockHang: "none" | "observe" | "execute" | "all";
  /** auto: the Mock is listed only while no real device is present; on: always; off: never. */
  mock: "auto" | "on" | "off";
  /** auto: use adb when it is there; off: never; required: start-up fails without a reachable adb server. */
  android: "auto" | "off" | "required";
  adbPath: string;
  adbServerPort: number;
  /** Appium's on-device helpers (DEVICERAIL_ANDROID_HELPER): off; use where installed (default); install on first connect. */
  androidHelper: "off" | "use" | "install";
  /** auto: use iOS Simulators when xcrun works; off; required: start-up fails without simctl. */
  ios: "auto" | "off" | "required";
  axePath: string | null;
  xcrunPath: string | null;
  /** A running WebDriverAgent for simulators without AXe (numeric loopback only). */
  wdaEndpoint: string | null;
  /** How MCP tools encode screenshots for a model. */
  mcpImage: { format: "jpeg" | "webp"; maxEdge: number; maxBytes: number };
  /** How long one device action of an MCP tool may take before it fails with its outcome unknown. */
  mcpActionTimeoutMs: number;
  /** How long an MCP client without an open event stream may stay silent before its Sessions end. */
  mcpIdleMs: number;
  /** The farm this daemon joins (DEVICERAIL_FARM_URL, never logged), the address it advertises, and its heartbeat. */
  farm: {
    url: string;
    advertise: ListenAddress | null;
    heartbeatMs: number;
    leaseMs: number;
    quarantine: { failures: number; windowMs: number };
    minBattery: number;
  } | null;
  /** Prefix of the mock devices' ids (DEVICERAIL_MOCK_ID_PREFIX): PREFIX-mock-N. */
  mockIdPrefix?: string | null;
};

export class ConfigError extends Error {}

/** Environment settings, checked once at start-up so a typo fails loudly instead of being ignored. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = v.safeParse(ENV_SCHEMA, env);
  if (!r.success) {
    const issue = r.issues[0];
    const key = issue.path?.map((p) => String(p.key)).join(".") ?? "environment";
    // The token's value must never reach stderr or a log, not even a mistyped one.
    if (key === "DEVICERAIL_TOKEN")
      throw new ConfigError(`invalid DEVICERAIL_TOKEN: ${tokenProblem(String(env.DEVICERAIL_TOKEN))}`);
    // The URL may hold the database password.
    if (key === "DEVICERAIL_FARM_URL")
      throw new ConfigError("invalid DEVICERAIL_FARM_URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE");
    throw new ConfigError(`invalid ${key}=${JSON.stringify(issue.input)}: ${issue.message}`);
  }
  return {
    screenshotPolicy: r.output.DEVICERAIL_SCREENSHOT_POLICY,
    logLevel: r.output.DEVICERAIL_LOG_LEVEL,
    listen: r.output.DEVICERAIL_RPC_LISTEN ?? null,
    socket: r.output.DEVICERAIL_RPC_SOCKET ?? null,
    token: r.output.DEVICERAIL_TOKEN ?? null,
    allowedOrigins: r.output.DEVICERAIL_ALLOWED_ORIGINS,
    handshakeMs: r.output.DEVICERAIL_HANDSHAKE_TIMEOUT_MS,
    keepAliveMs: r.output.DEVICERAIL_TCP_KEEPALIVE_MS,
    endOfInputMs: r.output.DEVICERAIL_END_OF_INPUT_MS,
    mockDevices: r.output.DEVICERAIL_MOCK_DEVICES,
    evidenceInlineBytes: r.output.DEVICERAIL_EVIDENCE_INLINE_BYTES,
    mockHang: r.output.DEVICERAIL_MOCK_HANG,
    mock: r.output.DEVICERAIL_MOCK,
    android: r.output.DEVICERAIL_ANDROID,
    adbPath: r.output.DEVICERAIL_ADB_PATH,
    adbServerPort: r.output.ANDROID_ADB_SERVER_PORT,
    androidHelper: r.output.DEVICERAIL_ANDROID_HELPER,
    ios: r.output.DEVICERAIL_IOS,
    axePath: r.output.DEVICERAIL_AXE_PATH ?? null,
    xcrunPath: r.output.DEVICERAIL_XCRUN_PATH ?? null,
    wdaEndpoint: r.output.DEVICERAIL_IOS_WDA_ENDPOINT ?? null,
    mcpImage: {
      format: r.output.DEVICERAIL_MCP_IMAGE_FORMAT,
      maxEdge: r.output.DEVICERAIL_MCP_IMAGE_MAX_EDGE,
      maxBytes: r.output.DEVICERAIL_MCP_IMAGE_MAX_BYTES,
    },
    mcpIdleMs: r.output.DEVICERAIL_MCP_IDLE_MS,
    mcpActionTimeoutMs: r.output.DEVICERAIL_MCP_ACTION_TIMEOUT_MS,
    farm: r.output.DEVICERAIL_FARM_URL
      ? {
          url: r.output.DEVICERAIL_FARM_URL,
          advertise: r.output.DEVICERAIL_FARM_ADVERTISE ?? null,
          heartbeatMs: r.output.DEVICERAIL_FARM_HEARTBEAT_MS,
          leaseMs: r.output.DEVICERAIL_FARM_LEASE_MS,
          quarantine: {
            failures: r.output.DEVICERAIL_FARM_QUARANTINE_FAILURES,
            windowMs: r.output.DEVICERAIL_FARM_QUARANTINE_WINDOW_MS,
          },
          minBattery: r.output.DEVICERAIL_FARM_MIN_BATTERY,
        }
      : null,
    mockIdPrefix: r.output.DEVICERAIL_MOCK_ID_PREFIX ?? null,
  };
}

/** Parses a `--listen` value like DEVICERAIL_RPC_LISTEN; throws ConfigError naming the value. */
export function parseListenAddress(text: string, name = "--listen"): ListenAddress {
  const r = v.safeParse(ListenAddressSchema, text);
  if (!r.success) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: ${r.issues[0].message}`);
  return r.output;
}
