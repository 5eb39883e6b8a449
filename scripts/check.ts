/**
 * `bun run check` (and `npm test`): typecheck (the daemon's and the report page's browser code),
 * import fences, generated files current, the TypeScript formatted (scripts/format.ts), no `.only`
 * left in tests, then the whole test suite.
 * Ends with one line: `check: N passed, M failed`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkImports } from "./check-imports.ts";
import { staleAllMigrations } from "./gen-migrations.ts";
import { staleFiles } from "./gen-protocol.ts";
import { staleReadme } from "./gen-readme.ts";
import { unformatted } from "./format.ts";
import { staleReportScript } from "./gen-report-script.ts";

const ROOT = join(import.meta.dir, "..");
const failures: string[] = [];
const step = (name: string, problems: string[]) => {
  if (problems.length === 0) process.stderr.write(`✔ ${name}\n`);
  else {
    failures.push(name);
    process.stderr.write(`✘ ${name}\n  ${problems.join("\n  ")}\n`);
  }
};

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const tsc = (project: string) => {
  const run = Bun.spawnSync(
    [process.execPath, join(ROOT, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", project],
    { cwd: ROOT },
  );
  return run.exitCode === 0 ? [] : run.stdout.toString().trim().split("\n");
};
step("typecheck", tsc("tsconfig.json"));
// The report page's browser code: DOM types and no Bun or Node types, so a program of its own.
step("typecheck of the report's browser code", tsc("src/surfaces/report/browser/tsconfig.json"));
step("import fences", checkImports());
step("generated protocol files current (gen --check)", staleFiles());
step("migrations current (gen-migrations --check)", staleAllMigrations());
step("README environment table current (gen-readme --check)", staleReadme());
step("formatted (bun run format)", unformatted());
step("report script bundle current (gen-report-script --check)", await staleReportScript());
step(
  "no .only in tests",
  walk(join(ROOT, "test"))
    .filter((f) => f.endsWith(".ts") && /\b(?:test|it|describe)\.only\s*\(/.test(readFileSync(f, "utf8")))
    .map((f) => `${f}: contains .only`),
);

// The suite's failures and summary stream through (every pass too with --verbose); the summary is
// read to print one plain closing line. Tests that spawn daemons set their own longer timeouts;
// this ceiling only catches a hung test.
const verbose = process.argv.includes("--verbose");
const passThrough = process.argv.slice(2).filter((a) => a !== "--verbose");
const proc = Bun.spawn(
  [process.execPath, "test", "--timeout=30000", ...(verbose ? [] : ["--only-failures"]), ...passThrough],
  {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "pipe",
    env: process.env,
  },
);
let tail = "";
const decoder = new TextDecoder();
for await (const chunk of proc.stderr) {
  process.stderr.write(chunk);
  tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4096);
}
const code = await proc.exited;
const passed = Number(/^\s*(\d+) pass$/m.exec(tail)?.[1] ?? 0);
const failed = Number(/^\s*(\d+) fail$/m.exec(tail)?.[1] ?? 0);
if (code !== 0) failures.push("tests");
if (passed === 0) failures.push("tests (none ran)");
if (failures.length) process.stderr.write(`failed steps: ${failures.join(", ")}\n`);
process.stdout.write(`check: ${passed} passed, ${failed} failed\n`);
process.exit(failures.length ? 1 : 0);
