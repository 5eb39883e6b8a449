import { describe, expect, test } from "bun:test";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  type AndroidUiTree,
  dumpFailure,
  parseUiautomatorDump,
  UiDumpError,
} from "../../../../drivers/android/parse/uiautomator.ts";
import { uiSnapshotProblem } from "../../../../src/core/sessions/ui-snapshot.ts";
import type { UiNode } from "../../../../src/protocol/types/ui.ts";
import {
  DEFAULT_DUMP_FILE,
  demoScenario,
  FakePhone,
  IDLE_STATE_ERROR,
  NULL_ROOT_ERROR,
} from "../../../support/adb-device/index.ts";

const sample = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/platform/android/uiautomator/${name}`, import.meta.url), "utf8");

const DECL = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";
const doc = (body: string, rotation = "0") => `${DECL}<hierarchy rotation="${rotation}">${body}</hierarchy>`;

/** A node with every nullable member at its "nothing known" value, overridden by `over`. */
function n(id: string, parent: string | null, role: string, over: Partial<UiNode> = {}): UiNode {
  return {
    stableNodeId: id,
    parentStableNodeId: parent,
    role,
    name: null,
    value: null,
    identifier: null,
    text: null,
    bounds: null,
    enabled: true,
    hittable: false,
    ...over,
  };
}
const rect = (x1: number, y1: number, x2: number, y2: number) => ({ x: x1, y: y1, width: x2 - x1, height: y2 - y1 });

/** stdout and stderr of a script on the simulated phone, as the driver reads them (2>&1). */
const shell = async (phone: FakePhone, src: string) => (await phone.runForText(src)).both;
const DUMP = `uiautomator dump ${DEFAULT_DUMP_FILE} 2>&1; cat ${DEFAULT_DUMP_FILE}`;

function thrown(f: () => unknown): { kind: string; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof UiDumpError) return { kind: e.kind, message: e.message };
    throw e;
  }
  throw new Error("did not throw");
}

const center = (node: UiNode | undefined) => {
  const b = node?.bounds as NonNullable<UiNode["bounds"]>;
  return [b.x + b.width / 2, b.y + b.height / 2] as const;
};
const byIdentifier = (tree: AndroidUiTree, id: string) => tree.nodes.find((x) => x.identifier === id);

describe("parseUiautomatorDump", () => {
  test("maps every node with masked password, check states and entities when a /dev/tty dump has the trailer glued on", () => {
    const id = (s: string) => `com.example.shop:id/${s}`;
    const R = "0.0.0.0";
    expect(parseUiautomatorDump(sample("login-password-tty.txt"))).toEqual({
      nodes: [
        n("0", null, "android.widget.FrameLayout", { bounds: rect(0, 0, 1080, 2340) }),
        n("0.0", "0", "android.widget.LinearLayout", { bounds: rect(0, 0, 1080, 2340) }),
        n("0.0.0", "0.0", "android.widget.FrameLayout", {
          identifier: "android:id/content",
          bounds: rect(0, 80, 1080, 2340),
        }),
        n(R, "0.0.0", "androidx.constraintlayout.widget.ConstraintLayout", {
          identifier: id("root"),
          bounds: rect(0, 80, 1080, 2340),
        }),
        n(`${R}.0`, R, "android.widget.ImageView", {
          identifier: id("logo"),
          name: 'Shop "Deluxe" logo',
          bounds: rect(390, 200, 690, 500),
        }),
        n(`${R}.1`, R, "android.widget.TextView", {
          identifier: id("greeting"),
          text: "Welcome back \u{1F44B}\nSign in to continue",
          bounds: rect(60, 560, 1020, 700),
        }),
        n(`${R}.2`, R, "android.widget.EditText", {
          identifier: id("email"),
          text: "anna.müller@example.com",
          value: "anna.müller@example.com",
          bounds: rect(60, 760, 1020, 901),
          hittable: true,
        }),
        n(`${R}.3`, R, "android.widget.EditText", {
          identifier: id("password"),
          text: "••••••••",
          value: "••••••••",
          bounds: rect(60, 941, 1020, 1082),
          hittable: true,
        }),
        n(`${R}.4`, R, "android.widget.CheckBox", {
          identifier: id("remember"),
          text: "Keep me signed in",
          value: "checked",
          bounds: rect(60, 1122, 600, 1248),
          hittable: true,
        }),
        n(`${R}.5`, R, "android.widget.Switch", {
          identifier: id("dark_mode"),
          text: "Dark mode",
          value: "unchecked",
          bounds: rect(600, 1122, 1020, 1248),
          hittable: true,
        }),
        n(`${R}.6`, R, "android.widget.Button", {
          identifier: id("sign_in"),
          text: "SIGN IN",
          bounds: rect(60, 1308, 1020, 1452),
          hittable: true,
        }),
        n(`${R}.7`, R, "android.widget.Button", {
          identifier: id("sign_in_sso"),
          text: "Company login",
          bounds: rect(60, 1492, 1020, 1636),
          enabled: false,
        }),
        n(`${R}.8`, R, "android.widget.TextView", {
          identifier: id("terms"),
          text: "By signing in you accept the Terms & Conditions <v2> and the shop's privacy policy.",
          bounds: rect(60, 1696, 1020, 1840),
        }),
        n(`${R}.9`, R, "android.widget.ImageButton", {
          identifier: id("help"),
          bounds: rect(936, 96, 1064, 224),
          hittable: true,
        }),
      ],
      states: { [`${R}.3`]: ["focused", "password"], [`${R}.4`]: ["checked"] },
      packageName: "com.example.shop",
      rotation: 0,
      fingerprint: "1bce6a8d00530ec3",
    });
  });

  test("lists checked, focused, password and selected per node, in preorder and only where true, when the dump has those states", () => {
    const tree = parseUiautomatorDump(sample("player-states.txt"));
    const R = "0.0.0.0";
    const list = `${R}.4`;
    const nav = `${R}.5`;
    expect({
      states: tree.states,
      order: Object.keys(tree.states),
      disabled: tree.nodes.filter((x) => x.enabled === false).map((x) => x.identifier),
    }).toEqual({
      states: {
        [`${R}.0`]: ["focused"],
        [`${R}.1.1`]: ["checked"],
        [`${R}.2`]: ["checked"],
        [`${list}.0`]: ["selected"],
        [`${list}.0.0`]: ["selected"],
        [`${list}.0.1`]: ["selected"],
        [`${nav}.0`]: ["selected"],
      },
      order: [`${R}.0`, `${R}.1.1`, `${R}.2`, `${list}.0`, `${list}.0.0`, `${list}.0.1`, `${nav}.0`],
      disabled: ["com.example.player:id/download"],
    });
  });

  test("keeps a node's states but no others when an attribute is odd or missing", () => {
    const xml = doc(
      `<node index="0" class="a.B" focused="yes" selected="true" password="true"><node index="0" class="a.C" /></node>`,
    );
    expect(parseUiautomatorDump(xml).states).toEqual({ "0": ["password", "selected"] });
  });

  test("keeps index gaps, NAF nodes and clipped bounds when a Settings dump follows the 'dumped to' line", () => {
    const tree = parseUiautomatorDump(sample("settings-homepage-de.txt"));
    const C = "0.0.0.0.0.0";
    const list = `${C}.3`;
    expect({
      count: tree.nodes.length,
      packageName: tree.packageName,
      homepage: tree.nodes.filter((x) => x.parentStableNodeId === C).map((x) => x.stableNodeId),
      rows: tree.nodes.filter((x) => x.parentStableNodeId === list).map((x) => x.stableNodeId),
      avatar: byIdentifier(tree, "com.android.settings:id/account_avatar"),
      titles: tree.nodes.filter((x) => x.identifier === "android:id/title").map((x) => x.text),
      storage: tree.nodes.find((x) => x.text?.startsWith("34"))?.text,
      lastRow: tree.nodes.filter((x) => x.stableNodeId.startsWith(`${list}.7`)),
    }).toEqual({
      count: 56,
      packageName: "com.android.settings",
      homepage: [`${C}.0`, `${C}.1`, `${C}.3`],
      rows: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `${list}.${i}`),
      avatar: n(`${C}.1.1`, `${C}.1`, "android.widget.ImageView", {
        identifier: "com.android.settings:id/account_avatar",
        bounds: rect(912, 390, 1017, 495),
        hittable: true,
      }),
      titles: [
        "Netzwerk & Internet",
        "Verbundene Geräte",
        "Apps",
        "Benachrichtigungen",
        "Akku",
        "Speicher",
        "Töne & Vibration",
        "Display",
      ],
      storage: "34 % belegt – 84,16 GB frei",
      lastRow: [
        n(`${list}.7`, list, "android.widget.LinearLayout", { bounds: rect(0, 2162, 1080, 2337), hittable: true }),
        n(`${list}.7.1`, `${list}.7`, "android.widget.RelativeLayout", { bounds: rect(189, 2214, 1038, 2337) }),
        n(`${list}.7.1.0`, `${list}.7.1`, "android.widget.TextView", {
          identifier: "android:id/title",
          text: "Display",
          bounds: rect(189, 2214, 420, 2337),
        }),
      ],
    });
  });

  test("gives a valid UiSnapshot when the simulated phone's own dump is wrapped as one", () => {
    const tree = parseUiautomatorDump(new FakePhone({ scenario: demoScenario }).dumpXml());
    const snapshot = {
      formatVersion: 1,
      observationId: randomUUID(),
      context: { contextKind: "native", contextId: tree.packageName, documentEpoch: tree.fingerprint },
      rootStableNodeIds: tree.nodes.filter((x) => x.parentStableNodeId === null).map((x) => x.stableNodeId),
      nodes: tree.nodes,
    };
    const id = (s: string) => `com.example.app:id/${s}`;
    expect({ problem: uiSnapshotProblem(snapshot), tree }).toEqual({
      problem: null,
      tree: {
        nodes: [
          n("0", null, "android.widget.FrameLayout", { bounds: rect(0, 0, 1080, 2400) }),
          n("0.0", "0", "android.widget.TextView", {
            identifier: id("title"),
            text: "Sign in",
            bounds: rect(60, 220, 1020, 340),
          }),
          // The empty fields show their hints as text, as Android does; the password's is masked too.
          n("0.1", "0", "android.widget.EditText", {
            identifier: id("username"),
            text: "Username",
            value: "Username",
            bounds: rect(60, 380, 1020, 500),
            hittable: true,
          }),
          n("0.2", "0", "android.widget.EditText", {
            identifier: id("password"),
            text: "••••••••",
            value: "••••••••",
            bounds: rect(60, 540, 1020, 660),
            hittable: true,
          }),
          n("0.3", "0", "android.widget.CheckBox", {
            identifier: id("remember"),
            text: "Remember me",
            value: "unchecked",
            bounds: rect(60, 700, 1020, 820),
            hittable: true,
          }),
          n("0.4", "0", "android.widget.Button", {
            identifier: id("sign_in"),
            text: "SIGN IN",
            bounds: rect(60, 860, 1020, 1010),
            hittable: true,
          }),
        ],
        states: { "0.2": ["password"] },
        packageName: "com.example.app",
        rotation: 0,
        fingerprint: tree.fingerprint,
      },
    });
  });

  test("keeps the fingerprint when text is typed and changes it when the app navigates", () => {
    const phone = new FakePhone({ scenario: demoScenario });
    const rt = phone.runtime();
    const parse = () => parseUiautomatorDump(phone.dumpXml());
    const before = parse();
    rt.tap(...center(byIdentifier(before, "com.example.app:id/username")), phone.view);
    rt.typeText("alice");
    rt.tap(...center(byIdentifier(before, "com.example.app:id/remember")), phone.view);
    const typed = parse();
    rt.tap(...center(byIdentifier(before, "com.example.app:id/password")), phone.view);
    rt.typeText("pw");
    rt.tap(...center(byIdentifier(before, "com.example.app:id/sign_in")), phone.view);
    const home = parse();
    expect({
      typedSame: typed.fingerprint === before.fingerprint,
      username: byIdentifier(typed, "com.example.app:id/username")?.value,
      remember: byIdentifier(typed, "com.example.app:id/remember")?.value,
      homeDiffers: home.fingerprint !== before.fingerprint,
      format: /^[0-9a-f]{16}$/.test(home.fingerprint),
    }).toEqual({ typedSame: true, username: "alice", remember: "checked", homeDiffers: true, format: true });
  });

  test("parses the exact output of dump-and-cat when it runs on the simulated phone", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    const output = await shell(phone, DUMP);
    expect({ first: output.split("\n")[0], tree: parseUiautomatorDump(output) }).toEqual({
      first: `UI hierchary dumped to: ${DEFAULT_DUMP_FILE}`,
      tree: parseUiautomatorDump(phone.dumpXml()),
    });
  });

  test("throws transient instead of returning the old file when dump fails after an earlier dump", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    await shell(phone, DUMP);
    phone.faults.uiautomatorIdleErrors = 1;
    const stale = await shell(phone, DUMP);
    expect({ hasXml: stale.includes("</hierarchy>"), error: thrown(() => parseUiautomatorDump(stale)) }).toEqual({
      hasXml: true,
      error: { kind: "transient", message: IDLE_STATE_ERROR },
    });
  });

  test("never returns a password's characters when the dump exposes them", () => {
    const xml = doc(
      `<node index="0" text="h\u{1F600}nter2" class="android.widget.EditText" package="p.q" password="true" bounds="[0,0][10,10]" />`,
    );
    expect(parseUiautomatorDump(xml).nodes).toEqual([
      n("0", null, "android.widget.EditText", {
        text: "•••••••",
        value: "•••••••",
        bounds: rect(0, 0, 10, 10),
        enabled: null,
        hittable: null,
      }),
    ]);
  });

  test("fills defaults, position ids and unique ids when attributes are missing or indexes repeat", () => {
    const xml = doc(
      `<node index="0" class="" package="com.a.b"><node text="x" /><node index="7" class="  " /><node index="7" /></node>` +
        `<node index="0" class="android.widget.FrameLayout" package="com.android.systemui" clickable="false" long-clickable="true" />`,
      "3",
    );
    const V = "android.view.View";
    expect(parseUiautomatorDump(xml)).toEqual({
      nodes: [
        n("0", null, V, { enabled: null, hittable: null }),
        n("0.0", "0", V, { text: "x", enabled: null, hittable: null }),
        n("0.7", "0", V, { enabled: null, hittable: null }),
        n("0.2", "0", V, { enabled: null, hittable: null }),
        n("1", null, "android.widget.FrameLayout", { enabled: null, hittable: true }),
      ],
      states: {},
      packageName: "com.a.b",
      rotation: 3,
      fingerprint: createHash("sha256")
        .update(
          [
            '[0,"android.view.View",null]',
            '[1,"android.view.View",null]',
            '[1,"android.view.View",null]',
            '[1,"android.view.View",null]',
            '[0,"android.widget.FrameLayout",null]',
          ]
            .map((l) => `${l}\n`)
            .join(""),
        )
        .digest("hex")
        .slice(0, 16),
    });
  });

  test("decodes named, numeric and split-surrogate references when values are escaped", () => {
    const xml = doc(
      `<node index="0" text="&amp;&lt;&gt;&quot;&apos;&#9;&#x41;&#233;&#128512;&#55357;&#56832;" content-desc="a>b" />`,
    );
    expect(parseUiautomatorDump(xml).nodes.map((x) => [x.text, x.name])).toEqual([
      ["&<>\"'\tAé\u{1F600}\u{1F600}", "a>b"],
    ]);
  });

  test("returns no nodes when the hierarchy is empty", () => {
    expect(parseUiautomatorDump(`${DECL}<hierarchy rotation="1" />`)).toEqual({
      nodes: [],
      states: {},
      packageName: null,
      rotation: 1,
      fingerprint: createHash("sha256").digest("hex").slice(0, 16),
    });
  });

  test("clips values to the snapshot limits with a truncation marker when a text is huge", () => {
    const xml = doc(
      `<node index="0" text="${"é".repeat(70_000)}" resource-id="${"r".repeat(5000)}" class="${"C".repeat(300)}" />`,
    );
    const [node] = parseUiautomatorDump(xml).nodes;
    expect([node?.text?.length, node?.identifier?.length, node?.role.length]).toEqual([65_536, 4096, 256]);
    const textMarker = "…[truncated 4487 chars]";
    expect(node?.text).toBe("é".repeat(65_536 - textMarker.length) + textMarker);
    expect(node?.identifier?.endsWith("…[truncated 926 chars]")).toBe(true);
  });

  test("keeps one node past 10,000 and no more when the dump is over the protocol limit", () => {
    const flat = (count: number) => doc(`<node index="0">${'<node class="c" />'.repeat(count - 1)}</node>`);
    expect([10_000, 10_001, 25_000].map((n) => parseUiautomatorDump(flat(n)).nodes.length)).toEqual([
      10_000, 10_001, 10_001,
    ]);
  });

  // Inverted bounds, `&#0;` and unpaired surrogate references are no longer here: real dumps have
  // them and the node is kept (issue 24; test/drivers/android/parse/uiautomator-repair.test.ts).
  test("throws malformed when the XML is outside what uiautomator writes", () => {
    const node = (attrs: string) => doc(`<node index="0" ${attrs} />`);
    const cases: [string, string][] = [
      [node('bounds="0,0,10,10"'), 'bounds "0,0,10,10"'],
      [node('enabled="yes"'), 'enabled="yes" is not a boolean'],
      [node('text="a &nbsp; b"'), "unknown reference &nbsp; at offset 104"],
      [node('text="a & b"'), "bare & at offset 104"],
      [node("text='x'"), 'expected " to open the value of text at offset 101'],
      [node("text=x"), 'expected " to open the value of text at offset 101'],
      [node('text="a" text="b"'), "duplicate attribute text at offset 105"],
      [node('text="a"class="b"'), "expected whitespace before an attribute at offset 104"],
      [node('text="<b>"'), "< in the value of text at offset 102"],
      [doc('<node index="0">hello</node>'), "unexpected text at offset 96"],
      [doc("<!-- c --><node />"), "unsupported markup at offset 80"],
      [doc('<node index="0"><window /></node>'), "unexpected <window> inside <hierarchy>"],
      [doc('<node index="0"></nod>'), "unexpected </nod> at offset 96"],
      [`${DECL}<dump><hierarchy rotation="0"></hierarchy></dump>`, "root element is <dump>, not <hierarchy>"],
      [doc("", "7"), 'rotation "7"'],
      [`${DECL}<hierarchy rotation="0"><node index="0"></hierarchy>`, "unexpected </hierarchy> at offset 96"],
      [doc(`${"<node>".repeat(2100)}${"</node>".repeat(2100)}`), "the hierarchy is nested too deeply for node ids"],
    ];
    expect(cases.map(([xml]) => thrown(() => parseUiautomatorDump(xml)))).toEqual(
      cases.map(([, m]) => ({ kind: "malformed", message: `uiautomator XML: ${m}` })),
    );
  });

  test("throws the failure's kind when the output is not a complete dump", () => {
    expect([
      thrown(() => parseUiautomatorDump(`${NULL_ROOT_ERROR}\n`)),
      thrown(() => parseUiautomatorDump("/system/bin/sh: uiautomator: not found\n")),
    ]).toEqual([
      { kind: "transient", message: NULL_ROOT_ERROR },
      { kind: "malformed", message: "uiautomator printed no hierarchy: /system/bin/sh: uiautomator: not found" },
    ]);
  });
});

