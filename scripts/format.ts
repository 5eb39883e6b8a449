/**
 * `bun run format`: the one formatter (Biome's formatter, not its linter) over the hand-written
 * TypeScript of src/, drivers/, test/ and scripts/: two-space indents, double quotes, lines of at
 * most 120 characters. Generated files stay as their generators write them (each has its own
 * --check). The options are flags here, not a biome.json: the repository's top level is fixed.
 * `--check` writes nothing and names the files that differ (scripts/check.ts runs it).
 */
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BIOME = join(ROOT, "node_modules/@biomejs/biome/bin/biome");
const FLAGS = ["--indent-style=space", "--indent-width=2", "--line-width=120", "--line-ending=lf"];

/** Generated files and folders. */
const GENERATED = [/^src\/protocol\/generated\//, /\/migrations\//, /^src\/daemon\/report\/generated\//];

/** The tracked .ts files the formatter owns. */
export function formattedFiles(): string[] {
  const ls = Bun.spawnSync(["git", "ls-files", "-z", "--", "src", "drivers", "test", "scripts"], { cwd: ROOT });
  if (ls.exitCode !== 0) throw new Error(`format: git ls-files failed: ${ls.stderr.toString()}`);
  return ls.stdout
    .toString()
    .split("\0")
    .filter((f) => f.endsWith(".ts") && !GENERATED.some((g) => g.test(f)));
}

/** Problems: one line per file that is not formatted (empty when all are). */
export function unformatted(): string[] {
  const r = Bun.spawnSync(
    [process.execPath, BIOME, "format", ...FLAGS, "--colors=off", "--max-diagnostics=none", ...formattedFiles()],
    { cwd: ROOT },
  );
  if (r.exitCode === 0) return [];
  const text = `${r.stdout.toString()}\n${r.stderr.toString()}`;
  const named = [...new Set([...text.matchAll(/^(\S+\.ts) format/gm)].map((m) => m[1] as string))];
  return named.length
    ? named.map((f) => `${f}: not formatted (run \`bun run format\`)`)
    : [text.trim().split("\n").slice(-5).join("\n")];
}

if (import.meta.main) {
  if (process.argv.includes("--check")) {
    const problems = unformatted();
    for (const p of problems) process.stderr.write(`${p}\n`);
    process.exit(problems.length ? 1 : 0);
  }
  const r = Bun.spawnSync([process.execPath, BIOME, "format", ...FLAGS, "--write", ...formattedFiles()], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  });
  process.exit(r.exitCode ?? 1);
}
