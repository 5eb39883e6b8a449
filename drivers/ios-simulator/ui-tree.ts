import type { CallContext } from "../../src/driver/driver.ts";
import { pause } from "../../src/driver/pause.ts";
import type { Hid } from "./backends.ts";
import { type AxeTree, parseAxeTree } from "./parse/axe-tree.ts";
import { platformError } from "./tool-process.ts";

/** How long an observation waits for the accessibility tree that is empty right after boot. */
const EMPTY_TREE_WAIT_MS = 5_000;
const EMPTY_TREE_POLL_MS = 250;

export function parseTree(json: string, scaleOf: (screen: { width: number; height: number }) => number): AxeTree {
  try {
    return parseAxeTree(json, scaleOf);
  } catch (err) {
    throw platformError("ios_malformed_tree", false, (err as Error).message);
  }
}

/** The backend's tree, polled briefly while it is still the bare root of a just-booted simulator. */
export async function settledTreeJson(hid: Hid, ctx: CallContext): Promise<string> {
  const until = Math.min(Date.now() + EMPTY_TREE_WAIT_MS, ctx.deadline ?? Number.POSITIVE_INFINITY);
  for (;;) {
    const json = await hid.tree(ctx);
    if (!parseTree(json, () => 1).empty || Date.now() >= until) return json;
    await pause(EMPTY_TREE_POLL_MS, ctx);
  }
}

/** The screen's structure (roles and ids, not texts): a new epoch when the app navigates. */
export function fingerprint(t: AxeTree): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const n of t.nodes) h.update(`${n.stableNodeId}|${n.role}|${n.identifier ?? ""}\n`);
  return h.digest("hex").slice(0, 16);
}
