/**
 * A linear-time scanner for the XML subset uiautomator writes through KXmlSerializer: one optional
 * declaration, elements with double-quoted attributes, whitespace between tags, and the five named
 * entities plus numeric references. Anything else (text, comments, CDATA, DOCTYPE, single quotes)
 * is a syntax error, so a dump from something else fails loudly instead of parsing half-way.
 * Characters real dumps carry although XML forbids them (a NUL, as `&#0;` or raw; half of a
 * surrogate pair; a reference beyond U+10FFFF) become U+FFFD and the element is reported as
 * repaired, so one odd text never costs the whole tree (research note §4 #5).
 */

export class XmlSyntaxError extends Error {
  override name = "XmlSyntaxError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

export interface XmlHandler {
  /** `repaired`: a value of the element had characters replaced by U+FFFD. */
  open(name: string, attributes: ReadonlyMap<string, string>, offset: number, repaired: boolean): void;
  close(name: string): void;
}

const NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const SPACE = /[ \t\r\n]*/y;
const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Longest reference we accept: `&#x10FFFF;` / `&#1114111;`. */
const MAX_REFERENCE = 10;

/**
 * Scans one document starting at `start` and returns the offset just after its root element ends;
 * what follows (uiautomator's "dumped to" trailer) is left to the caller.
 */
export function scanXml(xml: string, start: number, handler: XmlHandler): number {
  let i = start;
  const fail = (message: string, at = i): never => {
    throw new XmlSyntaxError(message, at);
  };
  const skipSpace = () => {
    SPACE.lastIndex = i;
    SPACE.exec(xml);
    i = SPACE.lastIndex;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(xml);
    if (!m) return fail("expected a name");
    i = NAME.lastIndex;
    return m[0];
  };

  if (xml.startsWith("<?xml", i)) {
    const end = xml.indexOf("?>", i);
    if (end < 0) fail("unterminated XML declaration");
    i = end + 2;
  }
  const stack: string[] = [];
  for (;;) {
    const lt = xml.indexOf("<", i);
    if (lt < 0) return fail(stack.length ? `unclosed <${stack.at(-1)}>` : "no root element", xml.length);
    if (/\S/.test(xml.slice(i, lt))) fail("unexpected text", i);
    i = lt + 1;
    if (xml[i] === "/") {
      i++;
      const tag = name();
      skipSpace();
      if (xml[i] !== ">") fail(`expected > after </${tag}`);
      i++;
      if (stack.pop() !== tag) fail(`unexpected </${tag}>`, lt);
      handler.close(tag);
      if (stack.length === 0) return i;
      continue;
    }
    if (xml[i] === "!" || xml[i] === "?") fail("unsupported markup", lt);
    const tag = name();
    const attributes = new Map<string, string>();
    const note = { repaired: false };
    for (;;) {
      const before = i;
      skipSpace();
      const c = xml[i];
      if (c === ">" || (c === "/" && xml[i + 1] === ">")) break;
      if (c === undefined) fail(`unterminated <${tag}`);
      if (i === before) fail("expected whitespace before an attribute");
      const keyAt = i;
      const key = name();
      skipSpace();
      if (xml[i] !== "=") fail(`expected = after ${key}`);
      i++;
      skipSpace();
      if (xml[i] !== '"') fail(`expected " to open the value of ${key}`);
      const close = xml.indexOf('"', i + 1);
      if (close < 0) fail(`unterminated value of ${key}`);
      const raw = xml.slice(i + 1, close);
      if (raw.includes("<")) fail(`< in the value of ${key}`, i + 1 + raw.indexOf("<"));
      if (attributes.has(key)) fail(`duplicate attribute ${key}`, keyAt);
      attributes.set(key, sanitize(raw.includes("&") ? decodeEntities(raw, i + 1, note) : raw, note));
      i = close + 1;
    }
    handler.open(tag, attributes, lt, note.repaired);
    if (xml[i] === "/") {
      i += 2;
      handler.close(tag);
      if (stack.length === 0) return i;
    } else {
      i++;
      stack.push(tag);
    }
  }
}

const REPLACEMENT = "\uFFFD";
const ODD_CHARACTER = /[\0\uD800-\uDFFF]/;
const ODD_CHARACTERS = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A value with raw NULs and lone surrogates replaced by U+FFFD (`note.repaired` set when any was). */
function sanitize(value: string, note: { repaired: boolean }): string {
  if (!ODD_CHARACTER.test(value)) return value;
  const clean = value.replace(ODD_CHARACTERS, REPLACEMENT);
  if (clean !== value) note.repaired = true;
  return clean;
}

/**
 * Resolves references in one attribute value; `base` is its offset, for error messages. A
 * numeric reference to no character (`&#0;`, an unpaired surrogate, beyond U+10FFFF) becomes
 * U+FFFD and sets `note.repaired`; a reference of any other shape is a syntax error.
 */
export function decodeEntities(raw: string, base = 0, note: { repaired: boolean } = { repaired: false }): string {
  let out = "";
  let i = 0;
  for (;;) {
    const amp = raw.indexOf("&", i);
    if (amp < 0) return out + raw.slice(i);
    out += raw.slice(i, amp);
    const semi = raw.indexOf(";", amp);
    if (semi < 0 || semi - amp > MAX_REFERENCE) throw new XmlSyntaxError("bare &", base + amp);
    const ref = raw.slice(amp + 1, semi);
    i = semi + 1;
    const named = NAMED[ref];
    if (named !== undefined) {
      out += named;
      continue;
    }
    const unit = numericReference(ref, base + amp);
    // A writer that escapes UTF-16 units one by one emits a pair of references; rejoin it.
    if (unit >= 0xd800 && unit <= 0xdbff && raw.startsWith("&#", i)) {
      const semi2 = raw.indexOf(";", i);
      const low = semi2 > i && semi2 - i <= MAX_REFERENCE ? numericReference(raw.slice(i + 1, semi2), base + i) : -1;
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += String.fromCharCode(unit, low);
        i = semi2 + 1;
        continue;
      }
    }
    if (unit === 0 || unit > 0x10ffff || (unit >= 0xd800 && unit <= 0xdfff)) {
      note.repaired = true;
      out += REPLACEMENT;
      continue;
    }
    out += String.fromCodePoint(unit);
  }
}

/** The number of a numeric reference (0 and values past U+10FFFF included: the caller replaces them). */
function numericReference(ref: string, at: number): number {
  const m = /^#(?:([0-9]{1,7})|x([0-9A-Fa-f]{1,6}))$/.exec(ref);
  if (!m) throw new XmlSyntaxError(`unknown reference &${ref};`, at);
  return m[1] !== undefined ? Number(m[1]) : Number.parseInt(m[2] as string, 16);
}
