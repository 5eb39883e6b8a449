/**
 * Reads the code (src/, drivers/) for what the error table cannot say: which `details` each error
 * is raised with, whether it reaches clients as a response or only as an ErrorInfo inside an
 * event or terminal, and the `platformCode`s drivers use. Used by gen-protocol-docs.ts, so the
 * generated error reference follows the code that raises the errors, not a hand-kept list.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ERRORS, type ErrorName } from "../src/protocol/errors.ts";
import { DriverError, type DriverErrorCode } from "../src/driver/driver-error.ts";

export interface ErrorSites {
  /** The `details` shapes each error is raised with (`{a, b: "literal"}`, `null`, `(computed)`). */
  details: Map<ErrorName, Set<string>>;
  /** Errors raised as RPC (or HTTP) error objects. */
  response: Set<ErrorName>;
  /** Errors built only as an ErrorInfo (events, stream terminals). */
  info: Set<ErrorName>;
  /** drivers/<name> → platformCode → retryable ("yes", "no", "varies"). */
  platformCodes: Map<string, Map<string, Set<string>>>;
}

const SCANNED = ["src", "drivers"];
// The MCP server's tool errors are MCP results, not the protocol's error objects.
const SKIPPED = ["src/protocol/errors.ts", "src/protocol/generated/", "src/surfaces/mcp/"];

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const top of SCANNED) walk(join(root, top));
  return out
    .map((p) => relative(root, p).split("\\").join("/"))
    .filter((p) => !SKIPPED.some((s) => p.startsWith(s)))
    .sort();
}

const unwrap = (e: ts.Expression): ts.Expression => {
  let x = e;
  while (
    ts.isParenthesizedExpression(x) ||
    ts.isAsExpression(x) ||
    ts.isSatisfiesExpression(x) ||
    ts.isNonNullExpression(x)
  )
    x = x.expression;
  return x;
};

/** String literals an expression may evaluate to: a literal, or both arms of a conditional. */
function literals(e: ts.Expression): string[] | null {
  const x = unwrap(e);
  if (ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x)) return [x.text];
  if (ts.isConditionalExpression(x)) {
    const a = literals(x.whenTrue);
    const b = literals(x.whenFalse);
    return a && b ? [...a, ...b] : null;
  }
  return null;
}

function literalText(e: ts.Expression): string | null {
  const x = unwrap(e);
  if (ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x)) return JSON.stringify(x.text);
  if (ts.isNumericLiteral(x)) return x.text;
  if (ts.isPrefixUnaryExpression(x) && x.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(x.operand))
    return `-${x.operand.text}`;
  if (x.kind === ts.SyntaxKind.TrueKeyword) return "true";
  if (x.kind === ts.SyntaxKind.FalseKeyword) return "false";
  if (x.kind === ts.SyntaxKind.NullKeyword) return "null";
  return null;
}

const propName = (n: ts.PropertyName): string =>
  ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n) ? n.text : "[…]";

/** `{a, b: "x", c: {d}}`: keys in source order, literal values, nested object literals. */
function shape(e: ts.Expression): string {
  const x = unwrap(e);
  const lit = literalText(x);
  if (lit !== null) return lit;
  if (!ts.isObjectLiteralExpression(x)) return "(computed)";
  const parts = x.properties.map((p) => {
    if (ts.isShorthandPropertyAssignment(p)) return p.name.text;
    if (ts.isSpreadAssignment(p)) return "…";
    if (ts.isPropertyAssignment(p)) {
      const name = propName(p.name);
      const value = unwrap(p.initializer);
      const l = literalText(value);
      if (l !== null) return `${name}: ${l}`;
      if (ts.isObjectLiteralExpression(value)) return `${name}: ${shape(value)}`;
      return name;
    }
    return "…";
  });
  return `{${parts.join(", ")}}`;
}

const objectProp = (o: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined => {
  for (const p of o.properties) {
    if (ts.isPropertyAssignment(p) && propName(p.name) === name) return p.initializer;
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) return p.name;
  }
  return undefined;
};

