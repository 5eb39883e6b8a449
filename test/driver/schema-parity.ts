/**
 * The schema parity property every driver's action space must have: the JSON Schema it advertises
 * for an action, compiled with ajv as a client would, accepts exactly the arguments the driver's
 * own validation accepts. A driver's test file calls `schemaParity` with its advertised
 * definitions and its action space.
 *
 * Arguments are generated from each advertised schema itself: values at and just beyond every
 * bound, integers and floats, strings measured in code points (astral characters, lone
 * surrogates, NUL and other controls), strings matching the pattern and then broken, missing and
 * extra keys (`__proto__`, `constructor` among them), wrong types, and arbitrary JSON. Only what
 * JSON can carry is generated, since arguments reach drivers from a JSON parser.
 */
import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import fc from "fast-check";
import type { ActionContract, ActionSpace } from "../../src/driver/action-space.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { ActionDefinition } from "../../src/protocol/types/action.ts";

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

interface ObjectSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
  not?: { properties?: Record<string, { const?: unknown }> };
}

export interface ParityTarget {
  /** The definitions the driver advertises (from its `actions`). */
  advertised(): Promise<readonly ActionDefinition[]>;
  /** The space the driver validates calls with. */
  space: ActionSpace<ActionContract>;
  /** Generated calls per action. */
  runs?: number;
}

/** Single code points (one of them a lone surrogate) that the patterns and length bounds treat differently. */
const UNITS = [
  "a",
  "Z",
  "0",
  "_",
  " ",
  "%",
  "s",
  ".",
  "-",
  ":",
  "/",
  "é",
  "東",
  "👋",
  "\u0000",
  "\n",
  "\t",
  "\u007f",
  "\u00a0",
  "\ud800",
];
const unit = fc.constantFrom(...UNITS);
const WRONG_TYPES: unknown[] = [null, true, false, "1", "", [], [1], {}, { x: 1 }];
const wrongType = fc.oneof(fc.constantFrom(...WRONG_TYPES), fc.string({ maxLength: 4 }), fc.integer());
const EXTRA_KEYS = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "z",
  "X",
  "count",
  "durationMs",
  "secret",
];

function numbers(s: PropertySchema): fc.Arbitrary<number> {
  const min = s.minimum ?? -1_000_000;
  const max = s.maximum ?? 1_000_000;
  const edges = [
    min,
    max,
    min - 1,
    max + 1,
    min + 0.5,
    max - 0.5,
    0,
    -0,
    1,
    -1,
    0.5,
    1e-7,
    2 ** 32,
    2 ** 53,
    1e21,
    -1e21,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
  ];
  const inRange =
    s.type === "integer"
      ? fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)
      : fc.double({ noNaN: true, min, max });
  return fc.oneof(
    { weight: 4, arbitrary: inRange },
    { weight: 2, arbitrary: fc.constantFrom(...edges) },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true, min: min - 10, max: max + 10 }) },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  );
}

/** Lengths worth trying for a string schema: at and around each bound, its pattern's quantifiers included. */
function lengthsOf(s: PropertySchema): number[] {
  const bounds = [
    s.minLength ?? 0,
    s.maxLength ?? 64,
    ...[...(s.pattern ?? "").matchAll(/\{(\d+)(?:,(\d+))?\}/g)].flatMap((m) => [Number(m[1]), Number(m[2] ?? m[1])]),
  ];
  return [...new Set(bounds.flatMap((b) => [b - 1, b, b + 1, b + 2]).filter((n) => n >= 0))];
}

function strings(s: PropertySchema): fc.Arbitrary<string> {
  const lengths = fc.constantFrom(...lengthsOf(s));
  // n code points of one unit, the last one possibly another.
  const sized = fc.tuple(lengths, unit, unit).map(([n, u, last]) => (n === 0 ? "" : u.repeat(n - 1) + last));
  const parts: fc.WeightedArbitrary<string>[] = [
    { weight: 3, arbitrary: sized },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 40 }) },
  ];
  if (s.pattern) {
    const matching = fc.stringMatching(new RegExp(s.pattern, "u"), { maxLength: 300 });
    // A matching value with a unit inserted somewhere.
    const broken = fc
      .tuple(matching, fc.nat(), unit)
      .map(([m, at, u]) => m.slice(0, at % (m.length + 1)) + u + m.slice(at % (m.length + 1)));
    // A matching value padded at either end towards a length bound, in one- or two-unit code points.
    const padded = fc
      .tuple(matching, fc.constantFrom("a", "0", "é", "👋"), lengths, fc.integer({ min: -2, max: 2 }), fc.boolean())
      .map(([m, u, n, d, front]) => {
        const pad = u.repeat(Math.max(0, n - [...m].length + d));
        return front ? pad + m : m + pad;
      });
    parts.push({ weight: 3, arbitrary: matching }, { weight: 2, arbitrary: broken }, { weight: 4, arbitrary: padded });
  }
  return fc.oneof(...parts);
}

