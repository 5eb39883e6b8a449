/**
 * What to fix in refused params or action arguments, for the `details` of invalid_params and
 * invalid_arguments (docs/protocol/errors.md): where (an RFC 6901 JSON Pointer), what was expected
 * (read from the schema, in words) and what was received (a short rendering, or only its type and
 * length when the values are protected). Built from valibot's issue objects and schemas, read
 * structurally so that src/driver, which imports no packages, can hand them over too. Never uses an
 * issue's `message` or `received`: valibot writes the refused value into both. The schema in
 * words is ./schema-words.ts.
 */
import { type Node, describeSchema, discriminators, isObject, list, unwrap } from "./schema-words.ts";

export { describeSchema } from "./schema-words.ts";

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

export interface IssueOptions {
  /** Show received values as their type and length only (protected actions: values may be secrets). */
  readonly redact: boolean;
  /** Field names in order when the input was sent as an array, so pointers name positions. */
  readonly positional?: readonly string[];
}

/** A valibot (or any Standard Schema) issue; only the members read here. */
interface Issue {
  readonly expected?: string | null;
  readonly path?: readonly unknown[];
}

type Step = { key: PropertyKey; origin?: string };

const codePoints = (s: string): string[] => Array.from(s);
const cut = (s: string): string => {
  const cps = codePoints(s);
  return cps.length > RECEIVED_CODE_POINTS ? `${cps.slice(0, RECEIVED_CODE_POINTS).join("")}…` : s;
};
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** RFC 6901: "~" and "/" inside a key are written "~0" and "~1". */
export const pointerOf = (keys: readonly PropertyKey[]): string =>
  keys.map((k) => `/${String(k).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");

/** A number token the JSON parser kept apart because it was written with a fraction or exponent (protocol/json.ts JsonFloat). */
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
    return n > RECEIVED_CODE_POINTS
      ? `${JSON.stringify(cut(value))} (${plural(n, "code point")})`
      : JSON.stringify(value);
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
      s = unwrap(
        ((s.options ?? []) as Node[])
          .map(unwrap)
          .find((o) =>
            typeof key === "number" ? o?.type === "array" : o?.entries !== undefined && String(key) in o.entries,
          ),
      );
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

const stepOf = (p: unknown): Step =>
  isObject(p) && "key" in p
    ? { key: p.key as PropertyKey, origin: typeof p.origin === "string" ? p.origin : undefined }
    : { key: p as PropertyKey };

/** The values that hold each key of the path, starting with the input itself. */
function parentsAlong(input: unknown, keys: readonly PropertyKey[]): unknown[] {
  const out: unknown[] = [];
  let at: unknown = input;
  for (const k of keys) {
    out.push(at);
    // Own members only: a path key such as "__proto__" must not reach the prototype.
    at =
      at !== null && typeof at === "object" && Object.hasOwn(at, k)
        ? (at as Record<PropertyKey, unknown>)[k as string]
        : undefined;
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
  const expected =
    found === null
      ? (issue.expected ?? "a valid value")
      : "words" in found
        ? found.words
        : describeSchema(found.schema);
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
export function issueDetails(
  schema: unknown,
  input: unknown,
  issues: readonly unknown[],
  opts: IssueOptions,
): IssueDetail[] {
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
  return out.length
    ? out
    : [{ pointer: "", expected: describeSchema(schema), received: renderReceived(input, opts.redact) }];
}
