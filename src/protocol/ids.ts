import * as v from "valibot";

/** Largest integer a JavaScript client can hold exactly; the protocol's ceiling for every counter. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** JSON integer in [min, max]. A `1.0`/`1e0` token never reaches here as a number (the parser tags it), so it fails `number()`. */
export const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

export const U16Schema = int(0, 65_535);
export const U32Schema = int(0, 4_294_967_295);
export const U53Schema = int(0, MAX_SAFE);
export const SeqSchema = int(1, MAX_SAFE);
export const I32Schema = int(-2_147_483_648, 2_147_483_647);

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** String measured in Unicode code points (the protocol's unit), like JSON Schema's minLength/maxLength. */
export const cpString = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.metadata(min > 0 ? { minLength: min, maxLength: max } : { maxLength: max }),
    v.check((s) => {
      if (s.length > max * 2) return false;
      const n = codePoints(s);
      return n >= min && n <= max;
    }, `length must be ${min}..${max} code points`),
  );

/** Like cpString, and containing at least one non-whitespace character. */
export const nonBlank = (max: number) =>
  v.pipe(
    cpString(1, max),
    v.metadata({ pattern: "\\S" }),
    v.check((s) => /\S/u.test(s), "must not be blank"),
  );

const UUID_CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_ANY =
  /^(?:urn:uuid:)?(\{)?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})(\})?$/i;

/**
 * Normalises the UUID spellings the reference accepts (simple 32-hex, braced, `urn:uuid:`, upper case)
 * to lowercase hyphenated; null when the text is not a UUID.
 */
export function normalizeUuid(text: string): string | null {
  if (UUID_CANONICAL.test(text)) return text;
  const m = UUID_ANY.exec(text);
  if (!m) return null;
  const hyphens = (text.match(/-/g) ?? []).length;
  if ((m[1] === "{") !== (m[7] === "}") || (hyphens !== 0 && hyphens !== 4)) return null;
  return `${m[2]}-${m[3]}-${m[4]}-${m[5]}-${m[6]}`.toLowerCase();
}

export const UuidSchema = v.pipe(
  v.string(),
  v.metadata({ format: "uuid" }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const u = normalizeUuid(dataset.value);
    if (u === null) {
      addIssue({ message: "expected a UUID" });
      return NEVER;
    }
    return u;
  }),
);

export const RpcIdSchema = v.union([v.string(), U53Schema]);
export type RpcId = v.InferOutput<typeof RpcIdSchema>;

/** Any JSON value; free-form (arguments, metadata, output, details). */
export const JsonSchema = v.unknown();

/** Free-form JSON object. */
export const JsonObjectSchema = v.record(v.string(), v.unknown());

export const DeviceIdSchema = v.string();
export const SessionIdSchema = UuidSchema;
export const EventIdSchema = UuidSchema;
export const MediaStreamIdSchema = UuidSchema;
export const EventStreamEpochSchema = UuidSchema;
export const EventSubscriptionIdSchema = UuidSchema;
export const EventSequenceSchema = SeqSchema;
export const RequestTimeoutMsSchema = int(1, MAX_SAFE);

/** `k: T | null` — always emitted by the server; absent on input means null. */
export const nullable = <T extends v.GenericSchema>(schema: T) => v.optional(v.nullable(schema), null);

/** `k?: T` — omitted by the server when there is no value; on input absent and null both mean "no value". */
export const omittable = <T extends v.GenericSchema>(schema: T) =>
  v.pipe(
    v.nullish(schema),
    v.transform((x) => (x === null ? undefined : x)),
  );
