/**
 * Strict JSON parsing that mirrors serde_json (used by the reference server),
 * while remembering whether a number was written as an integer or not.
 * Longer than our usual 300 lines on purpose: the fast path and the hand-written
 * parser must agree token for token, and keeping them side by side is what
 * makes that reviewable.
 */

/** A JSON number token written with a fraction or exponent (or an integer too large to be exact) whose value is integral, e.g. `1.0`, `1e2`, `18446744073709551616`. Kept distinct so typed integer fields can reject it. */
export class JsonFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

export type JsonParseOk = { ok: true; value: unknown; duplicateTopLevelKey: boolean };
/**
 * Positions follow serde_json: `column` is the 1-based column of the offending
 * character; errors at end of input point at the last character, so input that
 * is empty or ends with LF reports column 0 on its last line.
 */
export type JsonParseError = { ok: false; line: number; column: number; reason: string };

const DEFAULT_MAX_DEPTH = 128;
// Integer tokens with at most this many digits are always exact doubles, so
// native JSON.parse cannot misclassify them.
const SAFE_DIGITS = 15;

const QUOTE = 34,
  BACKSLASH = 92,
  COMMA = 44,
  COLON = 58,
  MINUS = 45,
  PLUS = 43,
  DOT = 46;
const ZERO = 48,
  NINE = 57,
  LOWER_E = 101,
  UPPER_E = 69,
  LOWER_U = 117;
const OPEN_BRACKET = 91,
  CLOSE_BRACKET = 93,
  OPEN_BRACE = 123,
  CLOSE_BRACE = 125;
const SIMPLE_ESCAPES: Partial<Record<number, string>> = {
  34: '"',
  92: "\\",
  47: "/",
  98: "\b",
  102: "\f",
  110: "\n",
  114: "\r",
  116: "\t",
};

export function parseJson(text: string, maxDepth: number = DEFAULT_MAX_DEPTH): JsonParseOk | JsonParseError {
  checkDepth(maxDepth);
  const topLevelColons = fastPathColons(text, maxDepth);
  if (topLevelColons >= 0) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // The hand-written parser is the one that knows where the error is.
      return parseJsonSlow(text, maxDepth);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { ok: true, value, duplicateTopLevelKey: false };
    }
    // In valid JSON each member of the top-level object owns exactly one
    // depth-1 colon; fewer surviving keys means JSON.parse merged a duplicate.
    if (Object.keys(value).length === topLevelColons) {
      return { ok: true, value, duplicateTopLevelKey: false };
    }
  }
  return parseJsonSlow(text, maxDepth);
}

/**
 * Decides whether native JSON.parse is guaranteed to agree with the strict
 * parser on `text`. Returns -1 when it is not, otherwise the number of colons
 * at nesting depth 1 (used afterwards to detect duplicate top-level keys).
 * Strings are skipped wholesale, which is only sound because no backslash
 * (hence no escaped quote) is present.
 */
function fastPathColons(text: string, maxDepth: number): number {
  if (text.indexOf("\\") !== -1) return -1;
  const len = text.length;
  let depth = 0;
  let colons = 0;
  let digits = 0;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) {
      if (++digits > SAFE_DIGITS) return -1;
      continue;
    }
    if (digits > 0) {
      // A fraction or exponent is where integer/float classification starts to matter.
      if (c === DOT || c === LOWER_E || c === UPPER_E) return -1;
      digits = 0;
    }
    if (c === QUOTE) {
      const close = text.indexOf('"', i + 1);
      if (close === -1) return -1;
      i = close;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return -1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      if (depth === 1) colons++;
    } else if (c === MINUS) {
      // Native JSON.parse keeps `-0`, but integer tokens must normalise it.
      if (text.charCodeAt(i + 1) === ZERO) return -1;
    }
  }
  return colons;
}

function checkDepth(maxDepth: number): void {
  if (!Number.isInteger(maxDepth) || maxDepth < 0) {
    throw new RangeError(`maxDepth must be a non-negative integer, got ${maxDepth}`);
  }
}

class Failure {
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {}
}

/** The full strict parser; exported so tests can check it agrees with the fast path. */
export function parseJsonSlow(text: string, maxDepth: number = DEFAULT_MAX_DEPTH): JsonParseOk | JsonParseError {
  checkDepth(maxDepth);
  const parser = new Parser(text, maxDepth);
  try {
    const value = parser.parseDocument();
    return { ok: true, value, duplicateTopLevelKey: parser.duplicateTopLevelKey };
  } catch (e) {
    if (e instanceof Failure) return errorAt(text, e.index, e.reason);
    throw e;
  }
}

