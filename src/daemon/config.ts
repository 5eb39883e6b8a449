import * as v from "valibot";
import { DEFAULT_INLINE_BYTES, MAX_INLINE_BYTES } from "../core/evidence/inline-limits.ts";
import { tokenProblem } from "../transports/token.ts";

export type ListenAddress = { host: string; port: number };

/** `HOST:PORT` for the TCP control listener; IPv6 in brackets (`[::1]:PORT`). Port 0 = the OS picks. */
export const ListenAddressSchema = v.pipe(
  v.string(),
  v.regex(/^(\[[0-9A-Fa-f:.]+\]|[^\s:\[\]]+):(0|[1-9]\d{0,4})$/, "expected HOST:PORT (IPv6 as [::1]:PORT)"),
  v.check((text) => Number(text.slice(text.lastIndexOf(":") + 1)) <= 65_535, "port must be 0…65535"),
  v.transform((text): ListenAddress => {
    const colon = text.lastIndexOf(":");
    const host = text.slice(0, colon);
    return { host: host.startsWith("[") ? host.slice(1, -1) : host, port: Number(text.slice(colon + 1)) };
  }),
);

/** An exact browser origin (`scheme://host[:port]`, as the Origin header spells it); `null` is never allowed. */
function originProblem(origin: string): string | null {
  if (!URL.canParse(origin)) return `${JSON.stringify(origin)} is not an origin`;
  const url = new URL(origin);
  if (!/^https?:$/.test(url.protocol) || url.origin !== origin) return `${JSON.stringify(origin)} is not an exact origin such as http://localhost:3000 (no path, no trailing slash)`;
  return null;
}

const OriginsSchema = v.pipe(
  v.string(),
  v.transform((text) => text.split(",").map((o) => o.trim()).filter((o) => o !== "")),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = dataset.value.map(originProblem).find((p) => p !== null);
    if (problem) addIssue({ message: problem });
  }),
);

/** An integer written as `pattern` allows (no sign, no leading zeros), from `min` to `max`, with one message for every way it can be wrong. */
const integerIn = (pattern: RegExp, min: number, max: number, expected: string) =>
  v.pipe(v.string(), v.regex(pattern, expected), v.transform(Number), v.minValue(min, expected), v.maxValue(max, expected));

