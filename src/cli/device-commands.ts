/** `screenshot` and `ui`: what one device shows (`devices` is devices-command.ts). */
import { accessSync, constants, existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { UiNode } from "../protocol/types/ui.ts";
import { type UiStates, elementLine, numberElements, uiStatesOf } from "../surfaces/interaction/index.ts";
import { dataDirOf, inSession, observe, route, withClient } from "./client.ts";
import { CliError, err, EXIT, out, printJson } from "./output.ts";
import { loadListing, saveListing, stateOf } from "./refs.ts";
import { stdout, stderr } from "./std-streams.ts";

export { type UiStates, uiStatesOf };

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);

/**
 * Where -o says to write, checked before any device work: a folder gets the default name inside
 * it; a missing folder or one that cannot be written is a usage error, not a stack trace after
 * the screenshot was taken.
 */
export function outputFile(output: string | undefined, defaultName: string): string {
  if (output === undefined) return defaultName;
  const path = resolve(output);
  const isDir = existsSync(path) && statSync(path).isDirectory();
  // `out/` names a folder: never a file called `out`, never an EISDIR from the write.
  if (/[\\/]$/.test(output) && !isDir)
    throw new CliError(
      `cannot write ${output}: ${existsSync(path) ? `${path} is not a folder` : `the folder ${path} does not exist`}`,
      EXIT.usage,
    );
  const file = isDir ? join(path, defaultName) : path;
  writableFolder(output, dirname(file));
  return isDir ? file : output;
}

/** The folder `output` writes into exists, is a folder and is writable; else a usage error. */
function writableFolder(output: string, dir: string): void {
  if (!existsSync(dir)) throw new CliError(`cannot write ${output}: the folder ${dir} does not exist`, EXIT.usage);
  if (!statSync(dir).isDirectory()) throw new CliError(`cannot write ${output}: ${dir} is not a folder`, EXIT.usage);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new CliError(`cannot write ${output}: the folder ${dir} is not writable`, EXIT.usage);
  }
}

/**
 * The folder a command creates (export): `-o DIR` that exists gets `defaultName` inside it, as
 * outputFile does for files; one that does not exist is created, but only inside a folder that
 * does (a typo in a parent is a usage error, not a tree of new folders).
 */
export function outputDir(output: string | undefined, defaultName: string): string {
  if (output === undefined) return resolve(defaultName);
  const path = resolve(output);
  if (existsSync(path)) {
    if (!statSync(path).isDirectory())
      throw new CliError(`cannot write ${output}: ${path} is a file, not a folder`, EXIT.usage);
    return join(path, defaultName);
  }
  writableFolder(output, dirname(path));
  return path;
}

export async function screenshotCommand(opts: {
  device?: string;
  output?: string;
  json?: boolean;
  timeout?: number;
}): Promise<number> {
  const file = outputFile(opts.output, `screenshot-${stamp(new Date())}.png`);
  const observation = await withClient(
    async (c) => {
      await route(c, opts.device);
      return inSession(c, async () => {
        const o = await observe(c);
        if (!o.screenshot?.sha256)
          throw new CliError(
            `device ${o.deviceId} gave no screenshot (${o.screenshotOmission ?? "none"}); is DEVICERAIL_SCREENSHOT_POLICY=omit set?`,
          );
        writeFileSync(file, await c.evidence(o.screenshot.sha256));
        return o;
      });
    },
    process.env,
    { timeoutMs: opts.timeout },
  );
  if (opts.json) printJson({ file, observation });
  else {
    const { width, height } = observation.viewport;
    stdout.write(
      `${file}: ${width}×${height} screenshot of ${observation.deviceId} (sha256 ${observation.screenshot?.sha256})\n`,
    );
  }
  return 0;
}

/**
 * `ui`: the tree with the shared scheme's refs (src/surfaces/interaction/refs.ts): visible, meaningful
 * elements get one, kept while the screen keeps its UI context. The listing is saved for `--ref`
 * before it is printed, so every ref a person can see is one a later command understands.
 */
export async function uiCommand(opts: { device?: string; json?: boolean; timeout?: number }): Promise<number> {
  const { observation, snapshot } = await withClient(
    async (c) => {
      await route(c, opts.device);
      return inSession(c, async () => {
        const o = await observe(c);
        if (!o.uiSnapshot)
          throw new CliError(`device ${o.deviceId} gave no UI tree (${o.uiSnapshotOmission ?? "no claim"})`);
        return { observation: o, snapshot: await c.call("ui.snapshot.get", { observationId: o.id }) };
      });
    },
    process.env,
    { timeoutMs: opts.timeout },
  );
  const dataDir = dataDirOf(process.env);
  const before = stateOf(loadListing(dataDir, observation.deviceId));
  const { listing, state } = numberElements(before, observation.deviceId, snapshot, observation.viewport);
  const refs = Object.fromEntries(listing.elements.map((e) => [e.node.stableNodeId, e.ref]));
  let saved = true;
  try {
    saveListing(dataDir, {
      deviceId: observation.deviceId,
      observationId: observation.id,
      ...state,
      listed: listing.elements.map((e) => e.node.stableNodeId),
      savedAtMs: Date.now(),
    });
  } catch (e) {
    // The tree is still worth printing; only --ref will not know these refs.
    saved = false;
    stderr.write(`${err().yellow("devicerail:")} could not save the refs for --ref: ${(e as Error).message}\n`);
  }
  if (opts.json) printJson(snapshot);
  else
    stdout.write(
      formatTree(snapshot.nodes, out(), { refs: saved ? refs : undefined, states: uiStatesOf(observation.metadata) }),
    );
  return 0;
}

/** One node without its depth, in the terminal style: `role "text" #identifier [x,y,w,h] [disabled] [focused]`. */
export function nodeLine(n: UiNode, states: readonly string[] = [], st = out()): string {
  return elementLine(n, states, { style: "terminal", paint: st });
}

/**
 * One line per node in preorder, two spaces per level: `role "text" #identifier [x,y,w,h]` and
 * the node's states; with `refs` (stableNodeId → ref), each line starts with the node's ref, or
 * blanks for a node without one, in a column of its own, so the tree's indentation stays readable.
 */
export function formatTree(
  nodes: UiNode[],
  st = out(),
  opts: { refs?: Record<string, string>; states?: UiStates } = {},
): string {
  const depth = new Map<string, number>();
  const refs = opts.refs && Object.keys(opts.refs).length ? opts.refs : null;
  const width = refs ? Math.max(...Object.values(refs).map((r) => r.length)) : 0;
  const lines = nodes.map((n) => {
    const d = n.parentStableNodeId === null ? 0 : (depth.get(n.parentStableNodeId) ?? -1) + 1;
    depth.set(n.stableNodeId, d);
    const ref = refs ? `${st.dim((refs[n.stableNodeId] ?? "").padEnd(width))} ` : "";
    return `${ref}${"  ".repeat(d)}${nodeLine(n, opts.states?.[n.stableNodeId], st)}`;
  });
  return `${lines.join("\n")}\n`;
}
