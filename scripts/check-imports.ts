/**
 * Enforces the layout of src/ by role and its import directions (docs/architecture.md, "Layers
 * and fences"): the engine (protocol, rpc, driver, core, transports, drivers) below; the client;
 * the surfaces, each of which imports only protocol, client and the interaction toolkit; the farm
 * behind its host port; the server, the only composition root; the CLI, the only code that writes
 * to a terminal. Prints violations and exits 1 when run directly.
 * Over 300 lines because every fence and its reason is in this one table-like function.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

export const ROOT = join(import.meta.dir, "..");

type Layer =
  | "protocol"
  | "rpc"
  | "client"
  | "transports"
  | "driver"
  | "core"
  | "surface"
  | "interaction"
  | "browser"
  | "farm"
  | "server"
  | "cli"
  | "drivers"
  | "other";

/** The report page's script (bundled by scripts/gen-report-script.ts): it runs in a browser, not in the daemon. */
const BROWSER = "src/surfaces/report/browser/";
/** What the browser code may import from outside its folder, types only: the report model's shape and the protocol's types. */
const BROWSER_TYPES = (target: string) =>
  target === "src/surfaces/report/model-types.ts" || target.startsWith("src/protocol/");
const INTERACTION = "src/surfaces/interaction/";

function layerOf(rel: string): Layer {
  if (rel.startsWith(BROWSER)) return "browser";
  if (rel.startsWith(INTERACTION)) return "interaction";
  const [top, second] = rel.split("/");
  if (top === "drivers") return "drivers";
  if (top !== "src") return "other";
  if (second === "surfaces") return "surface";
  if (
    second === "protocol" ||
    second === "rpc" ||
    second === "client" ||
    second === "transports" ||
    second === "driver" ||
    second === "core" ||
    second === "farm" ||
    second === "server" ||
    second === "cli"
  )
    return second;
  return "other";
}

/** The surface a file of src/surfaces/ belongs to (`mcp`, `report`, `http-api`). */
const surfaceOf = (rel: string) => rel.split("/")[2] as string;

/**
 * What the DeviceRail client (src/client/) runs besides its own files: the NDJSON framing and the
 * small protocol modules. The method table (protocol/methods.ts) and the schemas are types only
 * there, since building every wire schema would slow the CLI's start (scripts/bench/startup.ts).
 */
const CLIENT_RUNTIME = new Set([
  "src/rpc/ndjson.ts",
  "src/rpc/encode.ts",
  "src/protocol/method-sets.ts",
  "src/protocol/features.ts",
  "src/protocol/errors.ts",
  "src/protocol/limits.ts",
]);

/** Packages a surface may use: MCP its SDK and the schema tools its tool inputs are written in. */
const SURFACE_PACKAGES: Record<string, (pkg: string) => boolean> = {
  mcp: (pkg) => pkg.startsWith("@modelcontextprotocol/sdk") || pkg === "valibot" || pkg === "@valibot/to-json-schema",
  report: (pkg) => pkg === "node:os",
  "http-api": () => false,
};

/**
 * What the CLI may use of the server's folder: the files the daemon and its commands share (the
 * configuration, the data directory and what the daemon keeps in it, the version), and the serve
 * plan; the daemon itself (serve.ts) only as the `serve` command's lazy import.
 */
const CLI_SERVER_FILES = new Set([
  "src/server/config.ts",
  "src/server/environment.ts",
  "src/server/data-dir.ts",
  "src/server/daemon-record.ts",
  "src/server/local-token.ts",
  "src/server/private-file.ts",
  "src/server/version.ts",
  "src/server/serve-plan.ts",
]);
const CLI_STARTS_SERVER = "src/cli/serve-command.ts";
/** The one file that imports files of node_modules: the Android helpers' APKs, embedded in the binary. */
const APK_MODULE = "drivers/android/helper/apks.ts";
/** The CLI's doctor: it probes phones through the drivers' index and checks the database's lock. */
const DOCTOR = "src/cli/doctor-checks.ts";
/** The CLI files that reach phones in-process, through the drivers' index: the doctor and `android helper`. */
const CLI_DRIVER_USERS = new Set([DOCTOR, "src/cli/android-helper.ts"]);