/** Same arithmetic as serde_json's SliceRead::position_of_index(min(len, index + 1)). */
function errorAt(text: string, index: number, reason: string): JsonParseError {
  const end = Math.min(text.length, index + 1);
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { ok: false, line, column: end - lineStart, reason };
}

type Container = unknown[] | Record<string, unknown>;

class Parser {
  pos = 0;
  duplicateTopLevelKey = false;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  /**
   * Iterative so that hostile nesting can never exhaust the JS stack, even if a
   * caller raises maxDepth far above the default.
   */
  parseDocument(): unknown {
    const text = this.text;
    const containers: Container[] = [];
    const keys: string[] = [];
    let value: unknown;
    this.skipWhitespace();
    outer: for (;;) {
      const c = text.charCodeAt(this.pos);
      if (c === OPEN_BRACKET || c === OPEN_BRACE) {
        if (containers.length >= this.maxDepth) this.fail(this.pos, "recursion limit exceeded");
        const isArray = c === OPEN_BRACKET;
        this.pos++;
        this.skipWhitespace();
        if (text.charCodeAt(this.pos) === (isArray ? CLOSE_BRACKET : CLOSE_BRACE)) {
          this.pos++;
          value = isArray ? [] : {};
        } else {
          keys.push(isArray ? "" : this.parseKeyAndColon());
          containers.push(isArray ? [] : {});
          continue;
        }
      } else {
        value = this.parseScalar(c);
      }

      // Hand the finished value to its parent; closing a container yields a
      // new finished value, hence the loop.
      for (;;) {
        const depth = containers.length;
        if (depth === 0) break outer;
        const parent = containers[depth - 1]!;
        const isArray = Array.isArray(parent);
        if (isArray) parent.push(value);
        else this.setMember(parent, keys[depth - 1]!, value, depth === 1);
        const close = isArray ? CLOSE_BRACKET : CLOSE_BRACE;
        this.skipWhitespace();
        const next = text.charCodeAt(this.pos);
        if (next === COMMA) {
          this.pos++;
          this.skipWhitespace();
          if (text.charCodeAt(this.pos) === close) this.fail(this.pos, "trailing comma");
          if (!isArray) keys[depth - 1] = this.parseKeyAndColon();
          continue outer;
        }
        if (next !== close) {
          if (isArray) this.failHere("EOF while parsing a list", "expected `,` or `]`");
          this.failHere("EOF while parsing an object", "expected `,` or `}`");
        }
        this.pos++;
        containers.pop();
        keys.pop();
        value = parent;
      }
    }
    this.skipWhitespace();
    if (this.pos < text.length) this.fail(this.pos, "trailing characters");
    return value;
  }

  private setMember(obj: Record<string, unknown>, key: string, value: unknown, topLevel: boolean): void {
    if (topLevel && Object.hasOwn(obj, key)) this.duplicateTopLevelKey = true;
    setOwn(obj, key, value);
  }

