/**
 * The UI tree part of the detail pane: the step's tree (searchable) and its diff against the
 * previous step's tree. It lives in a slot of its own so that, live, a tree that arrives redraws
 * only this part and the screenshots above it keep loading undisturbed.
 */
import { el } from "./dom.ts";
import type { Step } from "./steps.ts";
import { type TreeLines, previousTree, stepTree, treeDiff, treeLines } from "./trees.ts";

/** The tree part of the current detail, and the tree shas it waits for (live). */
export const treeSlot = {
  step: null as Step | null,
  node: null as HTMLElement | null,
  waitsFor: new Set<string>(),
  /** The before tree an element action's marker waits for. */
  markersWaitFor: null as string | null,
};

/** A new slot for the step's tree, filled. */
export function openTreeSlot(step: Step): HTMLElement {
  treeSlot.step = step;
  treeSlot.node = el("div", { class: "tree-slot" });
  fillTreeSlot();
  return treeSlot.node;
}

export function fillTreeSlot(): void {
  treeSlot.waitsFor = new Set();
  if (treeSlot.node && treeSlot.step) treeSlot.node.replaceChildren(...detailTree(treeSlot.step));
}

/** section.tree (searchable) and section.diff against the previous step's tree. */
function detailTree(step: Step): HTMLElement[] {
  const tree = stepTree(step);
  if (!tree) return [];
  const lines = treeLines(tree.sha);
  if (!lines) {
    treeSlot.waitsFor.add(tree.sha);
    return [
      el(
        "section",
        { class: "tree" },
        el("h3", null, "UI tree"),
        el("p", { class: "omission" }, "loading the UI tree…"),
      ),
    ];
  }
  return [treeSection(tree, lines), diffSection(step, tree)];
}

function treeSection(tree: { role: string }, lines: TreeLines): HTMLElement {
  const count = el("span", { class: "tree-count" });
  const search = el("input", {
    class: "tree-search",
    type: "search",
    placeholder: "Filter elements…",
    "aria-label": "Filter UI tree",
    spellcheck: "false",
  });
  const list = el("ol", { class: "tree-lines" });
  const fragment = document.createDocumentFragment();
  for (const line of lines.lines) {
    const li = el("li", null, line.text);
    if (line.depth > 0) li.style.paddingLeft = `${Math.min(line.depth, 12) * 14 + 6}px`;
    fragment.append(li);
  }
  list.append(fragment);
  const total = lines.lines.length;
  const apply = () => {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    lines.lines.forEach((line, i) => {
      const hide = q !== "" && !line.lower.includes(q);
      (list.children[i] as HTMLElement).hidden = hide;
      if (!hide) shown++;
    });
    count.textContent = `${shown} of ${total}`;
  };
  search.addEventListener("input", apply);
  apply();
  const source = tree.role === "screen" ? "" : ` (${tree.role})`;
  return el(
    "section",
    { class: "tree" },
    el("div", { class: "section-head" }, el("h3", null, `UI tree${source}`), count, search),
    total ? list : el("p", { class: "omission" }, "no listed elements"),
  );
}

function diffSection(step: Step, tree: { sha: string }): HTMLElement {
  const prev = previousTree(step);
  const list = el("ul", { class: "diff-lines" });
  let heading = "Changes";
  if (!prev) list.append(el("li", { class: "diff-none" }, "first tree"));
  else if (!treeLines(prev.sha)) {
    treeSlot.waitsFor.add(prev.sha);
    list.append(el("li", { class: "diff-none" }, "loading the previous tree…"));
  } else {
    const changes = treeDiff(prev.sha, tree.sha);
    heading = `Changes since #${prev.step.seq} ${prev.step.title}`;
    if (!changes.length) list.append(el("li", { class: "diff-none" }, "no changes"));
    for (const c of changes) list.append(el("li", { class: `diff-${c.kind}` }, c.text));
  }
  return el("section", { class: "diff" }, el("h3", null, heading), list);
}
