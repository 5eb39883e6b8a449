/**
 * What to fix in refused params or action arguments, for the `details` of invalid_params and
 * invalid_arguments (docs/protocol/errors.md): where (an RFC 6901 JSON Pointer), what was expected
 * (read from the schema, in words) and what was received (a short rendering, or only its type and
 * length when the values are protected). Built from valibot's issue objects and schemas, read
 * structurally so that src/driver, which imports no packages, can hand them over too. Never uses an
 * issue's `message` or `received`: valibot writes the refused value into both.
 */

/** One refused location. `pointer` is relative to the value that was validated ("" is all of it). */
export interface IssueDetail {
  readonly pointer: string;
  readonly expected: string;
  readonly received: string;
}

/** How many issues an error lists; the first is also spelled out at the top level of its details. */
export const MAX_ISSUE_DETAILS = 5;
/** Code points of a received string (or of compact JSON) shown before it is cut with "…". */
export const RECEIVED_CODE_POINTS = 40;
/** Names listed from a key set or a picklist before "…". */
const LISTED = 12;

export interface IssueOptions {
  /** Show received values as their type and length only (protected actions: values may be secrets). */
  readonly redact: boolean;
  /** Field names in order when the input was sent as an array, so pointers name positions. */
  readonly positional?: readonly string[];
}

/** A schema as valibot builds it; only the members read here. */
interface Node {
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

/** A valibot (or any Standard Schema) issue; only the members read here. */
interface Issue {
  readonly expected?: string | null;
  readonly path?: readonly unknown[];
}

type Step = { key: PropertyKey; origin?: string };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const WRAPPERS = new Set(["optional", "exact_optional", "undefinedable", "nullable", "nullish", "non_optional", "non_nullable", "non_nullish"]);
const OBJECTS = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);