  /** Leaves `pos` on the first non-whitespace character of the member's value. */
  private parseKeyAndColon(): string {
    if (this.text.charCodeAt(this.pos) !== QUOTE) this.failHere("EOF while parsing an object", "key must be a string");
    const key = this.parseString();
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) !== COLON) this.failHere("EOF while parsing an object", "expected `:`");
    this.pos++;
    this.skipWhitespace();
    return key;
  }

  private parseScalar(c: number): unknown {
    if (c === QUOTE) return this.parseString();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.parseNumber();
    if (c === 116) return this.parseLiteral("true", true);
    if (c === 102) return this.parseLiteral("false", false);
    if (c === 110) return this.parseLiteral("null", null);
    return this.failHere("EOF while parsing a value", "expected value");
  }

  private parseLiteral<T>(word: string, value: T): T {
    const text = this.text;
    const start = this.pos;
    for (let k = 1; k < word.length; k++) {
      const i = start + k;
      if (i >= text.length) this.fail(i, "EOF while parsing a value");
      if (text.charCodeAt(i) !== word.charCodeAt(k)) this.fail(i, "expected ident");
    }
    this.pos = start + word.length;
    return value;
  }

  private parseNumber(): number | JsonFloat {
    const text = this.text;
    const start = this.pos;
    let i = text.charCodeAt(start) === MINUS ? start + 1 : start;
    i = text.charCodeAt(i) === ZERO ? i + 1 : this.skipDigits(i);
    let c = text.charCodeAt(i);
    // Only reachable after a leading zero, since skipDigits consumes whole runs.
    if (c >= ZERO && c <= NINE) this.fail(i, "invalid number");
    const integral = c !== DOT && c !== LOWER_E && c !== UPPER_E;
    if (c === DOT) {
      i = this.skipDigits(i + 1);
      c = text.charCodeAt(i);
    }
    if (c === LOWER_E || c === UPPER_E) {
      c = text.charCodeAt(++i);
      if (c === PLUS || c === MINUS) i++;
      i = this.skipDigits(i);
    }
    this.pos = i;
    const n = Number(text.slice(start, i));
    if (!Number.isFinite(n)) this.fail(i - 1, "number out of range");
    // `n === 0 ? 0 : n` drops the sign of `-0`, which integer tokens never keep.
    if (integral) return Math.abs(n) > Number.MAX_SAFE_INTEGER ? new JsonFloat(n) : n === 0 ? 0 : n;
    return Number.isInteger(n) ? new JsonFloat(n) : n;
  }

  /** Requires at least one digit at `i`; returns the index after the run. */
  private skipDigits(i: number): number {
    const text = this.text;
    let c = text.charCodeAt(i);
    if (!(c >= ZERO && c <= NINE)) this.fail(i, i >= text.length ? "EOF while parsing a value" : "invalid number");
    do c = text.charCodeAt(++i);
    while (c >= ZERO && c <= NINE);
    return i;
  }

  private parseString(): string {
    const text = this.text;
    const len = text.length;
    let i = this.pos + 1;
    let runStart = i;
    let out = "";
    for (;;) {
      if (i >= len) this.fail(len, "EOF while parsing a string");
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        this.pos = i + 1;
        return out + text.slice(runStart, i);
      }
      if (c < 0x20) this.fail(i, "control character in string");
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      out += text.slice(runStart, i);
      if (i + 1 >= len) this.fail(len, "EOF while parsing a string");
      const escape = text.charCodeAt(i + 1);
      i += 2;
      const simple = SIMPLE_ESCAPES[escape];
      if (simple !== undefined) {
        out += simple;
      } else if (escape === LOWER_U) {
        const unit = this.hex4(i);
        i += 4;
        if (unit >= 0xdc00 && unit <= 0xdfff) this.fail(i - 1, "lone surrogate in hex escape");
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A JS string could hold the lone half, but serde_json rejects it and so must we.
          if (text.charCodeAt(i) !== BACKSLASH || text.charCodeAt(i + 1) !== LOWER_U) {
            const truncated = i >= len || (text.charCodeAt(i) === BACKSLASH && i + 1 >= len);
            this.fail(truncated ? len : i, truncated ? "EOF while parsing a string" : "lone surrogate in hex escape");
          }
          const low = this.hex4(i + 2);
          i += 6;
          if (low < 0xdc00 || low > 0xdfff) this.fail(i - 1, "lone surrogate in hex escape");
          out += String.fromCharCode(unit, low);
        } else {
          out += String.fromCharCode(unit);
        }
      } else {
        this.fail(i - 1, "invalid escape");
      }
      runStart = i;
    }
  }

  private hex4(at: number): number {
    const text = this.text;
    let unit = 0;
    for (let i = at; i < at + 4; i++) {
      if (i >= text.length) this.fail(text.length, "EOF while parsing a string");
      const c = text.charCodeAt(i);
      const lower = c | 0x20;
      const d = c >= ZERO && c <= NINE ? c - ZERO : lower >= 97 && lower <= 102 ? lower - 87 : -1;
      if (d < 0) this.fail(i, "invalid escape");
      unit = unit * 16 + d;
    }
    return unit;
  }

  private skipWhitespace(): void {
    const text = this.text;
    let i = this.pos;
    let c = text.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
    this.pos = i;
  }

  private fail(index: number, reason: string): never {
    throw new Failure(index, reason);
  }

  /** serde_json reports a distinct reason when the input simply ran out. */
  private failHere(eofReason: string, reason: string): never {
    this.fail(this.pos, this.pos >= this.text.length ? eofReason : reason);
  }
}

/** Stores a data property even for `__proto__`, where plain assignment would set the prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** Deep copy replacing every JsonFloat by its plain number (for free-form values handed to drivers). */
export function unwrapJsonFloats(value: unknown): unknown {
  if (value instanceof JsonFloat) return value.value;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(unwrapJsonFloats);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, unwrapJsonFloats((value as Record<string, unknown>)[key]));
  return copy;
}