/** Values for one property; `pinned` are values the object schema singles out (a `not` clause's consts). */
function valueOf(s: PropertySchema, pinned: unknown[]): fc.Arbitrary<unknown> {
  const own: fc.WeightedArbitrary<unknown>[] = pinned.length
    ? [{ weight: 6, arbitrary: fc.constantFrom(...pinned) }]
    : [];
  if (s.enum) {
    const values = s.enum.filter((x): x is string => typeof x === "string");
    const nearMisses = [
      "",
      "toString",
      "constructor",
      "__proto__",
      ...values.flatMap((x) => [x.toUpperCase(), `${x} `, x.slice(1)]),
    ];
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...s.enum) },
      { weight: 2, arbitrary: fc.constantFrom(...nearMisses) },
      { weight: 1, arbitrary: wrongType },
      ...own,
    );
  }
  if (s.type === "integer" || s.type === "number")
    return fc.oneof({ weight: 6, arbitrary: numbers(s) }, { weight: 1, arbitrary: wrongType }, ...own);
  if (s.type === "string")
    return fc.oneof({ weight: 6, arbitrary: strings(s) }, { weight: 1, arbitrary: wrongType }, ...own);
  return fc.jsonValue();
}

type Mutation = { drop: string } | { extra: [string, unknown] };

/** Arguments for one action: mostly objects shaped by its schema, mutated; sometimes any JSON value. */
export function argumentsFor(schema: ObjectSchema): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const keys = Object.keys(properties);
  const pinned = (k: string) =>
    "const" in (schema.not?.properties?.[k] ?? {}) ? [schema.not?.properties?.[k]?.const, -0] : [];
  const shaped = fc.record(
    Object.fromEntries(keys.map((k) => [k, valueOf(properties[k] as PropertySchema, pinned(k))])),
    { requiredKeys: schema.required ?? [] },
  );
  const extra = fc.tuple(fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 6 })), fc.jsonValue());
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    ...(keys.length ? [fc.constantFrom(...keys).map((drop) => ({ drop }))] : []),
    extra.map((e) => ({ extra: e })),
  );
  const objects = fc
    .tuple(
      shaped,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 2, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) },
      ),
    )
    .map(([base, changes]) => {
      const entries = new Map<string, unknown>(Object.entries(base));
      for (const c of changes) {
        if ("drop" in c) entries.delete(c.drop);
        else entries.set(c.extra[0], c.extra[1]);
      }
      // Own properties, as JSON.parse makes them: a `__proto__` key is data, not the prototype.
      const o: Record<string, unknown> = {};
      for (const [k, val] of entries)
        Object.defineProperty(o, k, { value: val, enumerable: true, writable: true, configurable: true });
      return o;
    });
  return fc.oneof(
    { weight: 12, arbitrary: objects },
    { weight: 1, arbitrary: fc.jsonValue() },
    { weight: 1, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  );
}

/** Whether the space's validation takes the arguments; any failure but invalid_arguments is a bug. */
function accepts(space: ActionSpace<ActionContract>, name: string, args: unknown): boolean {
  try {
    space.parse(name, args);
    return true;
  } catch (err) {
    if (err instanceof DriverError && err.driverCode === "invalid_arguments") return false;
    throw err;
  }
}

export function schemaParity(name: string, target: ParityTarget): void {
  describe(`action schema parity: ${name}`, () => {
    test("advertises the definitions of the space it validates calls with when asked for its actions", async () => {
      expect(await target.advertised()).toEqual([...target.space.definitions]);
    });

    test("each advertised schema accepts exactly what the driver's validation accepts when given generated arguments", async () => {
      const ajv = new Ajv2020({ strict: true });
      const seen: Record<string, { accepted: number; refused: number }> = {};
      for (const d of await target.advertised()) {
        const schemaAccepts = ajv.compile(d.inputSchema as object);
        const tally = (seen[d.name] = { accepted: 0, refused: 0 });
        fc.assert(
          fc.property(argumentsFor(d.inputSchema as ObjectSchema), (args) => {
            const bySchema = schemaAccepts(args);
            expect({ action: d.name, args, accepted: accepts(target.space, d.name, args) }).toEqual({
              action: d.name,
              args,
              accepted: bySchema,
            });
            tally[bySchema ? "accepted" : "refused"]++;
          }),
          { numRuns: target.runs ?? 1000 },
        );
      }
      // Both directions were exercised for every action: some arguments taken, some refused.
      expect(Object.entries(seen).filter(([, t]) => t.accepted === 0 || t.refused === 0)).toEqual([]);
    });
  });
}
