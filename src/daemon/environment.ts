/**
 * Every environment variable devicerail reads, once: `devicerail --help` prints `help`, and
 * scripts/gen-readme.ts writes README.md's table from `doc` (its --check keeps them in step), so
 * the two never list different variables. config.ts checks the values.
 */
export interface EnvironmentVariable {
  name: string;
  /** One line for --help. */
  help: string;
  /** The README's description (Markdown). */
  doc: string;
}

export const ENVIRONMENT: readonly EnvironmentVariable[] = [
  {
    name: "DEVICERAIL_DATA_DIR",
    help: "where Sessions and evidence are kept (one daemon per data directory)",
    doc: "where Sessions and evidence live, and the daemon's `listen.json`, `daemon.sock` and `daemon.log`; default `$XDG_DATA_HOME/devicerail` or `~/.local/share/devicerail` (Linux), `~/Library/Application Support/devicerail` (macOS), `%LOCALAPPDATA%\\devicerail` (Windows); created with mode 0700",
  },
  {
    name: "DEVICERAIL_EVIDENCE_DIR",
    help: "the folder for evidence files (default <data dir>/evidence)",
    doc: "the folder for evidence files (default `<data dir>/evidence`); objects small enough to be kept in the database stay in the data directory",
  },
  {
    name: "DEVICERAIL_EVIDENCE_INLINE_BYTES",
    help: "largest evidence object kept in the database (default 65536; 0 = files only)",
    doc: "largest evidence object kept in the database instead of a file (default 65536, at most 262144; 0 = every object a file)",
  },
  { name: "DEVICERAIL_RPC_LISTEN", help: "HOST:PORT of a TCP listener for serve (--listen wins)", doc: "`HOST:PORT` of a loopback TCP listener for `serve` (same as `--listen`, which wins)" },
  { name: "DEVICERAIL_RPC_SOCKET", help: "path of a Unix socket listener for serve (--socket wins)", doc: "path of a Unix socket listener for `serve` (same as `--socket`, which wins)" },
  {
    name: "DEVICERAIL_TOKEN",
    help: "token every socket connection must present (--token wins); commands send it too",
    doc: "the token every socket connection must present (same as `--token`, preferred because argv is visible to other users); CLI commands send it to their daemon",
  },
  {
    name: "DEVICERAIL_ALLOWED_ORIGINS",
    help: "comma-separated browser Origins the HTTP API accepts (default none)",
    doc: "comma-separated exact browser Origins the HTTP API and WebSockets accept, such as `http://localhost:5173` (default none)",
  },
  {
    name: "DEVICERAIL_MOCK",
    help: "auto (default: only while no real device is present) | on | off",
    doc: "`auto` (default): the Mock is listed only while no real device is present, so one plugged-in phone is the sole device and gets sole-device routing (a Mock that is leased stays until its Session ends); `on`: always listed; `off`: never",
  },
  { name: "DEVICERAIL_MOCK_DEVICES", help: "how many mock devices, mock-1 … mock-N (default 1, at most 64)", doc: "how many mock devices to register (`mock-1` … `mock-N`, default 1, at most 64)" },
  {
    name: "DEVICERAIL_MOCK_HANG",
    help: "none (default) | observe | execute | all: Mock calls hang until cancelled (for testing clients)",
    doc: "`none` (default), `observe`, `execute` or `all`: the Mock's calls wait until they are cancelled or time out, for testing clients' cancellation paths",
  },
  {
    name: "DEVICERAIL_ANDROID",
    help: "auto (default) | off | required",
    doc: "`auto` (default): use Android phones when an adb server is reachable or can be started, otherwise carry on without them; `off`; `required`: start-up fails (exit 1) with a message when no adb server can be reached or started",
  },
  { name: "DEVICERAIL_ADB_PATH", help: "the adb executable that starts a server when none runs", doc: "the `adb` executable used to start a server when none runs (default `adb` on `PATH`)" },
  { name: "ANDROID_ADB_SERVER_PORT", help: "the adb server's port (default 5037)", doc: "the adb server's port (default 5037), as adb itself reads it" },
  {
    name: "ANDROID_SERIAL",
    help: "the device device commands use when no -d is given, as adb reads it",
    doc: "the device that device commands (`tap`, `screenshot`, …) use when no `-d` is given, as adb reads it: a device id or a serial `adb devices` prints",
  },
  { name: "DEVICERAIL_IOS", help: "auto (default) | off | required", doc: "`auto` (default): use booted iOS Simulators when `xcrun simctl` works; `off`; `required`: start-up fails without simctl" },
  { name: "DEVICERAIL_XCRUN_PATH", help: "xcrun, when it is not on PATH", doc: "the `xcrun` executable, when it is not on `PATH`" },
  { name: "DEVICERAIL_AXE_PATH", help: "AXe, when it is not on PATH", doc: "the `axe` executable (AXe 1.5 or later), when it is not on `PATH`" },
  {
    name: "DEVICERAIL_IOS_WDA_ENDPOINT",
    help: "a running WebDriverAgent for simulators without AXe (http://127.0.0.1:PORT)",
    doc: "a running WebDriverAgent (`http://127.0.0.1:PORT`, numeric loopback only) that serves UI trees and input for simulators without AXe",
  },
  {
    name: "DEVICERAIL_SCREENSHOT_POLICY",
    help: "capture (default) | omit",
    doc: "`capture` (default) or `omit` (no screenshots; observations carry `screenshotOmission:\"policy\"`)",
  },
  {
    name: "DEVICERAIL_LOG_LEVEL",
    help: "trace | debug | info (default) | warn | error | fatal | silent",
    doc: "`trace`, `debug`, `info` (default), `warn`, `error`, `fatal`, `silent`; the daemon logs to stderr (a background daemon to `daemon.log`)",
  },
  {
    name: "DEVICERAIL_HANDSHAKE_TIMEOUT_MS",
    help: "how long a socket connection may take to say hello (default 10000)",
    doc: "how long a socket connection may take to finish its handshake: an NDJSON client's `system.hello` answered, an HTTP or WebSocket client's first request head (default 10000, 100…600000)",
  },
  {
    name: "DEVICERAIL_TCP_KEEPALIVE_MS",
    help: "idle time before TCP keepalive probes start (default 10000)",
    doc: "idle time before TCP keepalive probes start on a TCP connection (default 10000, 1000…7200000); a peer that vanished is closed about 10 s after that, also when an answer to it is unacknowledged",
  },
  { name: "DEVICERAIL_DEBUG", help: "set to print the stack trace of an unexpected error", doc: "set (to anything) to print the stack trace of an unexpected CLI error" },
  { name: "NO_COLOR", help: "no colour even on a terminal", doc: "no colour even on a terminal" },
  { name: "FORCE_COLOR", help: "colour even when stdout is not a terminal", doc: "colour even when stdout is not a terminal (`NO_COLOR` wins)" },
];

/** The --help section. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map((v) => v.name.length)) + 2;
  return ENVIRONMENT.map((v) => `  ${v.name.padEnd(width)}${v.help}`).join("\n");
}

/** README.md's table. */
export function environmentTable(): string {
  return ["| Variable | Values |", "| --- | --- |", ...ENVIRONMENT.map((v) => `| \`${v.name}\` | ${v.doc} |`)].join("\n");
}