describe("dumpFailure", () => {
  const xml = doc('<node index="0" class="android.widget.FrameLayout" />');

  test("returns null when the output holds a complete hierarchy", () => {
    expect([
      dumpFailure(xml),
      dumpFailure(`UI hierchary dumped to: /sdcard/window_dump.xml\n${xml}`),
      dumpFailure(`${xml}UI hierchary dumped to: /dev/tty\n`),
    ]).toEqual([null, null, null]);
  });

  test("reports uiautomator's known failures as transient when they are printed", () => {
    const outputs = [
      `${IDLE_STATE_ERROR}\ncat: /sdcard/window_dump.xml: No such file or directory\n`,
      `${NULL_ROOT_ERROR}\n`,
      "null root node returned by UiTestAutomationBridge.\n",
      "Killed\n",
      "/system/bin/sh: 1234 Killed  uiautomator dump /sdcard/window_dump.xml\n",
      "Segmentation fault \n",
      'Exception in thread "main" java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@1b2c3d already registered!\n\tat com.android.server.accessibility.UiAutomationManager.registerUiTestAutomationServiceLocked(UiAutomationManager.java:97)\n',
    ];
    expect(outputs.map(dumpFailure)).toEqual([
      { transient: true, message: IDLE_STATE_ERROR },
      { transient: true, message: NULL_ROOT_ERROR },
      { transient: true, message: "null root node returned by UiTestAutomationBridge." },
      { transient: true, message: "Killed" },
      { transient: true, message: "/system/bin/sh: 1234 Killed  uiautomator dump /sdcard/window_dump.xml" },
      { transient: true, message: "Segmentation fault" },
      {
        transient: true,
        message:
          'Exception in thread "main" java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@1b2c3d already registered!',
      },
    ]);
  });

  test("reports a failure printed before the XML when the file is a previous dump", () => {
    expect(dumpFailure(`${IDLE_STATE_ERROR}\n${xml}`)).toEqual({ transient: true, message: IDLE_STATE_ERROR });
  });

  test("reports malformed when there is no hierarchy and transient when it is cut short", () => {
    expect([
      dumpFailure(""),
      dumpFailure("  \n"),
      dumpFailure("Error: unknown command dumpx\n"),
      dumpFailure(`${DECL}<dump />`),
      dumpFailure(xml.slice(0, 120)),
    ]).toEqual([
      { transient: false, message: "uiautomator printed nothing" },
      { transient: false, message: "uiautomator printed nothing" },
      { transient: false, message: "uiautomator printed no hierarchy: Error: unknown command dumpx" },
      { transient: false, message: `uiautomator printed no hierarchy: ${DECL}<dump />` },
      { transient: true, message: "the UI hierarchy is truncated" },
    ]);
  });
});
