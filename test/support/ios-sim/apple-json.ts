/**
 * JSON as Foundation's `JSONSerialization` writes it with `.prettyPrinted`, the printer behind
 * `simctl list -j` and `axe describe-ui`: two-space indent, `"key" : value`, empty containers as an
 * opening bracket, a blank line and the closing bracket, and `/` escaped as `\/` (no
 * `.withoutEscapingSlashes`). `JSON.stringify(v, null, 2)` differs in all of these.
 */

export interface AppleJsonOptions {
  /** `simctl list -e` / `--no-escape-slashes` turns this off. Default true. */
  escapeSlashes?: boolean;
}

function quote(s: string, escapeSlashes: boolean): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "/" && escapeSlashes) out += "\\/";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

function write(value: unknown, indent: string, escapeSlashes: boolean): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("appleJson: JSONSerialization refuses non-finite numbers");
    return String(value);
  }
  if (typeof value === "string") return quote(value, escapeSlashes);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return `[\n\n${indent}]`;
    return `[\n${value.map((v) => inner + write(v, inner, escapeSlashes)).join(",\n")}\n${indent}]`;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return `{\n\n${indent}}`;
    return `{\n${entries.map(([k, v]) => `${inner}${quote(k, escapeSlashes)} : ${write(v, inner, escapeSlashes)}`).join(",\n")}\n${indent}}`;
  }
  throw new TypeError(`appleJson: cannot serialize ${typeof value}`);
}

/** The document without a trailing newline (callers add the `\n` that `print` adds). Keys keep insertion order; undefined values are left out. */
export function appleJson(value: unknown, options: AppleJsonOptions = {}): string {
  return write(value, "", options.escapeSlashes ?? true);
}
