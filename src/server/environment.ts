/**
 * Every environment variable devicerail reads, once, grouped by the part that owns it: the config
 * loader (config.ts) checks the values of those with a `schema`, `devicerail --help` prints `help`
 * under the group's title, and scripts/gen-readme.ts writes README.md's table from `doc` (its
 * --check keeps the README in step). test/server/environment.test.ts fails when code names a
 * variable this table does not have, or the table one that no code reads.
 * Over 300 lines because it is data: one entry per variable.
 */
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

/**
 * An exact browser origin (`scheme://host[:port]`, as the Origin header spells it); `null` is
 * never allowed.
 */
function originProblem(origin: string): string | null {
  if (!URL.canParse(origin)) return `${JSON.stringify(origin)} is not an origin`;
  const url = new URL(origin);
  if (!/^https?:$/.test(url.protocol) || url.origin !== origin)
    return `${JSON.stringify(origin)} is not an exact origin such as http://localhost:3000 (no path, no trailing slash)`;
  return null;
}

const OriginsSchema = v.pipe(
  v.string(),
  v.transform((text) =>
    text
      .split(",")
      .map((o) => o.trim())
      .filter((o) => o !== ""),
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = dataset.value.map(originProblem).find((p) => p !== null);
    if (problem) addIssue({ message: problem });
  }),
);

/**
 * An integer written as `pattern` allows (no sign, no leading zeros), from `min` to `max`, with
 * one message for every way it can be wrong.
 */
const integerIn = (pattern: RegExp, min: number, max: number, expected: string) =>
  v.pipe(
    v.string(),
    v.regex(pattern, expected),
    v.transform(Number),
    v.minValue(min, expected),
    v.maxValue(max, expected),
  );

/** Who reads a variable: the groups of --help and of the README's table, in this order. */
export const OWNERS = {
  daemon: "The daemon: data, evidence, logs",
  listeners: "Listeners and security",
  devices: "Devices: the Mock, Android, iOS",
  mcp: "MCP",
  farm: "The farm",
  cli: "Commands",
} as const;
export type Owner = keyof typeof OWNERS;

export interface EnvironmentVariable {
  owner: Owner;
  /** One line for --help. */
  help: string;
  /** The README's description (Markdown). */
  doc: string;
  /** The check and default the config loader applies; variables without one are read where they are used. */
  schema?: v.GenericSchema<string | undefined, unknown>;
}

const table = <const T extends Record<string, EnvironmentVariable>>(t: T) => t;