const calleeName = (e: ts.LeftHandSideExpression): string | null => {
  const x = unwrap(e);
  if (ts.isIdentifier(x)) return x.text;
  if (ts.isPropertyAccessExpression(x)) return x.name.text;
  return null;
};

/** The details a DriverError of this code carries (the constructor decides them from its options). */
function driverDetails(code: DriverErrorCode): string {
  const details = new DriverError(code, { deviceId: "d", action: "a", platformCode: "p" }).error.data.details;
  if (details === null || typeof details !== "object") return "null";
  return `{${Object.keys(details as object).join(", ")}}`;
}

const driverKey = (code: string): ErrorName =>
  code === "internal_error" ? "driver_internal_error" : (code as ErrorName);

export function scanErrorSites(root: string): ErrorSites {
  const keys = new Set(Object.keys(ERRORS));
  const driverCodes = new Set(
    Object.entries(ERRORS)
      .filter(([, e]) => e.numeric === -32000)
      .map(([, e]) => e.code),
  );
  const sites: ErrorSites = { details: new Map(), response: new Set(), info: new Set(), platformCodes: new Map() };
  const add = (name: ErrorName, detail: string, how: "response" | "info") => {
    let set = sites.details.get(name);
    if (!set) sites.details.set(name, (set = new Set()));
    set.add(detail);
    sites[how].add(name);
  };
  const platform = (file: string, code: string, retryable: string) => {
    const driver = file.startsWith("drivers/") ? (file.split("/")[1] as string) : file;
    let codes = sites.platformCodes.get(driver);
    if (!codes) sites.platformCodes.set(driver, (codes = new Map()));
    let r = codes.get(code);
    if (!r) codes.set(code, (r = new Set()));
    r.add(retryable);
  };
  const retryableText = (e: ts.Expression | undefined) => {
    const l = e ? literalText(e) : null;
    return l === "true" ? "yes" : l === "false" ? "no" : "varies";
  };

  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node: ts.Node) => {
      if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments && node.arguments.length > 0) {
        const callee = calleeName(node.expression);
        const args = [...node.arguments];
        if (callee === "platformError" && file.startsWith("drivers/")) {
          for (const code of literals(args[0] as ts.Expression) ?? []) platform(file, code, retryableText(args[1]));
        } else if (callee === "DriverError") {
          for (const code of literals(args[0] as ts.Expression) ?? [])
            if (driverCodes.has(code)) add(driverKey(code), driverDetails(code as DriverErrorCode), "response");
        } else {
          const at = args.findIndex((a) => (literals(a) ?? []).some((s) => keys.has(s)));
          if (at >= 0 && callee !== "e") {
            const names = (literals(args[at] as ts.Expression) ?? []).filter((s) => keys.has(s)) as ErrorName[];
            const opts = args
              .slice(at + 1)
              .map(unwrap)
              .find(ts.isObjectLiteralExpression);
            if (callee === "RpcError" || callee === "errorObject" || callee === "errorInfo") {
              const details = opts ? objectProp(opts, "details") : undefined;
              for (const n of names)
                add(n, details ? shape(details) : "null", callee === "errorInfo" ? "info" : "response");
            } else if (opts) {
              // A local helper that passes the name on with ErrorOptions (`{details, message …}`) or
              // with the details themselves (`reject("…", {…})`).
              const isOptions = ["details", "arg", "message", "retryable"].some(
                (k) => objectProp(opts, k) !== undefined,
              );
              const details = isOptions ? objectProp(opts, "details") : opts;
              for (const n of names) add(n, details ? shape(details) : "null", "response");
            }
          }
        }
      }
      if (ts.isObjectLiteralExpression(node) && file.startsWith("drivers/")) {
        const code = objectProp(node, "platformCode");
        const l = code ? literals(code) : null;
        if (l) for (const c of l) platform(file, c, retryableText(objectProp(node, "retryable")));
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return sites;
}