const EnvSchema = v.object({
  DEVICERAIL_SCREENSHOT_POLICY: v.optional(v.picklist(["capture", "omit"]), "capture"),
  DEVICERAIL_LOG_LEVEL: v.optional(v.picklist(["trace", "debug", "info", "warn", "error", "fatal", "silent"]), "info"),
  DEVICERAIL_RPC_LISTEN: v.optional(ListenAddressSchema),
  DEVICERAIL_RPC_SOCKET: v.optional(v.pipe(v.string(), v.minLength(1, "expected a socket path"))),
  DEVICERAIL_TOKEN: v.optional(v.pipe(v.string(), v.check((t) => tokenProblem(t) === null, "invalid token"))),
  DEVICERAIL_ALLOWED_ORIGINS: v.optional(OriginsSchema, ""),
  DEVICERAIL_MOCK_DEVICES: v.optional(
    integerIn(/^[1-9]\d{0,1}$/, 1, 64, "expected a count from 1 to 64"),
    "1",
  ),
  DEVICERAIL_MOCK_ID_PREFIX: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "expected lower-case letters, digits and -, at most 32"))),
  DEVICERAIL_EVIDENCE_INLINE_BYTES: v.optional(
    integerIn(/^(0|[1-9]\d{0,6})$/, 0, MAX_INLINE_BYTES, `expected a byte count from 0 to ${MAX_INLINE_BYTES}`),
    String(DEFAULT_INLINE_BYTES),
  ),
  DEVICERAIL_HANDSHAKE_TIMEOUT_MS: v.optional(
    integerIn(/^[1-9]\d{2,5}$/, 100, 600_000, "expected milliseconds from 100 to 600000"),
    "10000",
  ),
  DEVICERAIL_TCP_KEEPALIVE_MS: v.optional(
    integerIn(/^[1-9]\d{3,6}$/, 1_000, 7_200_000, "expected milliseconds from 1000 to 7200000"),
    "10000",
  ),
  DEVICERAIL_MOCK_HANG: v.optional(v.picklist(["none", "observe", "execute", "all"]), "none"),
  DEVICERAIL_MOCK: v.optional(v.picklist(["auto", "on", "off"]), "auto"),
  DEVICERAIL_ANDROID: v.optional(v.picklist(["auto", "off", "required"]), "auto"),
  DEVICERAIL_ADB_PATH: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to adb")), "adb"),
  DEVICERAIL_IOS: v.optional(v.picklist(["auto", "off", "required"]), "auto"),
  DEVICERAIL_AXE_PATH: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to axe"))),
  DEVICERAIL_XCRUN_PATH: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to xcrun"))),
  DEVICERAIL_IOS_WDA_ENDPOINT: v.optional(v.pipe(v.string(), v.regex(/^http:\/\/(127\.0\.0\.1|\[::1\]):([1-9]\d{0,4})$/, "expected http://127.0.0.1:PORT or http://[::1]:PORT"))),
  DEVICERAIL_MCP_IMAGE_FORMAT: v.optional(v.picklist(["jpeg", "webp"]), "jpeg"),
  DEVICERAIL_MCP_IMAGE_MAX_EDGE: v.optional(
    integerIn(/^[1-9]\d{2,3}$/, 256, 4096, "expected pixels from 256 to 4096"),
    "1568",
  ),
  // 700,000 bytes is about 933,000 in base64: with the listing, still under the 1 MB result limit.
  DEVICERAIL_MCP_IMAGE_MAX_BYTES: v.optional(
    integerIn(/^[1-9]\d{4,5}$/, 20_000, 700_000, "expected bytes from 20000 to 700000"),
    "400000",
  ),
  DEVICERAIL_MCP_ACTION_TIMEOUT_MS: v.optional(
    integerIn(/^[1-9]\d{2,6}$/, 100, 3_600_000, "expected milliseconds from 100 to 3600000"),
    "30000",
  ),
  DEVICERAIL_MCP_IDLE_MS: v.optional(
    integerIn(/^[1-9]\d{3,7}$/, 1_000, 86_400_000, "expected milliseconds from 1000 to 86400000"),
    "300000",
  ),
  DEVICERAIL_FARM_URL: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\/\S+$/, "expected a postgres:// URL"))),
  DEVICERAIL_FARM_ADVERTISE: v.optional(ListenAddressSchema),
  DEVICERAIL_FARM_HEARTBEAT_MS: v.optional(
    integerIn(/^[1-9]\d{1,5}$/, 50, 600_000, "expected milliseconds from 50 to 600000"),
    "5000",
  ),
  DEVICERAIL_FARM_LEASE_MS: v.optional(
    integerIn(/^[1-9]\d{2,6}$/, 500, 3_600_000, "expected milliseconds from 500 to 3600000"),
    "30000",
  ),
  DEVICERAIL_FARM_QUARANTINE_FAILURES: v.optional(integerIn(/^(0|[1-9]\d{0,3})$/, 0, 1_000, "expected a count from 0 to 1000"), "3"),
  DEVICERAIL_FARM_MIN_BATTERY: v.optional(integerIn(/^(0|[1-9]\d?)$/, 0, 99, "expected a percent from 0 to 99"), "15"),
  DEVICERAIL_FARM_QUARANTINE_WINDOW_MS: v.optional(
    integerIn(/^[1-9]\d{2,8}$/, 1_000, 604_800_000, "expected milliseconds from 1000 to 604800000"),
    "600000",
  ),
  ANDROID_ADB_SERVER_PORT: v.optional(
    integerIn(/^[1-9]\d{0,4}$/, 1, 65_535, "expected a TCP port"),
    "5037",
  ),
});

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
  const r = v.safeParse(EnvSchema, env);
  if (!r.success) {
    const issue = r.issues[0];
    const key = issue.path?.map((p) => String(p.key)).join(".") ?? "environment";
    // The token's value must never reach stderr or a log, not even a mistyped one.
    if (key === "DEVICERAIL_TOKEN") throw new ConfigError(`invalid DEVICERAIL_TOKEN: ${tokenProblem(String(env.DEVICERAIL_TOKEN))}`);
    // The URL may hold the database password.
    if (key === "DEVICERAIL_FARM_URL") throw new ConfigError("invalid DEVICERAIL_FARM_URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE");
    throw new ConfigError(`invalid ${key}=${JSON.stringify(issue.input)}: ${issue.message}`);
  }
  return {
    screenshotPolicy: r.output.DEVICERAIL_SCREENSHOT_POLICY,
    logLevel: r.output.DEVICERAIL_LOG_LEVEL,
    listen: r.output.DEVICERAIL_RPC_LISTEN ?? null,
    socket: r.output.DEVICERAIL_RPC_SOCKET ?? null,
    token: r.output.DEVICERAIL_TOKEN ?? null,
    allowedOrigins: r.output.DEVICERAIL_ALLOWED_ORIGINS as string[],
    handshakeMs: r.output.DEVICERAIL_HANDSHAKE_TIMEOUT_MS as number,
    keepAliveMs: r.output.DEVICERAIL_TCP_KEEPALIVE_MS as number,
    mockDevices: r.output.DEVICERAIL_MOCK_DEVICES as number,
    evidenceInlineBytes: r.output.DEVICERAIL_EVIDENCE_INLINE_BYTES as number,
    mockHang: r.output.DEVICERAIL_MOCK_HANG,
    mock: r.output.DEVICERAIL_MOCK,
    android: r.output.DEVICERAIL_ANDROID,
    adbPath: r.output.DEVICERAIL_ADB_PATH,
    adbServerPort: r.output.ANDROID_ADB_SERVER_PORT as number,
    ios: r.output.DEVICERAIL_IOS,
    axePath: r.output.DEVICERAIL_AXE_PATH ?? null,
    xcrunPath: r.output.DEVICERAIL_XCRUN_PATH ?? null,
    wdaEndpoint: r.output.DEVICERAIL_IOS_WDA_ENDPOINT ?? null,
    mcpImage: { format: r.output.DEVICERAIL_MCP_IMAGE_FORMAT, maxEdge: r.output.DEVICERAIL_MCP_IMAGE_MAX_EDGE as number, maxBytes: r.output.DEVICERAIL_MCP_IMAGE_MAX_BYTES as number },
    mcpIdleMs: r.output.DEVICERAIL_MCP_IDLE_MS as number,
    mcpActionTimeoutMs: r.output.DEVICERAIL_MCP_ACTION_TIMEOUT_MS as number,
    farm: r.output.DEVICERAIL_FARM_URL
      ? {
          url: r.output.DEVICERAIL_FARM_URL,
          advertise: r.output.DEVICERAIL_FARM_ADVERTISE ?? null,
          heartbeatMs: r.output.DEVICERAIL_FARM_HEARTBEAT_MS as number,
          leaseMs: r.output.DEVICERAIL_FARM_LEASE_MS as number,
          quarantine: { failures: r.output.DEVICERAIL_FARM_QUARANTINE_FAILURES as number, windowMs: r.output.DEVICERAIL_FARM_QUARANTINE_WINDOW_MS as number },
          minBattery: r.output.DEVICERAIL_FARM_MIN_BATTERY as number,
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