const codePoints = (s: string): string[] => Array.from(s);
const list = (names: readonly string[]): string => (names.length > LISTED ? `${names.slice(0, LISTED).join(", ")}, …` : names.join(", "));
const cut = (s: string): string => {
  const cps = codePoints(s);
  return cps.length > RECEIVED_CODE_POINTS ? `${cps.slice(0, RECEIVED_CODE_POINTS).join("")}…` : s;
};
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** RFC 6901: "~" and "/" inside a key are written "~0" and "~1". */
export const pointerOf = (keys: readonly PropertyKey[]): string => keys.map((k) => `/${String(k).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");

/** A number token the JSON parser kept apart because it was written with a fraction or exponent (rpc/json.ts JsonFloat). */
const floatToken = (x: object): number | null => {
  const toJSON = (x as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== "function") return null;
  const n: unknown = toJSON.call(x);
  return typeof n === "number" ? n : null;
};

/** A short rendering of a received value; with `redact`, only its type and size. */
export function renderReceived(value: unknown, redact: boolean): string {
  if (value === undefined) return "no value";
  if (value === null) return "null";
  if (typeof value === "string") {
    const n = codePoints(value).length;
    if (redact) return `a string of ${plural(n, "code point")}`;
    return n > RECEIVED_CODE_POINTS ? `${JSON.stringify(cut(value))} (${plural(n, "code point")})` : JSON.stringify(value);
  }
  if (typeof value === "number") return redact ? "a number" : String(value);
  if (typeof value === "boolean") return redact ? "a boolean" : String(value);
  if (Array.isArray(value)) return redact ? `an array of ${plural(value.length, "item")}` : cut(compactJson(value));
  if (typeof value === "object") {
    const float = floatToken(value);
    if (float !== null) return redact ? "a number" : Number.isSafeInteger(float) ? `${float}.0` : String(float);
    return redact ? "an object" : cut(compactJson(value));
  }
  return typeof value;
}

function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return Array.isArray(value) ? "an array" : "an object";
  }
}

/** The pipe actions of a schema, those of a piped schema it was built from first. */
function actionsOf(s: Node): Node[] {
  if (!s.pipe) return [];
  const [first, ...rest] = s.pipe;
  return [...(first && first !== s ? actionsOf(first) : []), ...rest];
}

function metadataOf(actions: readonly Node[]): Record<string, unknown> {
  return Object.assign({}, ...actions.filter((a) => a.type === "metadata").map((a) => a.metadata ?? {}));
}

const requirement = (actions: readonly Node[], type: string): unknown => actions.find((a) => a.type === type)?.requirement;

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
  const out = actions.filter((a) => a.type === "regex" && a.requirement instanceof RegExp).map((a) => `matching ${(a.requirement as RegExp).source}`);
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

const join = (head: string, ...parts: (string | null)[]) => [head, ...parts.filter((p): p is string => p !== null && p !== "")].join(" ");

function describeString(actions: readonly Node[]): string {
  const meta = metadataOf(actions);
  if (meta.format === "uuid") return "a UUID";
  // cpString states its code-point bounds as metadata; valibot's own lengths count UTF-16 units.
  const size =
    bounds(meta.minLength, meta.maxLength, "code point", "code points") ??
    bounds(requirement(actions, "min_length") ?? requirement(actions, "length"), requirement(actions, "max_length") ?? requirement(actions, "length"), "character", "characters");
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

const isOptional = (s: Node | undefined): boolean => s?.type === "optional" || s?.type === "exact_optional" || s?.type === "nullish" || s?.type === "undefinedable";

function describeObject(s: Node, actions: readonly Node[]): string {
  const keys = Object.keys(s.entries ?? {});
  const extra = patterns(actions, metadataOf(actions)).join(" and ");
  if (keys.length === 0) return join(s.type === "strict_object" ? "an empty object" : "an object", extra);
  const required = keys.filter((k) => !isOptional(s.entries?.[k]));
  const optional = keys.filter((k) => isOptional(s.entries?.[k]));
  const keyList = (names: string[], what: string) => (names.length ? `${what}${names.length === 1 ? "" : "s"} ${list(names)}` : null);
  return join(
    "an object with",
    [keyList(required, "key"), keyList(optional, "optional key")].filter((p) => p !== null).join(" and "),
    extra ? `(${extra})` : null,
  );
}

const discriminators = (s: Node): string[] =>
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
      const size = bounds(meta.minItems ?? requirement(actions, "min_length"), meta.maxItems ?? requirement(actions, "max_length"), "item", "items");
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

const unwrap = (s: Node | undefined): Node | undefined => {
  let x = s;
  while (x?.type && WRAPPERS.has(x.type)) x = x.wrapped;
  return x;
};

/** Where a walk by path ends: the schema of the location, or the words for a variant's discriminator. */
type Found = { schema: Node } | { words: string } | null;

/** The schema at `keys` below `schema`; `parents[i]` is the value that holds `keys[i]` (picks a variant's option). */
function schemaAt(schema: unknown, keys: readonly PropertyKey[], parents: readonly unknown[]): Found {
  let s: Node | undefined = isObject(schema) ? (schema as Node) : undefined;
  for (const [i, key] of keys.entries()) {
    s = unwrap(s);
    const parent = parents[i];
    if (s?.type === "variant") {
      if (key === s.key) return { words: `one of: ${list(discriminators(s))}` };
      const tagKey = s.key ?? "";
      const tag = isObject(parent) ? parent[tagKey] : undefined;
      s = unwrap(((s.options ?? []) as Node[]).find((o) => o.entries?.[tagKey]?.literal === tag));
    } else if (s?.type === "union") {
      s = unwrap(((s.options ?? []) as Node[]).map(unwrap).find((o) => (typeof key === "number" ? o?.type === "array" : o?.entries !== undefined && String(key) in o.entries)));
    }
    if (!s) return null;
    if (s.entries) s = s.entries[String(key)] ?? s.rest;
    else if (s.type === "record") s = s.value;
    else if (s.type === "array") s = s.item;
    else if (s.type === "tuple" || s.type === "strict_tuple" || s.type === "loose_tuple") s = s.items?.[Number(key)];
    else return null;
    if (!s) return null;
  }
  return s ? { schema: s } : null;
}

const stepOf = (p: unknown): Step => (isObject(p) && "key" in p ? { key: p.key as PropertyKey, origin: typeof p.origin === "string" ? p.origin : undefined } : { key: p as PropertyKey });

/** The values that hold each key of the path, starting with the input itself. */
function parentsAlong(input: unknown, keys: readonly PropertyKey[]): unknown[] {
  const out: unknown[] = [];
  let at: unknown = input;
  for (const k of keys) {
    out.push(at);
    // Own members only: a path key such as "__proto__" must not reach the prototype.
    at = at !== null && typeof at === "object" && Object.hasOwn(at, k) ? (at as Record<PropertyKey, unknown>)[k as string] : undefined;
  }
  out.push(at);
  return out;
}

function detailOf(schema: unknown, input: unknown, issue: Issue, opts: IssueOptions): IssueDetail {
  const steps = (issue.path ?? []).map(stepOf);
  const last = steps.at(-1);
  // An unknown key of a strict object is reported at the object: the key itself is input and may hold anything.
  if (last?.origin === "key" && issue.expected === "never") {
    const keys = steps.slice(0, -1).map((s) => s.key);
    const found = schemaAt(schema, keys, parentsAlong(input, keys));
    const allowed = found && "schema" in found ? Object.keys(unwrap(found.schema)?.entries ?? {}) : [];
    return {
      pointer: pointerOf(keys),
      expected: allowed.length === 0 ? "no keys" : `only the key${allowed.length === 1 ? "" : "s"} ${list(allowed)}`,
      received: opts.redact ? "an unknown key" : `unknown key ${JSON.stringify(cut(String(last.key)))}`,
    };
  }
  const keys = steps.map((s) => s.key);
  const parents = parentsAlong(input, keys);
  const found = schemaAt(schema, keys, parents);
  const expected = found === null ? (issue.expected ?? "a valid value") : "words" in found ? found.words : describeSchema(found.schema);
  return { pointer: pointerOf(keys), expected, received: renderReceived(parents.at(-1), opts.redact) };
}

/** Pointers into params sent as an array name positions ("/1"), not the fields they were read as. */
function positional(d: IssueDetail, names: readonly string[]): IssueDetail {
  const m = /^\/([^/]*)(.*)$/.exec(d.pointer);
  const at = m ? names.indexOf((m[1] as string).replaceAll("~1", "/").replaceAll("~0", "~")) : -1;
  return at < 0 ? d : { ...d, pointer: `/${at}${m?.[2] ?? ""}` };
}

/**
 * The refused locations of a failed validation of `input` against `schema`, one per pointer in the
 * order the schema found them, at most MAX_ISSUE_DETAILS. Never empty: a failure without issues
 * becomes one at the top.
 */
export function issueDetails(schema: unknown, input: unknown, issues: readonly unknown[], opts: IssueOptions): IssueDetail[] {
  const out: IssueDetail[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    let d = detailOf(schema, input, (isObject(issue) ? issue : {}) as Issue, opts);
    if (opts.positional) d = positional(d, opts.positional);
    if (seen.has(d.pointer)) continue;
    seen.add(d.pointer);
    out.push(d);
    if (out.length === MAX_ISSUE_DETAILS) break;
  }
  return out.length ? out : [{ pointer: "", expected: describeSchema(schema), received: renderReceived(input, opts.redact) }];
}
