import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The encodings a leaked secret might hide in: raw, JSON-escaped, base64 (both), hex, and as `input text` writes spaces. */
export function canaryForms(canary: string): Record<string, string> {
  return {
    raw: canary,
    trimmed: canary.trim(),
    jsonEscaped: JSON.stringify(canary).slice(1, -1),
    inputTextEscaped: canary.replaceAll(" ", "%s"),
    base64: Buffer.from(canary).toString("base64"),
    base64url: Buffer.from(canary).toString("base64url"),
    hex: Buffer.from(canary).toString("hex"),
  };
}

/** Every form of the canary found in `text`, named by where it was found. */
export function leaksIn(forms: Record<string, string>, where: string, text: string): string[] {
  return Object.entries(forms)
    .filter(([, form]) => form.length > 0 && text.includes(form))
    .map(([name]) => `${where}: ${name}`);
}

/** Command lines of every process on this machine, read while the secret is in use. */
export function processArgvs(): string {
  let all = "";
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      all += `${readFileSync(`/proc/${pid}/cmdline`, "latin1")}\n`;
    } catch {}
  }
  return all;
}

export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}