export const ENV = table({
  DEVICERAIL_DATA_DIR: {
    owner: "daemon",
    help: "where Sessions and evidence are kept (one daemon per data directory)",
    doc: "where Sessions and evidence live, and the daemon's `listen.json`, `daemon.sock` and `daemon.log`; default `$XDG_DATA_HOME/devicerail` or `~/.local/share/devicerail` (Linux), `~/Library/Application Support/devicerail` (macOS), `%LOCALAPPDATA%\\devicerail` (Windows); created with mode 0700",
  },
  DEVICERAIL_EVIDENCE_DIR: {
    owner: "daemon",
    help: "the folder for evidence files (default <data dir>/evidence)",
    doc: "the folder for evidence files (default `<data dir>/evidence`); objects small enough to be kept in the database stay in the data directory",
  },
  DEVICERAIL_EVIDENCE_INLINE_BYTES: {
    owner: "daemon",
    help: "largest evidence object kept in the database (default 65536; 0 = files only)",
    doc: "largest evidence object kept in the database instead of a file (default 65536, at most 262144; 0 = every object a file)",
    schema: v.optional(
      integerIn(/^(0|[1-9]\d{0,6})$/, 0, MAX_INLINE_BYTES, `expected a byte count from 0 to ${MAX_INLINE_BYTES}`),
      String(DEFAULT_INLINE_BYTES),
    ),
  },
  DEVICERAIL_SCREENSHOT_POLICY: {
    owner: "daemon",
    help: "capture (default) | omit",
    doc: '`capture` (default) or `omit` (no screenshots; observations carry `screenshotOmission:"policy"`)',
    schema: v.optional(v.picklist(["capture", "omit"]), "capture"),
  },
  DEVICERAIL_LOG_LEVEL: {
    owner: "daemon",
    help: "trace | debug | info (default) | warn | error | fatal | silent",
    doc: "`trace`, `debug`, `info` (default), `warn`, `error`, `fatal`, `silent`; the daemon logs to stderr (a background daemon to `daemon.log`)",
    schema: v.optional(v.picklist(["trace", "debug", "info", "warn", "error", "fatal", "silent"]), "info"),
  },
  DEVICERAIL_RPC_LISTEN: {
    owner: "listeners",
    help: "HOST:PORT of a TCP listener for serve (--listen wins)",
    doc: "`HOST:PORT` of a loopback TCP listener for `serve` (same as `--listen`, which wins)",
    schema: v.optional(ListenAddressSchema),
  },
  DEVICERAIL_RPC_SOCKET: {
    owner: "listeners",
    help: "path of a Unix socket listener for serve (--socket wins)",
    doc: "path of a Unix socket listener for `serve` (same as `--socket`, which wins)",
    schema: v.optional(v.pipe(v.string(), v.minLength(1, "expected a socket path"))),
  },
  DEVICERAIL_TOKEN: {
    owner: "listeners",
    help: "token every socket connection must present (--token wins); commands send it too",
    doc: "the token every socket connection must present (same as `--token`, preferred because argv is visible to other users); CLI commands send it to their daemon, and a background daemon started with it set requires it instead of making `<data dir>/daemon.token`",
    schema: v.optional(
      v.pipe(
        v.string(),
        v.check((t) => tokenProblem(t) === null, "invalid token"),
      ),
    ),
  },
  DEVICERAIL_ALLOWED_ORIGINS: {
    owner: "listeners",
    help: "comma-separated browser Origins the HTTP API accepts (default none)",
    doc: "comma-separated exact browser Origins the HTTP API and WebSockets accept, such as `http://localhost:5173` (default none)",
    schema: v.optional(OriginsSchema, ""),
  },
  DEVICERAIL_HANDSHAKE_TIMEOUT_MS: {
    owner: "listeners",
    help: "how long a socket connection may take to say hello (default 10000)",
    doc: "how long a socket connection may take to finish its handshake: an NDJSON client's `system.hello` answered, an HTTP or WebSocket client's first request head (default 10000, 100…600000)",
    schema: v.optional(integerIn(/^[1-9]\d{2,5}$/, 100, 600_000, "expected milliseconds from 100 to 600000"), "10000"),
  },
  DEVICERAIL_END_OF_INPUT_MS: {
    owner: "daemon",
    help: "after a client's input ends, how long a request without timeoutMs may still run (default 60000)",
    doc: "after a client's input ends (EOF on `serve`'s stdin, a socket client's half-close), how long a request sent without `timeoutMs` may still run before it is cancelled; requests with `timeoutMs` keep their own deadline (default 60000, 100…3600000)",
    schema: v.optional(
      integerIn(/^[1-9]\d{2,6}$/, 100, 3_600_000, "expected milliseconds from 100 to 3600000"),
      "60000",
    ),
  },
  DEVICERAIL_TCP_KEEPALIVE_MS: {
    owner: "listeners",
    help: "idle time before TCP keepalive probes start (default 10000)",
    doc: "idle time before TCP keepalive probes start on a TCP connection (default 10000, 1000…7200000); a peer that vanished is closed about 10 s after that, also when an answer to it is unacknowledged",
    schema: v.optional(
      integerIn(/^[1-9]\d{3,6}$/, 1_000, 7_200_000, "expected milliseconds from 1000 to 7200000"),
      "10000",
    ),
  },
  DEVICERAIL_MOCK: {
    owner: "devices",
    help: "auto (default: only while no real device is present) | on | off",
    doc: "`auto` (default): the Mock is listed only while no real device is present, so one plugged-in phone is the sole device and gets sole-device routing (a Mock that is leased stays until its Session ends); `on`: always listed; `off`: never",
    schema: v.optional(v.picklist(["auto", "on", "off"]), "auto"),
  },
  DEVICERAIL_MOCK_DEVICES: {
    owner: "devices",
    help: "how many mock devices, mock-1 … mock-N (default 1, at most 64)",
    doc: "how many mock devices to register (`mock-1` … `mock-N`, default 1, at most 64)",
    schema: v.optional(integerIn(/^[1-9]\d{0,1}$/, 1, 64, "expected a count from 1 to 64"), "1"),
  },
  DEVICERAIL_MOCK_ID_PREFIX: {
    owner: "devices",
    help: "a prefix for mock device ids: PREFIX-mock-1 … (tell farm hosts' mocks apart)",
    doc: "a prefix for the mock devices' ids (`PREFIX-mock-1` …; lower-case letters, digits and `-`, at most 32), so the Mock devices of several farm hosts have distinct ids",
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "expected lower-case letters, digits and -, at most 32")),
    ),
  },
  DEVICERAIL_MOCK_HANG: {
    owner: "devices",
    help: "none (default) | observe | execute | all: Mock calls hang until cancelled (for testing clients)",
    doc: "`none` (default), `observe`, `execute` or `all`: the Mock's calls wait until they are cancelled or time out, for testing clients' cancellation paths",
    schema: v.optional(v.picklist(["none", "observe", "execute", "all"]), "none"),
  },
  DEVICERAIL_ANDROID: {
    owner: "devices",
    help: "auto (default) | off | required",
    doc: "`auto` (default): use Android phones when an adb server is reachable or can be started, otherwise carry on without them; `off`; `required`: start-up fails (exit 1) with a message when no adb server can be reached or started",
    schema: v.optional(v.picklist(["auto", "off", "required"]), "auto"),
  },
  DEVICERAIL_ADB_PATH: {
    owner: "devices",
    help: "the adb executable that starts a server when none runs",
    doc: "the `adb` executable used to start a server when none runs (default `adb` on `PATH`)",
    schema: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to adb")), "adb"),
  },
  DEVICERAIL_ANDROID_HELPER: {
    owner: "devices",
    help: "use (default) | off | install",
    doc: "Appium's on-device helpers (io.appium.settings and the UiAutomator2 server, see README › Android helpers): `use` (default) uses them on phones where they are installed; `install` also installs them on a phone's first connect; `off` never uses them (the stock shell only)",
    schema: v.optional(v.picklist(["use", "off", "install"]), "use"),
  },
  ANDROID_ADB_SERVER_PORT: {
    owner: "devices",
    help: "the adb server's port (default 5037)",
    doc: "the adb server's port (default 5037), as adb itself reads it",
    schema: v.optional(integerIn(/^[1-9]\d{0,4}$/, 1, 65_535, "expected a TCP port"), "5037"),
  },
  DEVICERAIL_IOS: {
    owner: "devices",
    help: "auto (default) | off | required",
    doc: "`auto` (default): use booted iOS Simulators when `xcrun simctl` works; `off`; `required`: start-up fails without simctl",
    schema: v.optional(v.picklist(["auto", "off", "required"]), "auto"),
  },
  DEVICERAIL_XCRUN_PATH: {
    owner: "devices",
    help: "xcrun, when it is not on PATH",
    doc: "the `xcrun` executable, when it is not on `PATH`",
    schema: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to xcrun"))),
  },
  DEVICERAIL_AXE_PATH: {
    owner: "devices",
    help: "AXe 1.7.0+, when it is not on PATH or in an install place",
    doc: "the `axe` executable (AXe 1.7.0 or later), when it is in none of the places looked at: `PATH`, `/opt/homebrew/bin`, `/usr/local/bin`, `~/.local/bin`",
    schema: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to axe"))),
  },
  DEVICERAIL_IOS_WDA_ENDPOINT: {
    owner: "devices",
    help: "a running WebDriverAgent for simulators without AXe (http://127.0.0.1:PORT)",
    doc: "a running WebDriverAgent (`http://127.0.0.1:PORT`, numeric loopback only) that serves UI trees and input for simulators without AXe",
    schema: v.optional(
      v.pipe(
        v.string(),
        v.regex(
          /^http:\/\/(127\.0\.0\.1|\[::1\]):([1-9]\d{0,4})$/,
          "expected http://127.0.0.1:PORT or http://[::1]:PORT",
        ),
      ),
    ),
  },
  DEVICERAIL_MCP_IMAGE_FORMAT: {
    owner: "mcp",
    help: "jpeg (default) | webp: how MCP tools encode screenshots",
    doc: "`jpeg` (default) or `webp`: the format MCP tools send screenshots to a model in",
    schema: v.optional(v.picklist(["jpeg", "webp"]), "jpeg"),
  },
  DEVICERAIL_MCP_IMAGE_MAX_EDGE: {
    owner: "mcp",
    help: "longest edge of an MCP screenshot in pixels (default 1568)",
    doc: "longest edge of a screenshot an MCP tool returns, in pixels (default 1568, 256 to 4096); larger screens are scaled down and the scale is stated",
    schema: v.optional(integerIn(/^[1-9]\d{2,3}$/, 256, 4096, "expected pixels from 256 to 4096"), "1568"),
  },
  DEVICERAIL_MCP_IMAGE_MAX_BYTES: {
    owner: "mcp",
    help: "largest MCP screenshot in bytes (default 400000)",
    doc: "largest screenshot an MCP tool returns, in bytes (default 400000, 20000 to 700000); quality and then size are lowered until it fits",
    // 700,000 bytes is about 933,000 in base64: with the listing, still under the 1 MB result limit.
    schema: v.optional(integerIn(/^[1-9]\d{4,5}$/, 20_000, 700_000, "expected bytes from 20000 to 700000"), "400000"),
  },
  DEVICERAIL_MCP_ACTION_TIMEOUT_MS: {
    owner: "mcp",
    help: "ms one device action of an MCP tool may take (default 30000)",
    doc: "how long one device action of an MCP tool may take before it fails with `action_timed_out` and its outcome reported unknown (default 30000; `wait_for` uses its own `timeoutMs`)",
    schema: v.optional(
      integerIn(/^[1-9]\d{2,6}$/, 100, 3_600_000, "expected milliseconds from 100 to 3600000"),
      "30000",
    ),
  },
  DEVICERAIL_MCP_IDLE_MS: {
    owner: "mcp",
    help: "ms an MCP client without an event stream may stay silent (default 300000)",
    doc: "how long an MCP client over HTTP that keeps no event stream open may stay silent before its Sessions end and its devices are freed (default 300000)",
    schema: v.optional(
      integerIn(/^[1-9]\d{3,7}$/, 1_000, 86_400_000, "expected milliseconds from 1000 to 86400000"),
      "300000",
    ),
  },
  DEVICERAIL_FARM_URL: {
    owner: "farm",
    help: "postgres://… of a farm to join (needs DEVICERAIL_TOKEN and --listen)",
    doc: "`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` of the farm this daemon joins: it registers its host and devices there and heartbeats (requires `DEVICERAIL_TOKEN` and a TCP listener; never logged)",
    schema: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\/\S+$/, "expected a postgres:// URL"))),
  },
  DEVICERAIL_FARM_ADVERTISE: {
    owner: "farm",
    help: "HOST:PORT farm clients reach this host at (default: the --listen address)",
    doc: "`HOST:PORT` farm clients reach this host at (default: the TCP listener's address)",
    schema: v.optional(ListenAddressSchema),
  },
  DEVICERAIL_FARM_HEARTBEAT_MS: {
    owner: "farm",
    help: "farm heartbeat in ms (default 5000; a host missing 3 is gone)",
    doc: "how often a farm host heartbeats (default 5000); a host that misses three is shown gone with its devices",
    schema: v.optional(integerIn(/^[1-9]\d{1,5}$/, 50, 600_000, "expected milliseconds from 50 to 600000"), "5000"),
  },
  DEVICERAIL_FARM_LEASE_MS: {
    owner: "farm",
    help: "farm allocation lease in ms (default 30000): unclaimed or unrenewed, it lapses",
    doc: "how long a farm allocation lives without renewal (default 30000): an allocation nobody connects with lapses after it, and the owning host renews a claimed one at every heartbeat",
    schema: v.optional(
      integerIn(/^[1-9]\d{2,6}$/, 500, 3_600_000, "expected milliseconds from 500 to 3600000"),
      "30000",
    ),
  },
  DEVICERAIL_FARM_QUARANTINE_FAILURES: {
    owner: "farm",
    help: "infrastructure failures that quarantine a farm device (default 3; 0 = never)",
    doc: "how many infrastructure failures (a device that does not answer in time, adb offline, driver errors, a battery under `DEVICERAIL_FARM_MIN_BATTERY`) within the window quarantine a farm device until an operator clears it with `farm unblock` (default 3; 0 = never)",
    schema: v.optional(integerIn(/^(0|[1-9]\d{0,3})$/, 0, 1_000, "expected a count from 0 to 1000"), "3"),
  },
  DEVICERAIL_FARM_QUARANTINE_WINDOW_MS: {
    owner: "farm",
    help: "the window those failures are counted in (default 600000)",
    doc: "the window the quarantine's failures are counted in, in ms (default 600000, 10 minutes)",
    schema: v.optional(
      integerIn(/^[1-9]\d{2,8}$/, 1_000, 604_800_000, "expected milliseconds from 1000 to 604800000"),
      "600000",
    ),
  },
  DEVICERAIL_FARM_MIN_BATTERY: {
    owner: "farm",
    help: "battery percent under which a farm device's reading counts as a failure (default 15; 0 = never)",
    doc: "the battery level (percent) under which each reading (about once a minute, where the platform reports one: Android) counts as an infrastructure failure towards quarantine (default 15; 0 = never)",
    schema: v.optional(integerIn(/^(0|[1-9]\d?)$/, 0, 99, "expected a percent from 0 to 99"), "15"),
  },
  DEVICERAIL_FARM_HOLDER: {
    owner: "farm",
    help: "who farm acquire says is asking (--holder wins; default user@host)",
    doc: "the name `farm acquire` records as the holder of an allocation, shown to operators (`--holder` wins; default `user@host`)",
  },
  ANDROID_SERIAL: {
    owner: "cli",
    help: "the device device commands use when no -d is given, as adb reads it",
    doc: "the device that device commands (`tap`, `screenshot`, …) use when no `-d` is given, as adb reads it: a device id or a serial `adb devices` prints",
  },
  DEVICERAIL_DEBUG: {
    owner: "cli",
    help: "set to print the stack trace of an unexpected error",
    doc: "set (to anything) to print the stack trace of an unexpected CLI error",
  },
  NO_COLOR: {
    owner: "cli",
    help: "no colour even on a terminal",
    doc: "no colour even on a terminal",
  },
  FORCE_COLOR: {
    owner: "cli",
    help: "colour even when stdout is not a terminal",
    doc: "colour even when stdout is not a terminal (`NO_COLOR` wins)",
  },
});

