/** parseUiautomatorDump against public real dumps (fixtures/platform/android/README.md names each source). */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseUiautomatorDump } from "../../../../drivers/android/parse/uiautomator.ts";

const sample = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/uiautomator/${name}.txt`, import.meta.url), "utf8");

describe("a real dump (qbalsdon/talos test data)", () => {
  const tree = parseUiautomatorDump(sample("talos-accessibility-dev-app"));
  const byText = (text: string) => tree.nodes.find((n) => n.text === text);

  test("keeps every node, the app's package and the rotation", () => {
    expect([tree.nodes.length, tree.packageName, tree.rotation]).toEqual([
      34,
      "com.balsdon.accessibilityDeveloperService",
      0,
    ]);
  });

  test("follows the dump's index gap, decodes &#10; and keeps content-desc as the name", () => {
    // The PREV button is `index="1"` of its row: index 0 was an invisible child the dump left out.
    expect([
      byText("PREV")?.stableNodeId,
      byText("Run\nadb shell settings put secure enabled_accessibility_services [service1]:[service2]")?.role,
    ]).toEqual(["0.0.0.0.0.0.1.0.3.1", "android.widget.TextView"]);
    expect(tree.nodes.filter((n) => n.role === "android.widget.ImageButton").map((n) => n.name)).toEqual([
      "Decrease accessibility volume",
      "Increase accessibility volume",
    ]);
  });

  test("keeps the nodes the dump gives empty bounds [0,0][0,0] (scrolled out, or not laid out)", () => {
    expect([
      byText("Heading 3")?.bounds,
      tree.nodes.filter((n) => n.bounds?.width === 0 && n.bounds.height === 0).map((n) => n.identifier),
    ]).toEqual([
      { x: 0, y: 0, width: 0, height: 0 },
      ["com.balsdon.accessibilityDeveloperService:id/heading3", "android:id/navigationBarBackground"],
    ]);
  });
});
