import { describe, expect, test } from "bun:test";
import {
  MAX_REGEX_CODE_POINTS,
  type SelectorSite,
  checkSelectorContext,
  compileSelector,
  resolveOne,
  visibleRect,
} from "../../../../src/core/devices/semantic/selector.ts";
import { DriverError } from "../../../../src/driver/driver-error.ts";
import type { ElementSelector, TextMatch, UiContextRef, UiNode } from "../../../../src/protocol/types/ui.ts";

const CONTEXT: UiContextRef = { contextKind: "native", contextId: "com.example", documentEpoch: "e1" };
const VIEWPORT = { width: 400, height: 800, scaleFactor: 1 };

const node = (id: string, over: Partial<UiNode> = {}): UiNode => ({
  stableNodeId: id,
  parentStableNodeId: id === "root" ? null : "root",
  role: "View",
  name: null,
  value: null,
  identifier: null,
  text: null,
  bounds: { x: 0, y: 0, width: 10, height: 10 },
  enabled: true,
  hittable: true,
  ...over,
});

const NONE: ElementSelector = {
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
};
const sel = (over: Partial<ElementSelector>): ElementSelector => ({ ...NONE, ...over });
const text = (value: string, mode: TextMatch["mode"] = "exact", caseSensitive = true): TextMatch => ({
  value,
  mode,
  caseSensitive,
});

/** The ids of the nodes a selector matches, in tree order. */
const matching = (nodes: UiNode[], s: ElementSelector) =>
  nodes.filter(compileSelector(s, FIND)).map((n) => n.stableNodeId);

function thrown(run: () => unknown): { driverCode: string; data: unknown } {
  try {
    run();
  } catch (err) {
    if (err instanceof DriverError) return { driverCode: err.driverCode, data: err.error.data };
    throw err;
  }
  throw new Error("expected a DriverError");
}

/** Where findElement's selector sits; tapElement's is under its target. */
const FIND: SelectorSite = { action: "findElement", pointer: "/selector", redact: false };
const TAP: SelectorSite = { action: "tapElement", pointer: "/target/selector", redact: false };

const invalidArguments = (site: SelectorSite, pointer: string, expected: string, received: string) => {
  const issue = { pointer: `${site.pointer}${pointer}`, expected, received };
  return {
    driverCode: "invalid_arguments",
    data: {
      code: "invalid_arguments",
      message: `invalid arguments for action ${site.action}`,
      retryable: false,
      details: { action: site.action, ...issue, issues: [issue] },
    },
  };
};
const NO_MATCHER = "at least one of role, name, value, identifier, text, css";
const plain = (code: string, message: string, retryable = false) => ({
  driverCode: code,
  data: { code, message, retryable, details: null },
});
const CONTEXT_NOT_FOUND = plain("ui_context_not_found", "UI context was not found");

