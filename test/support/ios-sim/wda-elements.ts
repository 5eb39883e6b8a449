/**
 * WebDriverAgent's element routes over the simulated tree: find by `accessibility id` / `id` /
 * `name`, `class name` (XCUIElementType…) and simple `predicate string`s (`attr == 'v'` joined by
 * AND); a cache of found elements keyed so a re-rendered screen still resolves them, and
 * `stale element reference` once the element is gone.
 */
import { randomUUID } from "node:crypto";
import { wdaSource } from "./wda-json.ts";
import { type SimNode, walk } from "./ui-tree.ts";

export const W3C_ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class WdaError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

interface Flat {
  node: SimNode;
  type: string;
  name: string | null;
  label: string | null;
  value: string | null;
  key: string;
}

/** Every element with its WDA attributes (type, name, label, value) and a key that survives re-rendering. */
function flatten(root: SimNode): Flat[] {
  const source = wdaSource(root);
  const out: Flat[] = [];
  const counts = new Map<string, number>();
  const visit = (el: Record<string, unknown>, n: SimNode) => {
    const type = `XCUIElementType${el.type as string}`;
    const base = `${type}|${n.identifier ?? el.label ?? ""}`;
    const i = counts.get(base) ?? 0;
    counts.set(base, i + 1);
    out.push({
      node: n,
      type,
      name: el.name as string | null,
      label: el.label as string | null,
      value: el.value as string | null,
      key: `${base}|${i}`,
    });
  };
  // Application and Window are synthetic around the app's children; map the rest in order.
  visit(source, root);
  const nodes = [...walk(root)].slice(1).map((w) => w.node);
  const els: Record<string, unknown>[] = [];
  const collect = (el: Record<string, unknown>) => {
    els.push(el);
    for (const c of (el.children as Record<string, unknown>[] | undefined) ?? []) collect(c);
  };
  const window = (source.children as Record<string, unknown>[])[0] as Record<string, unknown>;
  for (const c of (window.children as Record<string, unknown>[] | undefined) ?? []) collect(c);
  els.forEach((el, i) => visit(el, nodes[i] as SimNode));
  return out;
}

function predicate(value: string): (f: Flat) => boolean {
  const clauses = value.split(/\s+AND\s+/i).map((c) => {
    const m = /^\s*(\w+)\s*(==|CONTAINS|BEGINSWITH)\s*(['"])(.*)\3\s*$/i.exec(c);
    if (!m)
      throw new WdaError(
        400,
        "invalid argument",
        `fake WDA: predicate '${c}' is not modelled (only attr == 'value' AND …)`,
      );
    return { attr: m[1] as string, op: (m[2] as string).toUpperCase(), want: m[4] as string };
  });
  return (f) =>
    clauses.every(({ attr, op, want }) => {
      const have =
        attr === "type" || attr === "elementType"
          ? f.type
          : attr === "identifier"
            ? f.node.identifier
            : attr === "name"
              ? f.name
              : attr === "label"
                ? f.label
                : attr === "value"
                  ? f.value
                  : attr === "enabled"
                    ? String(f.node.enabled)
                    : undefined;
      if (have === undefined || have === null) return false;
      return op === "==" ? have === want : op === "CONTAINS" ? have.includes(want) : have.startsWith(want);
    });
}

export class ElementCache {
  private readonly byId = new Map<string, string>();

  private matcher(using: string, value: string): (f: Flat) => boolean {
    if (using === "accessibility id" || using === "id" || using === "name")
      return (f) => f.node.identifier === value || f.name === value;
    if (using === "class name") return (f) => f.type === value;
    if (using === "predicate string") return predicate(value);
    if (using === "class chain" || using === "xpath" || using === "link text" || using === "partial link text")
      throw new WdaError(500, "unknown error", `fake WDA: locator '${using}' is not modelled`);
    throw new WdaError(400, "invalid argument", `Invalid locator requested: ${using}`);
  }

  find(root: SimNode, using: string, value: string, all: boolean): string[] {
    const match = this.matcher(using, value);
    const found = flatten(root).slice(1).filter(match);
    if (!all && found.length === 0)
      throw new WdaError(404, "no such element", `unable to find an element using '${using}', value '${value}'`);
    return (all ? found : found.slice(0, 1)).map((f) => {
      const uuid = randomUUID().toUpperCase();
      this.byId.set(uuid, f.key);
      return uuid;
    });
  }

  resolve(root: SimNode, uuid: string): SimNode {
    const key = this.byId.get(uuid);
    const f = key ? flatten(root).find((x) => x.key === key) : undefined;
    if (!f)
      throw new WdaError(
        404,
        "stale element reference",
        `The previously found element ""${uuid}"" is not present in the current view anymore. Make sure the application UI has the expected state.`,
      );
    return f.node;
  }

  attribute(root: SimNode, uuid: string, name: string): unknown {
    const node = this.resolve(root, uuid);
    const f = flatten(root).find((x) => x.node === node) as Flat;
    const attrs: Record<string, unknown> = {
      type: f.type,
      name: f.name,
      label: f.label,
      value: f.value,
      enabled: node.enabled,
      visible: true,
      focused: node.focused,
      selected: node.selected ?? false,
      rect: node.frame,
    };
    if (!(name in attrs)) throw new WdaError(500, "unknown error", `fake WDA: attribute '${name}' is not modelled`);
    return attrs[name];
  }
}

export const elementRef = (uuid: string) => ({ ELEMENT: uuid, [W3C_ELEMENT]: uuid });
