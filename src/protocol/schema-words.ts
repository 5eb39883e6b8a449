/**
 * A valibot schema in words, for the `expected` of a refused location (docs/protocol/errors.md):
 * "an integer from 0 to 4294967295", "a string of 1 to 64 code points matching …", "one of:
 * enter, tab". Reads schemas structurally (the members below), so that src/driver, which imports no
 * packages, can have its schemas described too.
 */

/** How many keys, options or discriminators a description names before "…". */
const LISTED = 12;

/** A schema as valibot builds it; only the members read here. */
export interface Node {
  readonly type?: string;
  readonly expects?: string;
  readonly pipe?: readonly Node[];
  readonly wrapped?: Node;
  readonly entries?: Readonly<Record<string, Node>>;
  readonly rest?: Node;
  readonly item?: Node;
  readonly items?: readonly Node[];
  readonly value?: Node;
  readonly options?: readonly unknown[];
  readonly key?: string;
  readonly literal?: unknown;
  readonly requirement?: unknown;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
export const WRAPPERS = new Set([
  "optional",
  "exact_optional",
  "undefinedable",
  "nullable",
  "nullish",
  "non_optional",
  "non_nullable",
  "non_nullish",
]);
const OBJECTS = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);

export const list = (names: readonly string[]): string =>
  names.length > LISTED ? `${names.slice(0, LISTED).join(", ")}, …` : names.join(", ");

/** The pipe actions of a schema, those of a piped schema it was built from first. */
function actionsOf(s: Node): Node[] {
  if (!s.pipe) return [];
  const [first, ...rest] = s.pipe;
  return [...(first && first !== s ? actionsOf(first) : []), ...rest];
}

function metadataOf(actions: readonly Node[]): Record<string, unknown> {
  return Object.assign({}, ...actions.filter((a) => a.type === "metadata").map((a) => a.metadata ?? {}));
}

const requirement = (actions: readonly Node[], type: string): unknown =>
  actions.find((a) => a.type === type)?.requirement;

function bounds(min: unknown, max: unknown, unit: string, units: string): string | null {
  const lo = typeof min === "number" ? min : null;
  const hi = typeof max === "number" ? max : null;
  const of = (n: number) => (n === 1 ? unit : units);
  if (lo !== null && hi !== null) return lo === hi ? `of exactly ${lo} ${of(lo)}` : `of ${lo} to ${hi} ${units}`;
  if (lo !== null) return `of at least ${lo} ${of(lo)}`;
  if (hi !== null) return `of at most ${hi} ${of(hi)}`;
  return null;
}

/** What the metadata and regex actions say beyond type and size (the advertised document's words). */
function patterns(actions: readonly Node[], meta: Record<string, unknown>): string[] {
  const out = actions
    .filter((a) => a.type === "regex" && a.requirement instanceof RegExp)
    .map((a) => `matching ${(a.requirement as RegExp).source}`);
  if (typeof meta.pattern === "string") out.push(`matching ${meta.pattern}`);
  const not = meta.not;
  if (isObject(not) && typeof not.pattern === "string") out.push(`not matching ${not.pattern}`);
  if (isObject(not) && isObject(not.properties)) {
    const consts = Object.entries(not.properties).filter(([, p]) => isObject(p) && "const" in p);
    const terms = consts.map(([k, p]) => `${k} = ${JSON.stringify((p as { const: unknown }).const)}`);
    if (terms.length > 0) out.push(terms.length === 1 ? `not ${terms[0]}` : `not both ${terms.join(" and ")}`);
  }
  if (meta.uniqueItems === true) out.push("without repeated items");
  return out;
}

const join = (head: string, ...parts: (string | null)[]) =>
  [head, ...parts.filter((p): p is string => p !== null && p !== "")].join(" ");

