import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/server/config.ts";
import { ENV, ENV_SCHEMA, environmentHelp, environmentTable } from "../../src/server/environment.ts";

const ROOT = join(import.meta.dir, "../..");
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );

// Names of build-time constants (scripts/build.ts --define) and of the variables every process
// inherits from the system: not configuration, so not in the table.
const NOT_CONFIGURATION = new Set(["DEVICERAIL_VERSION", "DEVICERAIL_COMMIT"]);
const NAME = /\b(?:DEVICERAIL_[A-Z][A-Z0-9_]*[A-Z0-9]|ANDROID_SERIAL|ANDROID_ADB_SERVER_PORT|NO_COLOR|FORCE_COLOR)\b/g;

/** Every variable name the code mentions, with the first file that does. */
function namesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of [...walk(join(ROOT, "src")), ...walk(join(ROOT, "drivers"))]) {
    if (file.endsWith(join("daemon", "environment.ts"))) continue;
    for (const m of readFileSync(file, "utf8").matchAll(NAME))
      if (!NOT_CONFIGURATION.has(m[0]) && !found.has(m[0])) found.set(m[0], file.slice(ROOT.length + 1));
  }
  return found;
}

describe("the environment table", () => {
  test("lists every variable the code names, and names none that no code reads", () => {
    const inCode = namesInCode();
    const missing = [...inCode].filter(([n]) => !(n in ENV)).map(([n, f]) => `${n} (${f})`);
    expect(missing).toEqual([]);
    const unread = Object.keys(ENV).filter((n) => !inCode.has(n) && !(n in ENV_SCHEMA.entries));
    expect(unread).toEqual([]);
  });

  test("the scan sees a variable read ad hoc, as DEVICERAIL_FARM_HOLDER once was", () => {
    // The check above is only as good as its pattern: it must find the forms the code uses.
    const sample = 'holder: o.holder ?? process.env.DEVICERAIL_FARM_HOLDER ?? actor(), env["ANDROID_SERIAL"]';
    expect([...sample.matchAll(NAME)].map((m) => m[0])).toEqual(["DEVICERAIL_FARM_HOLDER", "ANDROID_SERIAL"]);
  });

  test("the config loader checks exactly the variables with a schema, with their defaults", () => {
    const checked = Object.entries(ENV)
      .filter(([, e]) => "schema" in e)
      .map(([n]) => n);
    expect(Object.keys(ENV_SCHEMA.entries).sort()).toEqual(checked.sort());
    const c = loadConfig({});
    expect(c.handshakeMs).toBe(10_000);
    expect(c.mcpImage).toEqual({ format: "jpeg", maxEdge: 1568, maxBytes: 400_000 });
    expect(() => loadConfig({ DEVICERAIL_MCP_IDLE_MS: "5" })).toThrow('invalid DEVICERAIL_MCP_IDLE_MS="5"');
  });

  test("--help and the README table list every variable under its owner's title", () => {
    const help = environmentHelp();
    const table = environmentTable();
    for (const [name, e] of Object.entries(ENV)) {
      expect(help).toContain(`${name}`);
      expect(help).toContain(e.help);
      expect(table).toContain(`| \`${name}\` | ${e.doc} |`);
    }
    expect(help.indexOf("The farm:")).toBeLessThan(help.indexOf("DEVICERAIL_FARM_HOLDER"));
    expect(help.indexOf("Commands:")).toBeLessThan(help.indexOf("ANDROID_SERIAL"));
  });
});
