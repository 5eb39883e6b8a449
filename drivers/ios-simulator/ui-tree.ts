import { type AxeTree, parseAxeTree } from "./parse/axe-tree.ts";
import { platformError } from "./tool-process.ts";

export function parseTree(json: string, scaleOf: (screen: { width: number; height: number }) => number): AxeTree {
  try {
    return parseAxeTree(json, scaleOf);
  } catch (err) {
    throw platformError("ios_malformed_tree", false, (err as Error).message);
  }
}

/** The screen's structure (roles and ids, not texts): a new epoch when the app navigates. */
export function fingerprint(t: AxeTree): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const n of t.nodes) h.update(`${n.stableNodeId}|${n.role}|${n.identifier ?? ""}\n`);
  return h.digest("hex").slice(0, 16);
}
