/** `devices`, `screenshot` and `ui`: what is attached, and what one of them shows. */
import { accessSync, constants, existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { DeviceInfo, DevicesListResult } from "../../protocol/types/device.ts";
import { UI_STATES, type UiNode, type UiSnapshot } from "../../protocol/types/ui.ts";
import { dataDirOf, inSession, observe, route, withClient } from "./client.ts";
import { CliError, err, EXIT, out, printJson, printRows } from "./output.ts";
import { refAt, saveListing } from "./refs.ts";

export interface DeviceRow extends DeviceInfo {
  /** `connected`, an adb state such as `unauthorized`, or `available`. */
  state: string;
  /** The Session holding the device's lease, if any. */
  leasedBy: string | null;
}

// Discovery names an unusable Android device "<name> (<adb state>)" (drivers/android/discovery.ts).
const ADB_STATE = /\((offline|unauthorized|authorizing|no permissions|recovery|sideload|bootloader|host|connecting|unknown)\)$/;

export function deviceRow(d: DeviceInfo, leasedBy: string | null): DeviceRow {
  const inName = d.platform.kind === "android" ? ADB_STATE.exec(d.name)?.[1] : undefined;
  return { ...d, state: d.connected ? "connected" : (inName ?? "available"), leasedBy };
}

const platformText = (p: DeviceInfo["platform"]) => (p.kind === "other" ? String((p as { value?: unknown }).value) : p.kind);

export async function devicesCommand(opts: { json?: boolean }): Promise<number> {
  const { listed, rows } = await withClient(async (c) => {
    const listed = await c.call<DevicesListResult>("devices.list");
    // A device is leased by the active Session that started on it.
    const { sessions } = await c.call<{ sessions: { id: string; deviceId: string | null }[] }>("devicerail.sessions.list", { state: "active" });
    return { listed, rows: listed.devices.map((d) => deviceRow(d, sessions.find((s) => s.deviceId === d.id)?.id ?? null)) };
  });
  // The devices.list result itself, as GET /devices and JSON-RPC give it; state and lease are table-only.
  if (opts.json) printJson(listed);
  else if (rows.length === 0) process.stdout.write("no devices\n");
  else printRows(["ID", "PLATFORM", "NAME", "OS", "STATE", "LEASED BY"], rows.map((d) => [d.id, platformText(d.platform), d.name, d.osVersion ?? "-", d.state, d.leasedBy ?? "-"]));
  return 0;
}

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
  if (/[\\/]$/.test(output) && !isDir) throw new CliError(`cannot write ${output}: ${existsSync(path) ? `${path} is not a folder` : `the folder ${path} does not exist`}`, EXIT.usage);
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
    if (!statSync(path).isDirectory()) throw new CliError(`cannot write ${output}: ${path} is a file, not a folder`, EXIT.usage);
    return join(path, defaultName);
  }
  writableFolder(output, dirname(path));
  return path;
}

export async function screenshotCommand(opts: { device?: string; output?: string; json?: boolean; timeout?: number }): Promise<number> {
  const file = outputFile(opts.output, `screenshot-${stamp(new Date())}.png`);
  const observation = await withClient(async (c) => {
    await route(c, opts.device);
    return inSession(c, async () => {
      const o = await observe(c);
      if (!o.screenshot?.sha256)
        throw new CliError(`device ${o.deviceId} gave no screenshot (${o.screenshotOmission ?? "none"}); is DEVICERAIL_SCREENSHOT_POLICY=omit set?`);
      writeFileSync(file, await c.evidence(o.screenshot.sha256));
      return o;
    });
  }, process.env, { timeoutMs: opts.timeout });
  if (opts.json) printJson({ file, observation });
  else {
    const { width, height } = observation.viewport;
    process.stdout.write(`${file}: ${width}×${height} screenshot of ${observation.deviceId} (sha256 ${observation.screenshot?.sha256})\n`);
  }
  return 0;
}

