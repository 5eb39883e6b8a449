/**
 * Enforces the import directions of the design (DESIGN.md "Import directions"): each layer may
 * import only the layers below it. Prints violations and exits 1 when run directly.
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
  | "interaction"
  | "daemon"
  | "browser"
  | "drivers"
  | "other";

/** The report page's script (bundled by scripts/gen-report-script.ts): it runs in a browser, not in the daemon. */
const BROWSER = "src/daemon/report/browser/";
/** What the browser code may import from outside its folder, types only: the report model's shape and the protocol's types. */
const BROWSER_TYPES = (target: string) =>
  target === "src/daemon/report/model-types.ts" || target.startsWith("src/protocol/");

function layerOf(rel: string): Layer {
  if (rel.startsWith(BROWSER)) return "browser";
  const [top, second] = rel.split("/");
  if (top === "drivers") return "drivers";
  if (top !== "src") return "other";
  if (
    second === "protocol" ||
    second === "rpc" ||
    second === "client" ||
    second === "transports" ||
    second === "driver" ||
    second === "core" ||
    second === "interaction" ||
    second === "daemon"
  )
    return second;
  return "other";
}

/**
 * The CLI files that start MCP rather than share code with it: the daemon's composition root
 * (serve.ts builds McpHub and McpHttp) and `devicerail mcp` (runs the stdio bridge). They leave
 * src/daemon/cli/ when the composition root gets a folder of its own (issue 26, item 2).
 */
const CLI_STARTS_MCP = new Set(["src/daemon/cli/serve.ts", "src/daemon/cli/mcp-command.ts"]);

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
]);

/**
 * The front ends served inside the daemon (the HTTP API, MCP, the live report): they reach the
 * engine as in-process clients (src/client/in-process.ts) the composition root hands them, never
 * through the dispatcher, a connection or core.
 */
const IN_PROCESS_SURFACE = (rel: string) =>
  rel === "src/transports/http-api.ts" || rel.startsWith("src/daemon/mcp/") || rel.startsWith("src/daemon/report/");
const ENGINE_INSIDE = (target: string) =>
  target === "src/rpc/dispatcher.ts" ||
  target === "src/rpc/connection.ts" ||
  target === "src/rpc/method-steps.ts" ||
  // The one exception: the semantic layer's facade for surfaces, the daemon's pure selector predicate.
  (target.startsWith("src/core/") && target !== "src/core/devices/semantic/index.ts");

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

/** Violations for one file (path relative to the repository root). */
export function violations(rel: string, source: string): string[] {
  const layer = layerOf(rel);
  if (layer === "other") return [];
  if (layer === "browser") return browserViolations(rel, source);
  const problems: string[] = [];
  const usesBunGlobal = /\bBun\.[A-Za-z]/.test(source.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ""));
  const inCore = (sub: string) => rel.startsWith(`src/core/${sub}/`);
  const typeOnly = typeOnlyImportsOf(source);
  const runtime = new Set(importsOf(source.replace(TYPE_ONLY, "")));
  for (const spec of importsOf(source)) {
    const target = spec.startsWith(".") ? normalize(join(dirname(rel), spec)) : null;
    const tLayer = target ? layerOf(target) : null;
    const pkg = target ? null : spec;
    const bad = (why: string) => problems.push(`${rel}: imports ${spec} (${why})`);
    // The page's script reaches the daemon only as its bundle (page.ts imports generated/report.js.txt).
    if (target?.startsWith(BROWSER))
      bad("only scripts/gen-report-script.ts uses the report's browser code, by bundling it");
    if (target && IN_PROCESS_SURFACE(rel) && ENGINE_INSIDE(target))
      bad("a surface in the daemon reaches the engine only through its in-process client (src/client/in-process.ts)");
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
      case "client": {
        const typesOnly = typeOnly.has(spec) && !runtime.has(spec);
        if (pkg && !(pkg === "bun" && typesOnly)) bad("src/client imports no packages (Bun's types only)");
        if (
          tLayer &&
          tLayer !== "client" &&
          !(tLayer === "protocol" && typesOnly) &&
          !CLIENT_RUNTIME.has(target as string)
        )
          bad(
            "src/client imports its own folder, rpc/ndjson.ts and rpc/encode.ts, and from src/protocol types or the small modules (method-sets, features, errors)",
          );
        break;
      }
      case "transports":
        if (tLayer && !["transports", "rpc", "protocol", "client"].includes(tLayer))
          bad("src/transports may import rpc, protocol and the client only");
        break;
      case "driver":
        if (pkg) bad("src/driver imports no packages");
        if (tLayer && !(tLayer === "driver" || tLayer === "protocol" || target === "src/rpc/rpc-error.ts"))
          bad("src/driver may import protocol and rpc/rpc-error only");
        break;
      case "core":
        if (tLayer && !["core", "protocol", "rpc", "driver"].includes(tLayer))
          bad("src/core may not import drivers, transports or daemon");
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
        if (tLayer && !["drivers", "driver", "protocol"].includes(tLayer))
          bad("drivers may import src/driver and src/protocol only");
        // Each SDK behind its one port file (a compiled binary needs adbkit's named import, for one).
        if (pkg === "@devicefarmer/adbkit" && rel !== "drivers/android/adbkit-port.ts")
          bad("only drivers/android/adbkit-port.ts may import adbkit");
        if (pkg === "node-simctl" && rel !== "drivers/ios-simulator/simctl-port.ts")
          bad("only drivers/ios-simulator/simctl-port.ts may import node-simctl");
        break;
      }
      case "interaction":
        // The toolkit the CLI and MCP share (issue 26): pure, so both surfaces can use it in any process.
        if (pkg) bad("src/interaction imports no packages");
        if (tLayer && tLayer !== "interaction" && tLayer !== "protocol")
          bad("src/interaction may import src/protocol only");
        break;
      case "daemon":
        // Two surfaces side by side: what they share lives in src/interaction, not in one of them.
        if (rel.startsWith("src/daemon/mcp/") && target?.startsWith("src/daemon/cli/"))
          bad("MCP may not import the CLI (shared code belongs in src/interaction)");
        if (rel.startsWith("src/daemon/cli/") && target?.startsWith("src/daemon/mcp/") && !CLI_STARTS_MCP.has(rel))
          bad("the CLI may not import MCP (shared code belongs in src/interaction)");
        if (target?.startsWith("drivers/") && !/^drivers\/[^/]+\/index\.ts$/.test(target))
          bad("the daemon imports drivers only through drivers/*/index.ts");
        // The MCP SDK stays behind the MCP server's own folder, like each device SDK behind its port.
        if (pkg?.startsWith("@modelcontextprotocol/sdk") && !rel.startsWith("src/daemon/mcp/"))
          bad("only src/daemon/mcp/ may import the MCP SDK");
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
    problems.push(`${rel}: uses the Bun global (only transports, daemon, core/sessions and core/evidence may)`);
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