describe("compileSelector", () => {
  const nodes = [
    node("root", { role: "Window" }),
    node("a", { role: "android.widget.Button", name: "OK", identifier: "com.example:id/ok", text: "Sign In" }),
    node("b", { role: "button", name: "Cancel", value: "", identifier: "cancel", text: "Cancel sign in" }),
    node("c", { role: "TextField", name: "User", value: "alice", identifier: "com.example:id/user", text: "alice" }),
    node("d", { role: "android.widget.ButtonBar", name: "ok", text: null }),
  ];

  test("role matches the whole role case-insensitively when no class segment is involved", () => {
    expect(matching(nodes, sel({ role: "window" }))).toEqual(["root"]);
    expect(matching(nodes, sel({ role: "TEXTFIELD" }))).toEqual(["c"]);
  });

  test("role matches the last class segment when the node role is a class name", () => {
    expect(matching(nodes, sel({ role: "Button" }))).toEqual(["a", "b"]);
    expect(matching(nodes, sel({ role: "android.widget.Button" }))).toEqual(["a"]);
    expect(matching(nodes, sel({ role: "widget.Button" }))).toEqual([]);
    expect(matching(nodes, sel({ role: "buttonbar" }))).toEqual(["d"]);
  });

  test("name matches exactly and case-sensitively when it is the only matcher", () => {
    expect(matching(nodes, sel({ name: "OK" }))).toEqual(["a"]);
    expect(matching(nodes, sel({ name: "ok" }))).toEqual(["d"]);
    expect(matching(nodes, sel({ name: "O" }))).toEqual([]);
  });

  test("value matches exactly, including the empty string, when it is the only matcher", () => {
    expect(matching(nodes, sel({ value: "alice" }))).toEqual(["c"]);
    expect(matching(nodes, sel({ value: "" }))).toEqual(["b"]);
    expect(matching(nodes, sel({ value: "Alice" }))).toEqual([]);
  });

  test("identifier matches exactly or the part after :id/ when it is the only matcher", () => {
    expect(matching(nodes, sel({ identifier: "cancel" }))).toEqual(["b"]);
    expect(matching(nodes, sel({ identifier: "ok" }))).toEqual(["a"]);
    expect(matching(nodes, sel({ identifier: "com.example:id/user" }))).toEqual(["c"]);
    expect(matching(nodes, sel({ identifier: "id/ok" }))).toEqual([]);
    expect(matching(nodes, sel({ identifier: "example:id/ok" }))).toEqual([]);
  });

  test("text matches in exact, contains and regex mode case-sensitively by default", () => {
    expect(matching(nodes, sel({ text: text("Sign In") }))).toEqual(["a"]);
    expect(matching(nodes, sel({ text: text("sign in") }))).toEqual([]);
    expect(matching(nodes, sel({ text: text("sign in", "contains") }))).toEqual(["b"]);
    expect(matching(nodes, sel({ text: text("^Cancel", "regex") }))).toEqual(["b"]);
    expect(matching(nodes, sel({ text: text("^cancel", "regex") }))).toEqual([]);
  });

  test("text ignores case in every mode when caseSensitive is false", () => {
    expect(matching(nodes, sel({ text: text("sign in", "exact", false) }))).toEqual(["a"]);
    expect(matching(nodes, sel({ text: text("SIGN IN", "contains", false) }))).toEqual(["a", "b"]);
    expect(matching(nodes, sel({ text: text("^(cancel|sign) .*IN$", "regex", false) }))).toEqual(["a", "b"]);
  });

  test("text never matches a node without text when the matcher is text", () => {
    expect(matching(nodes, sel({ text: text(".*", "regex") }))).toEqual(["a", "b", "c"]);
  });

  test("every given matcher must hold when several are combined", () => {
    expect(matching(nodes, sel({ role: "button", name: "Cancel" }))).toEqual(["b"]);
    expect(matching(nodes, sel({ role: "button", text: text("sign in", "contains", false) }))).toEqual(["a", "b"]);
    expect(matching(nodes, sel({ role: "button", identifier: "ok", text: text("Sign In") }))).toEqual(["a"]);
    expect(matching(nodes, sel({ role: "button", value: "alice" }))).toEqual([]);
  });

  test("a selector without any matcher is invalid_arguments when only a context is given", () => {
    expect(thrown(() => compileSelector(NONE, FIND))).toEqual(invalidArguments(FIND, "", NO_MATCHER, "no matcher"));
    expect(thrown(() => compileSelector(sel({ context: { contextKind: "native", contextId: null } }), TAP))).toEqual(
      invalidArguments(TAP, "", NO_MATCHER, "only a context"),
    );
  });

  test("css is invalid_arguments when combined with another matcher", () => {
    expect(
      thrown(() =>
        compileSelector(sel({ css: "#ok", role: "button", context: { contextKind: "web", contextId: null } }), FIND),
      ),
    ).toEqual(invalidArguments(FIND, "/css", "css as the only matcher", "css with role"));
  });

  test("css is invalid_arguments when the selector has no web context", () => {
    expect(thrown(() => compileSelector(sel({ css: "#ok" }), FIND))).toEqual(
      invalidArguments(FIND, "/context", 'a web context ({"contextKind": "web", …}) for css', "null"),
    );
    expect(
      thrown(() => compileSelector(sel({ css: "#ok", context: { contextKind: "native", contextId: null } }), FIND)),
    ).toEqual(invalidArguments(FIND, "/context/contextKind", '"web" (css needs a web context)', '"native"'));
  });

  test("css alone with a web context is ui_context_not_found when only native trees exist", () => {
    expect(
      thrown(() => compileSelector(sel({ css: "#ok", context: { contextKind: "web", contextId: "page-1" } }), FIND)),
    ).toEqual(CONTEXT_NOT_FOUND);
  });

  test("a regex that does not compile is invalid_arguments when it is unbalanced or uses backreferences or lookahead", () => {
    const wait: SelectorSite = { action: "waitForElement", pointer: "/selector", redact: false };
    for (const bad of ["(", "a[", "(a)\\1", "(?=a)b", "*"])
      expect(thrown(() => compileSelector(sel({ text: text(bad, "regex") }), wait))).toEqual(
        invalidArguments(
          wait,
          "/text/value",
          "an RE2 regular expression (no backreferences or lookaround)",
          JSON.stringify(bad),
        ),
      );
  });

  test("a refused regex is shown by length only when the action is protected", () => {
    const set: SelectorSite = { action: "setElementValue", pointer: "/target/selector", redact: true };
    expect(thrown(() => compileSelector(sel({ text: text("s3cr3t(", "regex") }), set))).toEqual(
      invalidArguments(
        set,
        "/text/value",
        "an RE2 regular expression (no backreferences or lookaround)",
        "a string of 7 code points",
      ),
    );
  });

  test("a regex is invalid_arguments when it is longer than MAX_REGEX_CODE_POINTS code points", () => {
    expect(MAX_REGEX_CODE_POINTS).toBe(4096);
    expect(thrown(() => compileSelector(sel({ text: text("a".repeat(4097), "regex") }), FIND))).toEqual(
      invalidArguments(
        FIND,
        "/text/value",
        "a regular expression of at most 4096 code points",
        `"${"a".repeat(40)}…" (4097 code points)`,
      ),
    );
    const longest = compileSelector(sel({ text: text("a".repeat(4096), "regex") }), FIND);
    expect(longest(node("x", { text: "a".repeat(4096) }))).toBe(true);
    // The limit counts code points, not UTF-16 units: 4096 emoji are 8192 units.
    const emoji = compileSelector(sel({ text: text("😀".repeat(4096), "regex") }), FIND);
    expect(emoji(node("x", { text: "😀".repeat(4096) }))).toBe(true);
  });

  test("a catastrophic-backtracking pattern finishes with the right answer when the text is 20,000 characters", () => {
    const nested = compileSelector(sel({ text: text("(a+)+$", "regex") }), FIND);
    expect(nested(node("x", { text: `${"a".repeat(20_000)}!` }))).toBe(false);
    expect(nested(node("x", { text: "a".repeat(20_000) }))).toBe(true);
    const alternation = compileSelector(sel({ text: text("^(a|aa)+$", "regex") }), FIND);
    expect(alternation(node("x", { text: `${"a".repeat(20_000)}b` }))).toBe(false);
  });
});

