/**
 * `bun run build`: standalone executables of the daemon (src/main.ts) for every release target,
 * minified and with bytecode, with the package version and git commit stamped in (`devicerail --version` prints
 * `0.1.0+<commit>`), plus SHA256SUMS in `sha256sum` format.
 *
 *   bun run build                          all five targets into dist/
 *   bun run build --target linux-x64       only the named target(s) (repeatable, or comma-separated)
 *   bun run build --outdir DIR             another output folder (or DEVICERAIL_BUILD_OUTDIR)
 *
 * Cross targets need that target's Bun runtime, which Bun downloads from the npm registry
 * (@oven/bun-<os>-<arch>) on first use. A target that cannot be built fails the whole build,
 * naming it: nothing is skipped.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";

export const ROOT = join(import.meta.dir, "..");
export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;
export type Target = (typeof TARGETS)[number];

export const binaryName = (t: Target) => `devicerail-${t}${t.startsWith("windows-") ? ".exe" : ""}`;

/** The short commit of the checkout, or "unknown" when ROOT is not a git checkout (or git is missing). */
export function gitCommit(): string {
  try {
    const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
    const out = r.stdout.toString().trim();
    return r.exitCode === 0 && /^[0-9a-f]{4,40}$/.test(out) ? out : "unknown";
  } catch {
    return "unknown";
  }
}

export interface BuildResult {
  target: Target;
  path: string;
  bytes: number;
  ms: number;
}

export async function build(opts: {
  targets: readonly Target[];
  outdir: string;
  log?: (line: string) => void;
}): Promise<BuildResult[]> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  const commit = gitCommit();
  mkdirSync(opts.outdir, { recursive: true });
  // A failed build must not leave an old checksum list beside new (or missing) binaries.
  rmSync(join(opts.outdir, "SHA256SUMS"), { force: true });
  log(`build: devicerail ${version}+${commit} for ${opts.targets.join(", ")} into ${opts.outdir}`);
  const results: BuildResult[] = [];
  const failed: string[] = [];
  // One after another: each compile is CPU- and memory-heavy, and the log stays readable.
  for (const target of opts.targets) {
    const path = join(opts.outdir, binaryName(target));
    rmSync(path, { force: true });
    const started = performance.now();
    let problem: string | null = null;
    try {
      const out = await Bun.build({
        entrypoints: [join(ROOT, "src/main.ts")],
        compile: {
          target: `bun-${target}` as Bun.Build.CompileTarget,
          outfile: path,
          // The binary behaves the same in any directory: no .env or bunfig.toml picked up from cwd.
          autoloadDotenv: false,
          autoloadBunfig: false,
        },
        minify: true,
        // Bytecode (architecture-independent, tied to this Bun version; a mismatch falls back to the
        // embedded source) cuts the cold start from ~115 ms to ~40 ms (scripts/bench/startup.ts).
        // ESM keeps the daemon's top-level await.
        bytecode: true,
        format: "esm",
        // One chunk per dynamic import (src/main.ts, cli/program.ts): a command parses and runs only
        // the code it imports, so `--version` and the client commands skip the daemon's modules.
        splitting: true,
        sourcemap: "none",
        define: {
          DEVICERAIL_VERSION: JSON.stringify(version),
          DEVICERAIL_COMMIT: JSON.stringify(commit),
        },
        throw: false,
      });
      if (!out.success)
        problem = out.logs.map((l) => String(l.message ?? l)).join("; ") || "Bun.build reported failure";
    } catch (err) {
      problem =
        err instanceof AggregateError ? err.errors.map(String).join("; ") : String((err as Error)?.message ?? err);
    }
    let bytes = 0;
    try {
      bytes = statSync(path).size;
    } catch {
      problem ??= `no executable was written to ${path}`;
    }
    const ms = Math.round(performance.now() - started);
    if (problem) {
      failed.push(target);
      log(`build: FAILED ${target}: ${problem}`);
      continue;
    }
    results.push({ target, path, bytes, ms });
    log(`build: ${basename(path)} ${(bytes / 2 ** 20).toFixed(1)} MiB in ${(ms / 1000).toFixed(1)} s`);
  }
  if (failed.length) throw new Error(`build failed for target(s): ${failed.join(", ")}`);
  const sums = results
    .map((r) => `${createHash("sha256").update(readFileSync(r.path)).digest("hex")}  ${basename(r.path)}\n`)
    .join("");
  writeFileSync(join(opts.outdir, "SHA256SUMS"), sums);
  log(`build: ${join(opts.outdir, "SHA256SUMS")}`);
  return results;
}

if (import.meta.main) {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: { target: { type: "string", multiple: true }, outdir: { type: "string" } },
    }));
  } catch (err) {
    process.stderr.write(
      `build: ${(err as Error).message}\nusage: bun run build [--target ${TARGETS.join("|")}]... [--outdir DIR]\n`,
    );
    process.exit(2);
  }
  const asked = (values.target ?? [])
    .flatMap((t) => t.split(","))
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length) {
    process.stderr.write(`build: unknown target(s) ${unknown.join(", ")}; known: ${TARGETS.join(", ")}\n`);
    process.exit(2);
  }
  const targets = asked.length ? ([...new Set(asked)] as Target[]) : TARGETS;
  const outdir = resolve(values.outdir ?? process.env.DEVICERAIL_BUILD_OUTDIR ?? join(ROOT, "dist"));
  try {
    await build({ targets, outdir });
  } catch (err) {
    process.stderr.write(`build: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