/**
 * `ui`: the tree with a ref per node. The listing is saved for `--ref` before it is printed, so
 * every ref a person can see is one a later command understands.
 */
export async function uiCommand(opts: { device?: string; json?: boolean; timeout?: number }): Promise<number> {
  const { observation, snapshot } = await withClient(async (c) => {
    await route(c, opts.device);
    return inSession(c, async () => {
      const o = await observe(c);
      if (!o.uiSnapshot) throw new CliError(`device ${o.deviceId} gave no UI tree (${o.uiSnapshotOmission ?? "no claim"})`);
      return { observation: o, snapshot: await c.call<UiSnapshot>("ui.snapshot.get", { observationId: o.id }) };
    });
  }, process.env, { timeoutMs: opts.timeout });
  const listing = { deviceId: observation.deviceId, observationId: observation.id, context: snapshot.context, nodes: snapshot.nodes.map((n) => n.stableNodeId), savedAtMs: Date.now() };
  let saved = true;
  try {
    saveListing(dataDirOf(process.env), listing);
  } catch (e) {
    // The tree is still worth printing; only --ref will not know these refs.
    saved = false;
    process.stderr.write(`${err().yellow("devicerail:")} could not save the refs for --ref: ${(e as Error).message}\n`);
  }
  if (opts.json) printJson(snapshot);
  else process.stdout.write(formatTree(snapshot.nodes, out(), { refs: saved, states: uiStatesOf(observation.metadata) }));
  return 0;
}

const round = (n: number) => String(Math.round(n));

/** Node states by stableNodeId, as the ui command prints them. */
export type UiStates = Record<string, readonly string[]>;


/**
 * `metadata.uiStates` of an Observation. Metadata is free-form JSON, so anything of another shape
 * or an unknown state is left out rather than printed.
 */
export function uiStatesOf(metadata: Record<string, unknown> | undefined): UiStates {
  const raw = metadata?.uiStates;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const states: Record<string, string[]> = {};
  for (const [id, list] of Object.entries(raw)) {
    const known = Array.isArray(list) ? UI_STATES.filter((s) => list.includes(s)) : [];
    if (known.length) states[id] = known;
  }
  return states;
}

/** One node without its depth: `role "text" #identifier [x,y,w,h] [disabled] [focused]`. */
export function nodeLine(n: UiNode, states: readonly string[] = [], st = out()): string {
  // The text a person reads, else the accessible name.
  const label = n.text || n.name;
  const b = n.bounds;
  const flags = [...(n.enabled === false ? ["disabled"] : []), ...states];
  return [
    st.bold(n.role),
    label ? JSON.stringify(label) : "",
    n.identifier ? st.cyan(`#${n.identifier}`) : "",
    b ? st.dim(`[${[b.x, b.y, b.width, b.height].map(round).join(",")}]`) : "",
    ...flags.map((f) => st.yellow(`[${f}]`)),
  ]
    .filter(Boolean)
    .join(" ");
}

/**
 * One line per node in preorder, two spaces per level: `role "text" #identifier [x,y,w,h]` and
 * the node's states; with `refs`, each line starts with the node's ref (`@e1` … in preorder) in a
 * column of its own, so the tree's indentation stays readable.
 */
export function formatTree(nodes: UiNode[], st = out(), opts: { refs?: boolean; states?: UiStates } = {}): string {
  const depth = new Map<string, number>();
  const width = opts.refs ? refAt(nodes.length - 1).length : 0;
  const lines = nodes.map((n, i) => {
    const d = n.parentStableNodeId === null ? 0 : (depth.get(n.parentStableNodeId) ?? -1) + 1;
    depth.set(n.stableNodeId, d);
    const ref = opts.refs ? `${st.dim(refAt(i).padEnd(width))} ` : "";
    return `${ref}${"  ".repeat(d)}${nodeLine(n, opts.states?.[n.stableNodeId], st)}`;
  });
  return `${lines.join("\n")}\n`;
}
