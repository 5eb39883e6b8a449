/**
 * The CLI's store of the one ref scheme (src/surfaces/interaction/refs.ts): the refs `devicerail ui`
 * printed, kept in `<data dir>/cli-refs.json` so that a later command in another process can
 * turn `--ref @e3` back into the node reference the daemon honours while that screen is still
 * shown, and the numbering itself, so that the next `ui` of the same UI context keeps each
 * element's ref (as an MCP agent's listing does).
 *
 * Only `ui` saves a listing: a ref must always mean what the last listing a person read showed,
 * never what some later command happened to observe on another screen.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type RefState,
  currentRef as refIn,
  normaliseRef,
  refRange,
  resolveRef,
} from "../surfaces/interaction/index.ts";
import type { UiContextRef, UiNodeRef } from "../protocol/types/ui.ts";
import { CliError, EXIT } from "./output.ts";
import { replacePrivateFile } from "../server/private-file.ts";

/** One device's last `ui` listing, and the numbering of its UI context so far. */
export interface RefListing extends RefState {
  deviceId: string;
  observationId: string;
  /** The stableNodeIds the listing gave a ref, in tree order. */
  listed: string[];
  savedAtMs: number;
}

interface RefFile {
  version: 2;
  /** The device of the newest listing: what `--ref` means without -d. */
  last: string | null;
  devices: Record<string, RefListing>;
}

export const REFS_FILE = "cli-refs.json";
export const refsPath = (dataDir: string) => join(dataDir, REFS_FILE);

/** `@e3` or `e3` → `@e3`; anything else is a usage error. */
export function parseRef(text: string): string {
  const ref = normaliseRef(text);
  if (!ref)
    throw new CliError(`--ref expects a ref from devicerail ui such as @e3, not ${JSON.stringify(text)}`, EXIT.usage);
  return ref;
}

const isListing = (x: unknown): x is RefListing => {
  const l = x as RefListing;
  return (
    typeof l === "object" &&
    l !== null &&
    typeof l.deviceId === "string" &&
    typeof l.observationId === "string" &&
    Array.isArray(l.listed) &&
    typeof l.numbers === "object" &&
    l.numbers !== null &&
    typeof l.next === "number" &&
    typeof l.context === "object" &&
    l.context !== null
  );
};

/** The saved listings; a missing, unreadable or foreign file (one of version 1 too) counts as none (refs are a convenience). */
function readRefs(dataDir: string): RefFile {
  try {
    const f = JSON.parse(readFileSync(refsPath(dataDir), "utf8")) as RefFile;
    if (f.version !== 2 || typeof f.devices !== "object" || f.devices === null) throw new Error("unknown format");
    const devices = Object.fromEntries(Object.entries(f.devices).filter(([, l]) => isListing(l)));
    return { version: 2, last: typeof f.last === "string" ? f.last : null, devices };
  } catch {
    return { version: 2, last: null, devices: {} };
  }
}

/**
 * Replaces the device's listing. Written 0600 (node ids can name what an app shows) to a
 * temporary file that is renamed over the old one, so a command reading it meanwhile sees the old
 * listing or the new one, never half of one. Two `ui` commands on different devices at the same
 * moment may lose one listing (no lock): refs are a convenience, and `ui` again restores them.
 */
export function saveListing(dataDir: string, listing: RefListing): void {
  const refs = readRefs(dataDir);
  refs.devices[listing.deviceId] = listing;
  refs.last = listing.deviceId;
  replacePrivateFile(refsPath(dataDir), `${JSON.stringify(refs)}\n`);
}

/** The listing of a device, or of the device `ui` last listed when none is named. */
export function loadListing(dataDir: string, deviceId: string | null): RefListing | null {
  const refs = readRefs(dataDir);
  const id = deviceId ?? refs.last;
  return id === null ? null : (refs.devices[id] ?? null);
}

/** The numbering a listing continues (for the next `ui` of the device). */
export const stateOf = (l: RefListing | null): RefState | null =>
  l ? { context: l.context, numbers: l.numbers, next: l.next } : null;

/** The listing as the shared scheme reads it. */
const entries = (l: RefListing) => ({
  ...l,
  elements: l.listed.map((id) => ({ ref: `@e${l.numbers[id]}`, node: { stableNodeId: id } })),
});

/** The node reference a ref stands for in a listing. */
export function nodeRefOf(listing: RefListing, ref: string): UiNodeRef {
  const found = resolveRef(entries(listing), parseRef(ref));
  if (!found) {
    const range = refRange(entries(listing)).replace("it lists", "it has");
    throw new CliError(
      `${ref} is not in the last devicerail ui listing of ${listing.deviceId}${range}; run devicerail ui again`,
    );
  }
  return found.node;
}

/**
 * The ref a node still has: the listing is of the same document (so the daemon would honour it)
 * and gave this node a ref. Null otherwise, so a command never shows a ref that would fail or,
 * worse, name another element.
 */
export function currentRef(listing: RefListing | null, context: UiContextRef, stableNodeId: string): string | null {
  return listing ? refIn(entries(listing), context, stableNodeId) : null;
}