function describeString(actions: readonly Node[]): string {
  const meta = metadataOf(actions);
  if (meta.format === "uuid") return "a UUID";
  // cpString states its code-point bounds as metadata; valibot's own lengths count UTF-16 units.
  const size =
    bounds(meta.minLength, meta.maxLength, "code point", "code points") ??
    bounds(
      requirement(actions, "min_length") ?? requirement(actions, "length"),
      requirement(actions, "max_length") ?? requirement(actions, "length"),
      "character",
      "characters",
    );
  return join("a string", size, patterns(actions, meta).join(" and "));
}

function describeNumber(actions: readonly Node[]): string {
  const integer = actions.some((a) => a.type === "integer" || a.type === "safe_integer");
  const min = requirement(actions, "min_value");
  const max = requirement(actions, "max_value");
  const head = integer ? "an integer" : "a number";
  if (typeof min === "number" && typeof max === "number") return `${head} from ${min} to ${max}`;
  if (typeof min === "number") return `${head} of at least ${min}`;
  if (typeof max === "number") return `${head} of at most ${max}`;
  return head;
}

const isOptional = (s: Node | undefined): boolean =>
  s?.type === "optional" || s?.type === "exact_optional" || s?.type === "nullish" || s?.type === "undefinedable";

function describeObject(s: Node, actions: readonly Node[]): string {
  const keys = Object.keys(s.entries ?? {});
  const extra = patterns(actions, metadataOf(actions)).join(" and ");
  if (keys.length === 0) return join(s.type === "strict_object" ? "an empty object" : "an object", extra);
  const required = keys.filter((k) => !isOptional(s.entries?.[k]));
  const optional = keys.filter((k) => isOptional(s.entries?.[k]));
  const keyList = (names: string[], what: string) =>
    names.length ? `${what}${names.length === 1 ? "" : "s"} ${list(names)}` : null;
  return join(
    "an object with",
    [keyList(required, "key"), keyList(optional, "optional key")].filter((p) => p !== null).join(" and "),
    extra ? `(${extra})` : null,
  );
}

export const discriminators = (s: Node): string[] =>
  (s.options ?? []).flatMap((o) => {
    const d = isObject(o) ? (o as Node).entries?.[s.key ?? ""] : undefined;
    return d && "literal" in d ? [String(d.literal)] : [];
  });

/** The schema in words, e.g. "an integer from 0 to 4294967295" or "one of: enter, tab". */
export function describeSchema(schema: unknown, depth = 0): string {
  if (!isObject(schema) || depth > 8) return "a valid value";
  const s = schema as Node;
  const actions = actionsOf(s);
  switch (s.type) {
    case "nullable":
    case "nullish":
      return `${describeSchema(s.wrapped, depth + 1)} or null`;
    case "string":
      return describeString(actions);
    case "number":
      return describeNumber(actions);
    case "boolean":
      return "true or false";
    case "null":
      return "null";
    case "literal":
      return JSON.stringify(s.literal) ?? String(s.literal);
    case "picklist":
    case "enum":
      return `one of: ${list((s.options ?? []).map(String))}`;
    case "array": {
      const meta = metadataOf(actions);
      const size = bounds(
        meta.minItems ?? requirement(actions, "min_length"),
        meta.maxItems ?? requirement(actions, "max_length"),
        "item",
        "items",
      );
      const item = unwrap(s.item)?.type === "unknown" ? null : `each ${describeSchema(s.item, depth + 1)}`;
      return [join("an array", size, patterns(actions, meta).join(" and ")), item].filter((p) => p !== null).join(", ");
    }
    case "record":
      return "an object";
    case "union":
      return [...new Set((s.options ?? []).map((o) => describeSchema(o, depth + 1)))].join(" or ");
    case "variant":
      return `an object whose ${s.key} is one of: ${list(discriminators(s))}`;
    case "unknown":
    case "any":
      return "any JSON value";
    default:
      if (s.type && WRAPPERS.has(s.type)) return describeSchema(s.wrapped, depth + 1);
      if (s.type && OBJECTS.has(s.type)) return describeObject(s, actions);
      return s.expects ?? "a valid value";
  }
}

export const unwrap = (s: Node | undefined): Node | undefined => {
  let x = s;
  while (x?.type && WRAPPERS.has(x.type)) x = x.wrapped;
  return x;
};
