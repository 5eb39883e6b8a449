/**
 * Finds error objects built by hand in src/ and drivers/, outside the one error table: every
 * DeviceRail error on every surface comes from `src/protocol/errors.ts` (errorObject, errorInfo,
 * RpcError, httpError), so its numeric code and `data.code` cannot drift from
 * docs/protocol/errors.md. Flagged:
 *
 * - an object literal whose `code` is a JSON-RPC error number written out (`code: -32000`);
 * - an object literal whose `code` is a string written out beside `message` or `retryable` (a
 *   hand-made ErrorInfo such as `{code: "usage", message}`);
 * - `new ToolError("…")` with a code the table does not have.
 *
 * Other protocols' codes are named by their own libraries (the MCP SDK's `ErrorCode`), not written
 * out. Run by test/protocol/error-literals.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ERRORS } from "../src/protocol/errors.ts";

export interface HandBuiltError {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** Where error objects may be written out: the table itself and what is generated from it. */
const ALLOWED = ["src/protocol/errors.ts", "src/protocol/generated/"];
const SCANNED = ["src", "drivers"];
const DATA_CODES = new Set(Object.values(ERRORS).map((e) => e.code));

const propName = (n: ts.PropertyName): string | null => (ts.isIdentifier(n) || ts.isStringLiteral(n) ? n.text : null);

/** -32768 … -32000, JSON-RPC's reserved and server error numbers. */
function rpcNumber(e: ts.Expression): number | null {
  if (!ts.isPrefixUnaryExpression(e) || e.operator !== ts.SyntaxKind.MinusToken || !ts.isNumericLiteral(e.operand))
    return null;
  const n = -Number(e.operand.text);
  return n <= -32000 && n >= -32768 ? n : null;
}

/** A string written out: a literal, a template, or a conditional with one such arm. */
const isStringLiteral = (e: ts.Expression): boolean =>
  ts.isStringLiteral(e) ||
  ts.isNoSubstitutionTemplateLiteral(e) ||
  ts.isTemplateExpression(e) ||
  (ts.isParenthesizedExpression(e) && isStringLiteral(e.expression)) ||
  (ts.isConditionalExpression(e) && (isStringLiteral(e.whenTrue) || isStringLiteral(e.whenFalse)));

/** The hand-built error objects in one file's text (`file` is its path relative to the repository). */
export function handBuiltErrors(file: string, text: string): HandBuiltError[] {
  if (ALLOWED.some((a) => file.startsWith(a))) return [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: HandBuiltError[] = [];
  const flag = (node: ts.Node, why: string) =>
    found.push({
      file,
      line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
      text: node.getText(sf).replace(/\s+/g, " ").slice(0, 120),
      why,
    });
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      const props = new Map<string, ts.Expression>();
      for (const p of node.properties) {
        const name = ts.isPropertyAssignment(p) ? propName(p.name) : null;
        if (name && ts.isPropertyAssignment(p)) props.set(name, p.initializer);
        else if (ts.isShorthandPropertyAssignment(p)) props.set(p.name.text, p.name);
      }
      const code = props.get("code");
      if (code && rpcNumber(code) !== null) flag(node, `JSON-RPC error number ${rpcNumber(code)} written out`);
      else if (code && isStringLiteral(code) && (props.has("message") || props.has("retryable")))
        flag(node, "error code written out beside its message");
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "ToolError") {
      const first = node.arguments?.[0];
      if (first && ts.isStringLiteral(first) && !DATA_CODES.has(first.text))
        flag(node, `tool error code ${first.text} is not in the error table`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const top of SCANNED) walk(join(root, top));
  return out.map((p) => relative(root, p).split("\\").join("/")).sort();
}

/** Every hand-built error object under src/ and drivers/ of the repository at `root`. */
export function scanHandBuiltErrors(root: string): HandBuiltError[] {
  return sourceFiles(root).flatMap((file) => handBuiltErrors(file, readFileSync(join(root, file), "utf8")));
}
