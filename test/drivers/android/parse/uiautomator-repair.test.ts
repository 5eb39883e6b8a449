/**
 * One odd node never rejects a tree (issue 24; research note §4 #5): inverted bounds, NULs and
 * half surrogate pairs occur in real dumps and are repaired in place, counted in `repaired`;
 * "malformed" is kept for XML that does not parse.
 */
import { describe, expect, test } from "bun:test";
import { parseUiautomatorDump, UiDumpError } from "../../../../drivers/android/parse/uiautomator.ts";
import { uiSnapshotProblem } from "../../../../src/core/sessions/ui-snapshot.ts";
import { demoScenario, FakePhone } from "../../../support/adb-device/index.ts";
import { withOddNodes } from "../../../support/adb-device/uiautomator-xml.ts";

const DECL = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";
const doc = (body: string) => `${DECL}<hierarchy rotation="0">${body}</hierarchy>`;
const leaf = (attrs: string) => `<node index="0" class="android.widget.TextView" clickable="true" ${attrs} />`;
const only = (attrs: string) => {
  const tree = parseUiautomatorDump(doc(leaf(attrs)));
  return { node: tree.nodes[0], repaired: tree.repaired };
};

describe("parseUiautomatorDump repairs", () => {
  test("keeps a node with inverted bounds as zero-size, not hittable, and counts it", () => {
    // Syed-NK/NoorLifeApp#85 and kkevsekk1/AutoX#736 (Rect(906, 0 - 1074, -823)).
    expect(
      [only('bounds="[66,1777][1014,1664]"'), only('bounds="[906,0][1074,-823]"'), only('bounds="[10,10][5,20]"')].map(
        (r) => [r.node?.bounds, r.node?.hittable, r.repaired],
      ),
    ).toEqual([
      [{ x: 66, y: 1777, width: 948, height: 0 }, false, 1],
      [{ x: 906, y: 0, width: 168, height: 0 }, false, 1],
      [{ x: 10, y: 10, width: 0, height: 10 }, false, 1],
    ]);
  });

  test("replaces &#0;, a raw NUL and half surrogate pairs by U+FFFD and counts the node once", () => {
    const cases = [
      ['text="a&#0;b"', "a\uFFFDb"],
      ['text="a\u0000b"', "a\uFFFDb"],
      ['text="x&#55357;y"', "x\uFFFDy"],
      ['text="x&#xDE00;y"', "x\uFFFDy"],
      [`text="x${"\uD83D"}y"`, "x\uFFFDy"],
      [`text="${"\uDE00"}z"`, "\uFFFDz"],
      ['text="&#0;" content-desc="&#55357;"', "\uFFFD"],
    ] as const;
    expect(cases.map(([attrs]) => [only(attrs).node?.text, only(attrs).repaired])).toEqual(
      cases.map(([, text]) => [text, 1]),
    );
    // A whole emoji, escaped unit by unit or raw, is no repair.
    expect([only('text="&#55357;&#56832;"'), only('text="\u{1F600}"')].map((r) => [r.node?.text, r.repaired])).toEqual([
      ["\u{1F600}", undefined],
      ["\u{1F600}", undefined],
    ]);
  });

  test("counts each repaired node once and leaves the others untouched", () => {
    const xml = doc(
      `<node index="0" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">` +
        `<node index="0" class="android.widget.TextView" clickable="true" bounds="[0,10][10,5]" text="&#0;" />` +
        `<node index="1" class="android.widget.TextView" clickable="true" bounds="[0,0][10,10]" text="fine" />` +
        "</node>",
    );
    const tree = parseUiautomatorDump(xml);
    expect([
      tree.nodes.length,
      tree.repaired,
      tree.nodes[1]?.text,
      tree.nodes[2]?.text,
      tree.nodes[2]?.hittable,
    ]).toEqual([3, 1, "\uFFFD", "fine", true]);
  });

  test("gives a tree that passes the snapshot rules when the simulated phone's dump has odd nodes", () => {
    const phone = new FakePhone({ scenario: demoScenario });
    const tree = parseUiautomatorDump(withOddNodes(phone.dumpXml(), phone.tree()));
    const snapshot = {
      formatVersion: 1,
      observationId: crypto.randomUUID(),
      context: { contextKind: "native", contextId: tree.packageName, documentEpoch: tree.fingerprint },
      rootStableNodeIds: tree.nodes.filter((x) => x.parentStableNodeId === null).map((x) => x.stableNodeId),
      nodes: tree.nodes,
    };
    expect([tree.nodes.length, tree.repaired, uiSnapshotProblem(snapshot)]).toEqual([9, 3, null]);
  });

  test("still throws malformed for XML that does not parse, or a reference of unknown shape", () => {
    const kinds = [
      doc('<node index="0" text="a &nbsp; b" />'),
      doc('<node index="0" text="a & b" />'),
      doc('<node index="0">'),
      doc('<node index="0" bounds="[0,0,10,10]" />'),
    ].map((xml) => {
      try {
        parseUiautomatorDump(xml);
        return "parsed";
      } catch (e) {
        return e instanceof UiDumpError ? e.kind : String(e);
      }
    });
    expect(kinds).toEqual(["malformed", "malformed", "malformed", "malformed"]);
  });
});