export type EnvName = keyof typeof ENV;
type Checked = {
  [K in EnvName as (typeof ENV)[K] extends { schema: v.GenericSchema } ? K : never]: (typeof ENV)[K] extends {
    schema: infer S;
  }
    ? S
    : never;
};

/** The variables the config loader checks, as one valibot object. */
export const ENV_SCHEMA = v.object(
  Object.fromEntries(
    Object.entries(ENV).flatMap(([name, e]: [string, EnvironmentVariable]) => (e.schema ? [[name, e.schema]] : [])),
  ) as Checked,
);

const byOwner = () =>
  (Object.keys(OWNERS) as Owner[]).map(
    (owner) => [owner, Object.entries(ENV).filter(([, e]) => e.owner === owner)] as const,
  );

/** The --help section. */
export function environmentHelp(): string {
  const width = Math.max(...Object.keys(ENV).map((n) => n.length)) + 2;
  return byOwner()
    .map(([owner, vars]) =>
      [`  ${OWNERS[owner]}:`, ...vars.map(([n, e]) => `    ${n.padEnd(width)}${e.help}`)].join("\n"),
    )
    .join("\n");
}

/** README.md's table. */
export function environmentTable(): string {
  const rows = byOwner().flatMap(([owner, vars]) => [
    `| **${OWNERS[owner]}** | |`,
    ...vars.map(([n, e]) => `| \`${n}\` | ${e.doc} |`),
  ]);
  return ["| Variable | Values |", "| --- | --- |", ...rows].join("\n");
}