/** The semantic layer's facade: the daemon's own selector predicate, for the CLI's answers. */
const SELECTOR_FACADE = "src/core/devices/semantic/index.ts";

/**
 * Code outside src/cli/ that may touch the process's stdout or stderr, none of it text for a
 * person: the entry's `--version` fast path, the stdio transport's protocol frames, and the log
 * sink (pino writes to stderr; it asks whether that is a terminal).
 */
const TERMINAL_WRITERS = new Set(["src/main.ts", "src/transports/stdio.ts", "src/server/log.ts"]);
const TERMINAL = /\bprocess\.(?:stdout|stderr)\b|\bconsole\.[a-z]+\(/;

const SPECIFIER =
  /(?:^|\s)(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

export function importsOf(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(SPECIFIER)) out.push((m[1] ?? m[2] ?? m[3]) as string);
  return out;
}

/** `import type … from` / `export type … from`: erased, so nothing of the target reaches a bundle. */
const TYPE_ONLY = /(?:^|\s)(?:import|export)\s+type\s[^'"]*?from\s*["']([^"']+)["']/gm;

export function typeOnlyImportsOf(source: string): Set<string> {
  return new Set([...source.matchAll(TYPE_ONLY)].map((m) => m[1] as string));
}

/** The browser code imports its own folder, and outside it only types of the report model and the protocol. */
function browserViolations(rel: string, source: string): string[] {
  const problems: string[] = [];
  const typeOnly = typeOnlyImportsOf(source);
  // A specifier imported both ways counts as a runtime import.
  const runtime = new Set(importsOf(source.replace(TYPE_ONLY, "")));
  for (const spec of importsOf(source)) {
    const bad = (why: string) => problems.push(`${rel}: imports ${spec} (${why})`);
    if (!spec.startsWith(".")) {
      bad("the report's browser code imports no packages: it is bundled into the page as it is");
      continue;
    }
    const target = normalize(join(dirname(rel), spec));
    if (target.startsWith(BROWSER)) continue;
    if (!BROWSER_TYPES(target))
      bad("the report's browser code imports only its own folder, model-types.ts and src/protocol");
    else if (runtime.has(spec) || !typeOnly.has(spec))
      bad("the report's browser code imports only types from outside its folder (`import type`)");
  }
  if (/\bBun\.[A-Za-z]/.test(source.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "")))
    problems.push(`${rel}: uses the Bun global (the report's browser code runs in a browser)`);
  return problems;
}

const stripComments = (source: string) => source.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");

/** Violations for one file (path relative to the repository root). */
export function violations(rel: string, source: string): string[] {
  const layer = layerOf(rel);
  if (layer === "other") return [];
  if (layer === "browser") return browserViolations(rel, source);
  const problems: string[] = [];
  const code = stripComments(source);
  const usesBunGlobal = /\bBun\.[A-Za-z]/.test(code);
  const inCore = (sub: string) => rel.startsWith(`src/core/${sub}/`);
  const typeOnly = typeOnlyImportsOf(source);
  const runtime = new Set(importsOf(source.replace(TYPE_ONLY, "")));
  for (const spec of importsOf(source)) {
    const target = spec.startsWith(".") ? normalize(join(dirname(rel), spec)) : null;
    const tLayer = target ? layerOf(target) : null;
    const pkg = target ? null : spec;
    const typesOnly = typeOnly.has(spec) && !runtime.has(spec);
    const bad = (why: string) => problems.push(`${rel}: imports ${spec} (${why})`);
    // The page's script reaches the daemon only as its bundle (page.ts imports generated/report.js.txt).
    if (target?.startsWith(BROWSER))
      bad("only scripts/gen-report-script.ts uses the report's browser code, by bundling it");
    // One composition root: only the server starts drivers (the CLI's doctor probes through their index too).
    if (target?.startsWith("drivers/")) {
      if (!/^drivers\/[^/]+\/index\.ts$/.test(target)) {
        if (layer !== "drivers") bad("drivers are used only through drivers/*/index.ts");
      } else if (layer !== "server" && layer !== "drivers" && !CLI_DRIVER_USERS.has(rel))
        bad("only src/server (the composition root), the CLI's doctor and `android helper` use the drivers");
    }
    if (pkg?.startsWith("@modelcontextprotocol/sdk") && !rel.startsWith("src/surfaces/mcp/"))
      bad("only src/surfaces/mcp/ may import the MCP SDK");
    switch (layer) {
      case "protocol":
        if (pkg && pkg !== "valibot") bad("src/protocol may import valibot only");
        if (tLayer && tLayer !== "protocol") bad("src/protocol may not import other layers");
        break;
      case "rpc":
        // valibot is the runtime of the protocol's schemas; rpc runs them.
        if (pkg && pkg !== "valibot") bad("src/rpc imports no packages or Bun APIs besides valibot");
        if (tLayer && tLayer !== "rpc" && tLayer !== "protocol") bad("src/rpc may import protocol only");
        break;
      case "client":
        if (pkg && !(pkg === "bun" && typesOnly)) bad("src/client imports no packages (Bun's types only)");
        if (
          tLayer &&
          tLayer !== "client" &&
          !(tLayer === "protocol" && typesOnly) &&
          !CLIENT_RUNTIME.has(target as string)
        )
          bad(
            "src/client imports its own folder, rpc/ndjson.ts and rpc/encode.ts, and from src/protocol types or the small modules (method-sets, features, errors, limits)",
          );
        break;
      case "transports":
        if (tLayer && !["transports", "rpc", "protocol", "client"].includes(tLayer))
          bad("src/transports may import rpc, protocol and the client only (the server hands it the HTTP routes)");
        break;
      case "driver":
        if (pkg) bad("src/driver imports no packages");
        if (tLayer && tLayer !== "driver" && tLayer !== "protocol") bad("src/driver may import protocol only");
        break;
      case "core":
        if (tLayer && !["core", "protocol", "rpc", "driver"].includes(tLayer))
          bad("src/core may import protocol, rpc and driver only");
        if (
          pkg &&
          pkg !== "valibot" &&
          !((pkg === "bun:sqlite" || pkg.startsWith("drizzle-orm")) && inCore("sessions")) &&
          !(pkg.startsWith("node:") && (inCore("sessions") || inCore("evidence"))) &&
          !(pkg === "re2js" && inCore("devices/semantic"))
        )
          bad(
            "src/core uses bun:sqlite/drizzle only in sessions/, Node file APIs only in sessions/ and evidence/, re2js only in devices/semantic/",
          );
        break;
      case "drivers": {
        const own = rel.split("/").slice(0, 2).join("/");
        if (tLayer === "drivers" && !target?.startsWith(`${own}/`)) bad("a driver may not import another driver");
        // The helper APKs the Android driver embeds, by path (their packages export no such subpath).
        const embeddedApk =
          rel === APK_MODULE && typeof target === "string" && /^node_modules\/[^/]+\/apks\/[^/]+\.apk$/.test(target);
        if (tLayer && !["drivers", "driver", "protocol"].includes(tLayer) && !embeddedApk)
          bad("drivers may import src/driver and src/protocol only");
        // Each SDK behind its one port file (a compiled binary needs adbkit's named import, for one).
        if (pkg === "@devicefarmer/adbkit" && rel !== "drivers/android/adbkit-port.ts")
          bad("only drivers/android/adbkit-port.ts may import adbkit");
        if (pkg === "node-simctl" && rel !== "drivers/ios-simulator/simctl-port.ts")
          bad("only drivers/ios-simulator/simctl-port.ts may import node-simctl");
        break;
      }
      case "interaction":
        // The toolkit the CLI and MCP share (issue 26): pure, so both can use it in any process.
        if (pkg) bad("src/surfaces/interaction imports no packages");
        if (tLayer && tLayer !== "interaction" && tLayer !== "protocol")
          bad("src/surfaces/interaction may import src/protocol only");
        break;
      case "surface": {
        const own = surfaceOf(rel);
        if (tLayer === "surface" && surfaceOf(target as string) !== own)
          bad("a surface may not import another surface (what they share belongs in src/surfaces/interaction)");
        else if (tLayer && tLayer !== "browser" && !["surface", "protocol", "client", "interaction"].includes(tLayer))
          bad(
            "a surface imports only src/protocol, src/client and src/surfaces/interaction (the server hands it the rest)",
          );
        if (pkg && !(SURFACE_PACKAGES[own]?.(pkg) ?? false)) bad(`the ${own} surface may not use ${pkg}`);
        break;
      }
      case "farm":
        if (tLayer && !["farm", "protocol"].includes(tLayer) && !(tLayer === "rpc" && typesOnly))
          bad(
            "src/farm imports src/protocol and rpc's types only; it reaches the daemon through its host port (FarmHostPort)",
          );
        break;
      case "server":
        if (tLayer === "cli")
          bad("the server may not import the CLI (the CLI starts the server, and hands it its terminal)");
        if (tLayer === "interaction") bad("the server wires the surfaces; it uses none of their toolkit");
        break;
      case "cli":
        if (tLayer === "server" && !CLI_SERVER_FILES.has(target as string))
          if (!(rel === CLI_STARTS_SERVER && target === "src/server/serve.ts"))
            bad("the CLI uses only the server's shared files; the daemon itself only through serve-command.ts");
        if (
          tLayer === "core" &&
          target !== SELECTOR_FACADE &&
          !(rel === DOCTOR && target === "src/core/sessions/db.ts")
        )
          bad("the CLI uses of core only the selector facade (and the doctor the database's lock check)");
        if (tLayer === "rpc" && !typesOnly) bad("the CLI reaches the daemon through src/client");
        if (
          tLayer === "surface" &&
          surfaceOf(target as string) === "mcp" &&
          target !== "src/surfaces/mcp/stdio-bridge.ts"
        )
          bad("the CLI starts MCP's stdio bridge only; shared code belongs in src/surfaces/interaction");
        break;
    }
  }
  if (
    usesBunGlobal &&
    (layer === "protocol" ||
      layer === "rpc" ||
      layer === "driver" ||
      layer === "interaction" ||
      (layer === "core" && !inCore("sessions") && !inCore("evidence")))
  )
    problems.push(
      `${rel}: uses the Bun global (only transports, server, cli, farm, surfaces, drivers, core/sessions and core/evidence may)`,
    );
  if (layer !== "cli" && !TERMINAL_WRITERS.has(rel) && TERMINAL.test(code))
    problems.push(`${rel}: writes to stdout or stderr (only src/cli writes to a terminal; others take a sink or log)`);
  return problems;
}

function walk(dir: string): string[] {
  let out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out = out.concat(walk(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

export function checkImports(root = ROOT): string[] {
  const files = [...walk(join(root, "src"))];
  try {
    files.push(...walk(join(root, "drivers")));
  } catch {}
  return files.flatMap((f) => violations(relative(root, f), readFileSync(f, "utf8")));
}

if (import.meta.main) {
  const problems = checkImports();
  if (problems.length) {
    process.stderr.write(`import fences violated:\n  ${problems.join("\n  ")}\n`);
    process.exit(1);
  }
  process.stdout.write("import fences: ok\n");
}
