import * as v from "valibot";

const EnvSchema = v.object({
  DEVICERAIL_SCREENSHOT_POLICY: v.optional(v.picklist(["capture", "omit"]), "capture"),
  DEVICERAIL_LOG_LEVEL: v.optional(v.picklist(["trace", "debug", "info", "warn", "error", "fatal", "silent"]), "info"),
});

export type Config = {
  screenshotPolicy: "capture" | "omit";
  logLevel: string;
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
  return { screenshotPolicy: r.output.DEVICERAIL_SCREENSHOT_POLICY, logLevel: r.output.DEVICERAIL_LOG_LEVEL };
}
