import * as v from "valibot";

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

const EnvSchema = v.object({
  DEVICERAIL_SCREENSHOT_POLICY: v.optional(v.picklist(["capture", "omit"]), "capture"),
  DEVICERAIL_LOG_LEVEL: v.optional(v.picklist(["trace", "debug", "info", "warn", "error", "fatal", "silent"]), "info"),
  DEVICERAIL_RPC_LISTEN: v.optional(ListenAddressSchema),
  DEVICERAIL_MOCK_DEVICES: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,1}$/, "expected a count from 1 to 64"), v.transform(Number), v.maxValue(64, "expected a count from 1 to 64")),
    "1",
  ),
  DEVICERAIL_MOCK_HANG: v.optional(v.picklist(["none", "observe", "execute", "all"]), "none"),
  DEVICERAIL_MOCK: v.optional(v.picklist(["auto", "on", "off"]), "auto"),
  DEVICERAIL_ANDROID: v.optional(v.picklist(["auto", "off", "required"]), "auto"),
  DEVICERAIL_ADB_PATH: v.optional(v.pipe(v.string(), v.minLength(1, "expected a path to adb")), "adb"),
  ANDROID_ADB_SERVER_PORT: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,4}$/, "expected a TCP port"), v.transform(Number), v.maxValue(65_535, "expected a TCP port")),
    "5037",
  ),
});

export type Config = {
  screenshotPolicy: "capture" | "omit";
  logLevel: string;
  /** TCP control listener (DEVICERAIL_RPC_LISTEN); null = serve stdio. */
  listen?: ListenAddress | null;
  /** How many mock devices (mock-1 … mock-N) to register: a device farm in a box for multi-client use. */
  mockDevices: number;
  /** Mock observations/actions hang until aborted: for cancellation and timeout tests. */
  mockHang: "none" | "observe" | "execute" | "all";
  /** auto: the Mock is listed only while no real device is present; on: always; off: never. */
  mock: "auto" | "on" | "off";
  /** auto: use adb when it is there; off: never; required: start-up fails without a reachable adb server. */
  android: "auto" | "off" | "required";
  adbPath: string;
  adbServerPort: number;
};

export class ConfigError extends Error {}

/** Environment settings, checked once at start-up so a typo fails loudly instead of being ignored. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = v.safeParse(EnvSchema, env);
  if (!r.success) {
    const issue = r.issues[0];
    const key = issue.path?.map((p) => String(p.key)).join(".") ?? "environment";
    throw new ConfigError(`invalid ${key}=${JSON.stringify(issue.input)}: ${issue.message}`);
  }
  return {
    screenshotPolicy: r.output.DEVICERAIL_SCREENSHOT_POLICY,
    logLevel: r.output.DEVICERAIL_LOG_LEVEL,
    listen: r.output.DEVICERAIL_RPC_LISTEN ?? null,
    mockDevices: r.output.DEVICERAIL_MOCK_DEVICES as number,
    mockHang: r.output.DEVICERAIL_MOCK_HANG,
    mock: r.output.DEVICERAIL_MOCK,
    android: r.output.DEVICERAIL_ANDROID,
    adbPath: r.output.DEVICERAIL_ADB_PATH,
    adbServerPort: r.output.ANDROID_ADB_SERVER_PORT as number,
  };
}

/** Parses a `--listen` value like DEVICERAIL_RPC_LISTEN; throws ConfigError naming the value. */
export function parseListenAddress(text: string, name = "--listen"): ListenAddress {
  const r = v.safeParse(ListenAddressSchema, text);
  if (!r.success) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: ${r.issues[0].message}`);
  return r.output;
}