describe("resolveOne", () => {
  const nodes = [
    node("root", { role: "Window" }),
    node("a", { role: "Button", name: "OK" }),
    node("b", { role: "Button", name: "Cancel" }),
  ];

  test("returns the one matching node when exactly one matches", () => {
    expect(resolveOne(nodes, compileSelector(sel({ name: "OK" }), FIND))).toEqual(nodes[1] as UiNode);
  });

  test("is element_ambiguous when several nodes match", () => {
    expect(thrown(() => resolveOne(nodes, compileSelector(sel({ role: "button" }), FIND)))).toEqual(
      plain("element_ambiguous", "element selector matched more than one element"),
    );
  });

  test("is element_not_found when no node matches", () => {
    expect(thrown(() => resolveOne(nodes, compileSelector(sel({ name: "Nope" }), FIND)))).toEqual(
      plain("element_not_found", "element was not found"),
    );
    expect(thrown(() => resolveOne([], () => true))).toEqual(plain("element_not_found", "element was not found"));
  });
});

describe("checkSelectorContext", () => {
  test("accepts the tree when the selector has no context or names the tree's kind and id", () => {
    expect(checkSelectorContext(NONE, CONTEXT)).toBeUndefined();
    expect(checkSelectorContext(sel({ context: { contextKind: "native", contextId: null } }), CONTEXT)).toBeUndefined();
    expect(
      checkSelectorContext(sel({ context: { contextKind: "native", contextId: "com.example" } }), CONTEXT),
    ).toBeUndefined();
  });

  test("is ui_context_not_found when the kind or the id differ", () => {
    expect(
      thrown(() => checkSelectorContext(sel({ context: { contextKind: "web", contextId: null } }), CONTEXT)),
    ).toEqual(CONTEXT_NOT_FOUND);
    expect(
      thrown(() => checkSelectorContext(sel({ context: { contextKind: "native", contextId: "com.other" } }), CONTEXT)),
    ).toEqual(CONTEXT_NOT_FOUND);
    expect(
      thrown(() => checkSelectorContext(sel({ context: { contextKind: "web", contextId: "com.example" } }), CONTEXT)),
    ).toEqual(CONTEXT_NOT_FOUND);
  });
});

describe("visibleRect", () => {
  const at = (bounds: UiNode["bounds"]) => visibleRect(node("x", { bounds }), VIEWPORT);

  test("returns the whole bounds when the node is fully on screen", () => {
    expect(at({ x: 10, y: 20, width: 30, height: 40 })).toEqual({ x: 10, y: 20, width: 30, height: 40 });
    expect(at({ x: 0, y: 0, width: 400, height: 800 })).toEqual({ x: 0, y: 0, width: 400, height: 800 });
  });

  test("clips to the viewport when the node is partly off screen", () => {
    expect(at({ x: -50, y: 10, width: 100, height: 20 })).toEqual({ x: 0, y: 10, width: 50, height: 20 });
    expect(at({ x: 350, y: 780, width: 100, height: 100 })).toEqual({ x: 350, y: 780, width: 50, height: 20 });
    expect(at({ x: -10, y: -10, width: 500, height: 900 })).toEqual({ x: 0, y: 0, width: 400, height: 800 });
  });

  test("is null when the node is fully off screen or only touches the edge", () => {
    expect(at({ x: 400, y: 10, width: 10, height: 10 })).toBeNull();
    expect(at({ x: 10, y: 800, width: 10, height: 10 })).toBeNull();
    expect(at({ x: -20, y: 10, width: 20, height: 10 })).toBeNull();
    expect(at({ x: 10, y: -500, width: 10, height: 100 })).toBeNull();
  });

  test("is null when the node has zero size or no bounds", () => {
    expect(at({ x: 10, y: 10, width: 0, height: 10 })).toBeNull();
    expect(at({ x: 10, y: 10, width: 10, height: 0 })).toBeNull();
    expect(at(null)).toBeNull();
  });
});
