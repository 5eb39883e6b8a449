import { describe, expect, test } from "bun:test";
import { decodeEntities, scanXml, XmlSyntaxError } from "../../../../drivers/android/parse/xml-scanner.ts";

/** Records the handler calls as a flat list, attributes as plain objects. */
function events(xml: string, start = 0): { end: number; calls: unknown[] } {
  const calls: unknown[] = [];
  const end = scanXml(xml, start, {
    open: (name, attributes, offset) => calls.push(["open", name, Object.fromEntries(attributes), offset]),
    close: (name) => calls.push(["close", name]),
  });
  return { end, calls };
}

function syntaxError(f: () => unknown): { message: string; offset: number } {
  try {
    f();
  } catch (e) {
    if (e instanceof XmlSyntaxError) return { message: e.message, offset: e.offset };
    throw e;
  }
  throw new Error("did not throw");
}

describe("scanXml", () => {
  test("reports elements in document order and stops after the root when a trailer follows", () => {
    const xml = `junk<?xml version='1.0' ?>\n<a x="1"  y = "2"><b/><c z=""></c>\n</a>UI hierchary dumped to: /dev/tty\n`;
    expect(events(xml, 4)).toEqual({
      end: xml.indexOf("UI hierchary"),
      calls: [
        ["open", "a", { x: "1", y: "2" }, 27],
        ["open", "b", {}, 45],
        ["close", "b"],
        ["open", "c", { z: "" }, 49],
        ["close", "c"],
        ["close", "a"],
      ],
    });
  });

  test("returns just after a self-closing root when the document is one empty element", () => {
    expect(events('<hierarchy rotation="0" />tail')).toEqual({
      end: 26,
      calls: [
        ["open", "hierarchy", { rotation: "0" }, 0],
        ["close", "hierarchy"],
      ],
    });
  });

  test("throws with the offset when the input ends or nests wrongly", () => {
    expect([
      syntaxError(() => events("<a><b></a>")),
      syntaxError(() => events("<a><b>")),
      syntaxError(() => events('<a x="1')),
      syntaxError(() => events("<a x")),
      syntaxError(() => events("   ")),
      syntaxError(() => events("<?xml version='1.0'")),
      syntaxError(() => events("<![CDATA[x]]>")),
      syntaxError(() => events("<a><?pi?></a>")),
      syntaxError(() => events("<1a/>")),
    ]).toEqual([
      { message: "unexpected </a> at offset 6", offset: 6 },
      { message: "unclosed <b> at offset 6", offset: 6 },
      { message: "unterminated value of x at offset 5", offset: 5 },
      { message: "expected = after x at offset 4", offset: 4 },
      { message: "no root element at offset 3", offset: 3 },
      { message: "unterminated XML declaration at offset 0", offset: 0 },
      { message: "unsupported markup at offset 0", offset: 0 },
      { message: "unsupported markup at offset 3", offset: 3 },
      { message: "expected a name at offset 1", offset: 1 },
    ]);
  });
});

describe("decodeEntities", () => {
  test("resolves every reference kind when they are mixed with text", () => {
    expect(decodeEntities("a&amp;b&lt;&gt;&quot;&apos;&#10;&#x1F600;&#xe9;z")).toBe("a&b<>\"'\n\u{1F600}éz");
  });

  test("joins a surrogate pair when a writer escaped UTF-16 units one by one", () => {
    expect(decodeEntities("&#55357;&#56832;!")).toBe("\u{1F600}!");
  });

  // Was: a reference to no character (NUL, out of range, half a surrogate pair) threw; real dumps
  // carry them (issue 24), so they are replaced and only an unknown shape is a syntax error.
  test("throws when a reference has an unknown shape", () => {
    const inputs = ["&foo;", "&#;", "&#12345678;", "a &amp b;"];
    expect(inputs.map((s) => syntaxError(() => decodeEntities(s, 100)).message)).toEqual([
      "unknown reference &foo; at offset 100",
      "unknown reference &#; at offset 100",
      "unknown reference &#12345678; at offset 100",
      "unknown reference &amp b; at offset 102",
    ]);
  });

  test("replaces a reference to no character by U+FFFD and notes the repair", () => {
    const inputs = ["&#0;", "&#1114112;", "&#x110000;", "&#56832;", "&#55357;&#65;", "&#65;"];
    expect(
      inputs.map((s) => {
        const note = { repaired: false };
        return [decodeEntities(s, 100, note), note.repaired];
      }),
    ).toEqual([
      ["\uFFFD", true],
      ["\uFFFD", true],
      ["\uFFFD", true],
      ["\uFFFD", true],
      ["\uFFFDA", true],
      ["A", false],
    ]);
  });
});
