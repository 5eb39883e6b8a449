import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { uiStatesOf, formatTree } from "../../src/cli/device-commands.ts";
import { foregroundOf, wantedFrom } from "../../src/cli/element-commands.ts";
import { CliError, style } from "../../src/cli/output.ts";
import { currentRef, loadListing, nodeRefOf, parseRef, refsPath, saveListing } from "../../src/cli/refs.ts";
import { selectorMatcher } from "../../src/core/devices/semantic/index.ts";
import { closestNodes as closest, editDistance, similarity } from "../../src/surfaces/interaction/index.ts";
import type { ElementSelector, UiNode } from "../../src/protocol/types/ui.ts";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson } from "./run.ts";

const SESSION = "[0-9a-f-]{36}";
const OBSERVATION = `after: observation ${SESSION} \\(screenshot sha256 [0-9a-f]{64}\\)`;
const LOGIN = "screen: com.devicerail.mock (login) — native context com.devicerail.mock, document login-1";

/** One data directory, so every command talks to the same background daemon and sees one Mock app. */
const shared = () => ({ DEVICERAIL_DATA_DIR: tempDataDir() });

/** Runs a command that must succeed, and returns its stdout. */
async function ok(args: string[], env: Record<string, string>): Promise<string> {
  const r = await cli(args, env);
  if (r.code !== 0) throw new Error(`devicerail ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

describe("element commands through the CLI on the Mock", () => {
  test("signs in with element commands only, ui showing refs and the fields' states at each step", async () => {
    const env = shared();
    expect(await ok(["ui"], env)).toBe(
      [
        "    Window [0,0,1280,720]",
        '@e1   Text "Sign in" #title [400,40,480,64]',
        '@e2   TextField "User name" #username [400,120,480,56]',
        '@e3   SecureTextField "Password" #password [400,192,480,56] [password]',
        '@e4   Button "Sign in" #sign_in [400,264,480,56] [disabled]',
        "",
      ].join("\n"),
    );
    expect(await ok(["type", "alice", "--into", "--id", "username"], env)).toMatch(
      new RegExp(
        `^ok type "alice" into --id username on mock-1 \\(tapElement \\+ inputText, \\d+ ms, session ${SESSION}\\)\nelement: @e2 TextField "User name" #username \\[400,120,480,56\\]\n${OBSERVATION}\n$`,
      ),
    );
    expect(await ok(["ui"], env)).toBe(
      [
        "    Window [0,0,1280,720]",
        '@e1   Text "Sign in" #title [400,40,480,64]',
        '@e2   TextField "alice" #username [400,120,480,56] [focused]',
        '@e3   SecureTextField "Password" #password [400,192,480,56] [password]',
        '@e4   Button "Sign in" #sign_in [400,264,480,56] [disabled]',
        "",
      ].join("\n"),
    );
    await ok(["type", "hunter2", "--into", "--id", "password"], env);
    expect((await ok(["ui"], env)).split("\n").slice(2, 5)).toEqual([
      '@e2   TextField "alice" #username [400,120,480,56]',
      '@e3   SecureTextField "•••••••" #password [400,192,480,56] [focused] [password]',
      '@e4   Button "Sign in" #sign_in [400,264,480,56]',
    ]);
    // The title reads "Sign in" too; only the button can be tapped, so that is the one tapped.
    expect(await ok(["tap", "--text", "Sign in"], env)).toMatch(
      new RegExp(
        `^ok tap --text "Sign in" on mock-1 \\(tapElement, \\d+ ms, session ${SESSION}\\)\nelement: @e4 Button "Sign in" #sign_in \\[400,264,480,56\\]\n` +
          `note: 2 elements match --text "Sign in"; tapped the only one that can be tapped\n${OBSERVATION}\n$`,
      ),
    );
    expect(await ok(["wait-for", "--text", "Welcome, alice"], env)).toMatch(
      new RegExp(
        `^ok wait-for --text "Welcome, alice" on mock-1 \\(present after \\d+ ms, session ${SESSION}\\)\nelement: Text "Welcome, alice" #title \\[400,40,480,64\\]\n$`,
      ),
    );
    // Each command was one Session of its own, ended as completed; the tap's records its ambiguous first try.
    const { sessions } = await cliJson(["sessions"], env);
    expect(
      sessions
        .map((s: { outcome: string; actions: number; errors: number }) => [s.outcome, s.actions, s.errors])
        .reverse(),
    ).toEqual([
      ["completed", 0, 0],
      ["completed", 2, 0],
      ["completed", 0, 0],
      ["completed", 2, 0],
      ["completed", 0, 0],
      ["completed", 2, 1],
      ["completed", 1, 0],
    ]);
  });

  test("tap --ref taps the node a ui listing named, and a ref from a screen no longer shown is refused as stale", async () => {
    const env = shared();
    await ok(["ui"], env);
    expect(await ok(["tap", "--ref", "@e2"], env)).toMatch(
      new RegExp(
        `^ok tap --ref @e2 on mock-1 \\(tapElement, \\d+ ms, session ${SESSION}\\)\nelement: @e2 TextField "User name" #username `,
      ),
    );
    expect((await ok(["ui"], env)).split("\n")[2]).toBe(
      '@e2   TextField "User name" #username [400,120,480,56] [focused]',
    );
    await ok(["type", "alice"], env);
    await ok(["tap", "--ref", "e3"], env);
    await ok(["type", "pw"], env);
    await ok(["tap", "--ref", "@e4"], env);
    const stale = await cli(["tap", "--ref", "@e2"], env);
    expect([stale.code, stale.stdout, stale.stderr]).toEqual([
      1,
      "",
      "devicerail: the screen changed since `devicerail ui`; run it again\n",
    ]);
    const unknown = await cli(["tap", "--ref", "@e9"], env);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      "devicerail: @e9 is not in the last devicerail ui listing of mock-1 (it has @e1 to @e4); run devicerail ui again\n",
    ]);
    // The stale tap's Session says why it failed; the unknown ref never reached the device.
    const { sessions } = await cliJson(["sessions"], env);
    expect([sessions.length, sessions[0].outcome, sessions[0].reason]).toEqual([
      8,
      "failed",
      "the screen changed since `devicerail ui`; run it again",
    ]);
  });

  test("find prints the element with its ref, and --json the findElement result", async () => {
    const env = shared();
    const before = await cli(["find", "--role", "Button", "--text", "sign in", "--ignore-case"], env);
    // No ui listing yet: nothing to call the element by.
    expect([before.code, before.stdout]).toEqual([0, 'Button "Sign in" #sign_in [400,264,480,56] [disabled]\n']);
    await ok(["ui"], env);
    expect(await ok(["find", "--name", "Password"], env)).toBe(
      '@e3 SecureTextField "Password" #password [400,192,480,56] [password]\n',
    );
    const result = await cliJson(["find", "--text", "Sign", "--contains", "--role", "Text"], env);
    expect(result.output).toEqual({
      element: {
        observationId: result.before.id,
        context: { contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "login-1" },
        stableNodeId: "login/title",
      },
    });
  });

  test("wait-for --gone returns once the element is absent, and wait-for exits 1 saying what did not happen in time", async () => {
    const env = shared();
    const stillThere = await cli(["wait-for", "--gone", "--id", "username", "--timeout", "300ms"], env);
    expect([stillThere.code, stillThere.stdout, stillThere.stderr]).toEqual([
      1,
      "",
      `devicerail: wait-for: --id username was still there after 300 ms\n  ${LOGIN}\n`,
    ]);
    const never = await cli(["wait-for", "--text", "Welcome, bob", "--timeout", "1s"], env);
    expect([never.code, never.stdout, never.stderr]).toEqual([
      1,
      "",
      `devicerail: wait-for: no element matching --text "Welcome, bob" appeared within 1 s\n  ${LOGIN}\n`,
    ]);
    await ok(["type", "alice", "--into", "--id", "username"], env);
    await ok(["type", "pw", "--into", "--id", "password"], env);
    await ok(["tap", "--role", "Button", "--name", "Sign in"], env);
    expect(await ok(["wait-for", "--gone", "--id", "username"], env)).toMatch(
      new RegExp(`^ok wait-for --gone --id username on mock-1 \\(absent after \\d+ ms, session ${SESSION}\\)\n$`),
    );
    // The daemon's own wait: the sync finishes three observations after the tap, well within it.
    await ok(["tap", "--id", "sync"], env);
    const synced = await cliJson(["wait-for", "--text", "Synced 3 items"], env);
    expect([synced.output.matched, synced.output.condition, synced.output.element.stableNodeId]).toEqual([
      true,
      "present",
      "home/status",
    ]);
  });

  test("a selector that finds nothing or too much lists the closest elements and the screen, in words and in --json", async () => {
    const env = shared();
    await ok(["ui"], env);
    const typo = await cli(["tap", "--text", "Sign on"], env);
    expect([typo.code, typo.stdout, typo.stderr]).toEqual([
      1,
      "",
      [
        "devicerail: element_not_found: element was not found",
        '  selector: --text "Sign on"',
        "  closest elements:",
        '    @e1 Text "Sign in" #title [400,40,480,64]',
        '    @e4 Button "Sign in" #sign_in [400,264,480,56] [disabled]',
        `  ${LOGIN}`,
        "",
      ].join("\n"),
    ]);
    // Before any input the button is disabled, so neither "Sign in" can be tapped: ambiguous.
    const both = await cli(["tap", "--text", "Sign in", "--json"], env);
    expect(both.code).toBe(1);
    expect(both.stderr.split("\n").slice(0, 3)).toEqual([
      "devicerail: element_ambiguous: element selector matched more than one element",
      '  selector: --text "Sign in"',
      "  add --role, --id or --name to tell them apart, or use --ref from devicerail ui",
    ]);
    const { error } = JSON.parse(both.stdout);
    expect([
      error.code,
      error.data.code,
      error.closest.map((c: { ref: string; node: UiNode }) => [c.ref, c.node.stableNodeId]),
      error.screen,
    ]).toEqual([
      -32000,
      "element_ambiguous",
      [
        ["@e1", "login/title"],
        ["@e4", "login/sign_in"],
      ],
      {
        foreground: "com.devicerail.mock (login)",
        context: { contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "login-1" },
      },
    ]);
    const disabled = await cli(["tap", "--id", "sign_in"], env);
    expect([disabled.code, disabled.stderr.split("\n").slice(0, 5)]).toEqual([
      1,
      [
        "devicerail: element_not_interactable: element is not interactable",
        "  selector: --id sign_in",
        "  it is disabled, cannot be tapped, or is off the screen",
        "  closest elements:",
        '    @e4 Button "Sign in" #sign_in [400,264,480,56] [disabled]',
      ],
    ]);
  });

  test("usage errors exit 2 with a message and nothing on stdout", async () => {
    const cases: [string[], string][] = [
      [
        ["tap", "10", "20", "--text", "Sign in"],
        "devicerail: give either X Y or an element (--text, --id, --role, --name or --ref), not both",
      ],
      [["tap"], "devicerail: tap needs X Y or an element: --text, --id, --role, --name or --ref"],
      [["tap", "10"], "devicerail: missing required argument 'y'"],
      [
        ["tap", "--ref", "@e1", "--id", "x"],
        "devicerail: --ref names one element by itself; leave out --text, --id, --role and --name",
      ],
      [["tap", "--ref", "button"], 'devicerail: --ref expects a ref from devicerail ui such as @e3, not "button"'],
      [["tap", "--text", " "], "devicerail: --text needs a value that is not blank"],
      [["find", "--contains"], "devicerail: --contains applies to --text; give --text too"],
      [["find", "--text", "a", "--contains", "--regex"], "devicerail: --contains and --regex exclude each other"],
      [["find"], "devicerail: find needs an element: --text, --id, --role or --name"],
      [["wait-for", "--gone"], "devicerail: wait-for needs an element: --text, --id, --role or --name"],
      [["wait-for", "--ref", "@e1"], "devicerail: unknown option '--ref'"],
      [
        ["type", "alice", "--id", "username"],
        "devicerail: an element to type into needs --into: devicerail type TEXT --into --id FIELD",
      ],
      [["type", "alice", "--into"], "devicerail: --into needs the field: --text, --id, --role, --name or --ref"],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect([args, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([args, 2, "", message]);
    }
  });
});

const node = (id: string, over: Partial<UiNode> = {}): UiNode => ({
  stableNodeId: id,
  parentStableNodeId: id === "r" ? null : "r",
  role: "android.view.View",
  name: null,
  value: null,
  identifier: null,
  text: null,
  bounds: null,
  enabled: true,
  hittable: false,
  ...over,
});
const selector = (over: Partial<ElementSelector>): ElementSelector => ({
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
  ...over,
});

describe("similarity", () => {
  test("counts edits over code points when strings differ", () => {
    expect([
      editDistance("sign in", "sign on"),
      editDistance("", "abc"),
      editDistance("kitten", "sitting"),
      editDistance("😀a", "a"),
    ]).toEqual([1, 3, 3, 1]);
  });

  test("is 1 for equal text ignoring case and spacing, high for typos, shared words and containment, and 0 for nothing shared", () => {
    expect([
      similarity("Sign in", " sign  IN "),
      similarity("Sign on", "Sign in"),
      similarity("in sign", "Sign in"),
      similarity("Sign", "Sign in now"),
      similarity("", "x"),
      similarity("xyz", "abc"),
    ]).toEqual([1, 1 - 1 / 7, 1, 0.5 + (0.4 * 4) / 11, 0, 0]);
  });
});

// The daemon's own matcher, as both surfaces pass it.
const closestNodes = (nodes: UiNode[], s: ElementSelector, count?: number) => closest(nodes, s, selectorMatcher, count);

describe("closestNodes", () => {
  const nodes = [
    node("r", { role: "android.widget.FrameLayout" }),
    node("title", { role: "android.widget.TextView", text: "Sign in" }),
    node("email", { role: "android.widget.EditText", identifier: "com.example:id/email", text: "Email" }),
    node("button", { role: "android.widget.Button", text: "SIGN IN", identifier: "com.example:id/sign_in" }),
    node("help", { role: "android.widget.ImageButton", name: "Help" }),
  ];

  test("ranks matching nodes first, then near misses, in tree order on ties, when a selector names nothing exactly", () => {
    expect(closestNodes(nodes, selector({ text: { value: "Sign on", mode: "exact", caseSensitive: true } }))).toEqual([
      1, 3,
    ]);
    expect(closestNodes(nodes, selector({ text: { value: "SIGN IN", mode: "exact", caseSensitive: true } }))).toEqual([
      3, 1,
    ]);
    expect(closestNodes(nodes, selector({ identifier: "signin" }))).toEqual([3]);
    expect(
      closestNodes(
        nodes,
        selector({ role: "Button", text: { value: "Sign in", mode: "exact", caseSensitive: true } }),
        2,
      ),
    ).toEqual([3, 1]);
  });

  test("uses the daemon's matching for regex and contains when the text mode asks for it", () => {
    expect(closestNodes(nodes, selector({ text: { value: "^E.a", mode: "regex", caseSensitive: true } }))).toEqual([2]);
    expect(closestNodes(nodes, selector({ text: { value: "mai", mode: "contains", caseSensitive: true } }))).toEqual([
      2,
    ]);
  });

  test("shows nothing when no node shares enough with the selector", () => {
    expect(closestNodes(nodes, selector({ name: "Settings" }))).toEqual([]);
  });
});

describe("wantedFrom", () => {
  test("makes one selector of every option given, in the daemon's shape, with a label in the command's words", () => {
    expect(
      wantedFrom({ text: "Sign in", regex: true, ignoreCase: true, role: "Button", id: "sign_in", name: "Sign in" }),
    ).toEqual({
      kind: "selector",
      selector: selector({
        role: "Button",
        name: "Sign in",
        identifier: "sign_in",
        text: { value: "Sign in", mode: "regex", caseSensitive: false },
      }),
      label: '--role Button --name "Sign in" --id sign_in --text "Sign in" --regex --ignore-case',
    });
    expect(wantedFrom({ ref: "e3" })).toEqual({ kind: "ref", ref: "e3", label: "--ref e3" });
    expect(wantedFrom({})).toBeNull();
  });

  test("refuses options that contradict each other as usage errors", () => {
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof CliError ? [e.exitCode, e.message] : e;
      }
      return null;
    };
    expect(refused(() => wantedFrom({ ignoreCase: true, id: "x" }))).toEqual([
      2,
      "--ignore-case applies to --text; give --text too",
    ]);
    expect(refused(() => wantedFrom({ name: "" }))).toEqual([2, "--name needs a value that is not blank"]);
  });
});

describe("refs", () => {
  const context = { contextKind: "native" as const, contextId: "com.devicerail.mock", documentEpoch: "login-1" };
  // login/title was numbered first; login/sign_in was numbered in an earlier listing of this context and is gone now.
  const listing = {
    deviceId: "mock-1",
    observationId: "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    context,
    numbers: { "login/title": 1, "login/sign_in": 2, "login/user": 3 },
    next: 4,
    listed: ["login/title", "login/user"],
    savedAtMs: 1,
  };

  test("parses @eN and eN, and nothing else, when a ref is given", () => {
    expect([parseRef("@e1"), parseRef("e12"), parseRef(" @e3 ")]).toEqual(["@e1", "@e12", "@e3"]);
    for (const bad of ["@e0", "e", "@x1", "3", "@e1a"]) expect(() => parseRef(bad)).toThrow(CliError);
  });

  test("saves listings per device in a 0600 file and loads the newest one when no device is named", () => {
    const dir = tempDataDir();
    expect(loadListing(dir, null)).toBeNull();
    saveListing(dir, listing);
    saveListing(dir, { ...listing, deviceId: "mock-2", numbers: { x: 1 }, next: 2, listed: ["x"] });
    expect([
      loadListing(dir, null)?.deviceId,
      loadListing(dir, "mock-1"),
      statSync(refsPath(dir)).mode & 0o777,
    ]).toEqual(["mock-2", listing, 0o600]);
    expect(JSON.parse(readFileSync(refsPath(dir), "utf8")).last).toBe("mock-2");
  });

  test("turns a ref into the node reference of its listing, and shows a ref only while the listing is of the same document", () => {
    expect(nodeRefOf(listing, "@e3")).toEqual({
      observationId: listing.observationId,
      context,
      stableNodeId: "login/user",
    });
    expect(() => nodeRefOf(listing, "@e2")).toThrow(
      "@e2 is not in the last devicerail ui listing of mock-1 (it has @e1 to @e3); run devicerail ui again",
    );
    expect(() => nodeRefOf(listing, "@e4")).toThrow(
      "@e4 is not in the last devicerail ui listing of mock-1 (it has @e1 to @e3); run devicerail ui again",
    );
    expect([
      currentRef(listing, context, "login/title"),
      currentRef(listing, { ...context, documentEpoch: "login-2" }, "login/title"),
      currentRef(listing, context, "login/sign_in"),
      currentRef(listing, context, "login/other"),
      currentRef(null, context, "login/title"),
    ]).toEqual(["@e1", null, null, null, null]);
  });
});

describe("ui printing", () => {
  test("reads only known states of the right shape from metadata.uiStates", () => {
    expect(uiStatesOf({ uiStates: { a: ["password", "focused", "blinking"], b: "checked", c: [] } })).toEqual({
      a: ["focused", "password"],
    });
    expect([uiStatesOf({}), uiStatesOf({ uiStates: ["x"] }), uiStatesOf(undefined)]).toEqual([{}, {}, {}]);
  });

  test("puts refs in a column of their own, blank for a node without one, and states after the bounds when both are asked", () => {
    const nodes = [
      node("r", { role: "Window" }),
      ...Array.from({ length: 10 }, (_, i) => node(`n${i}`, { role: "Switch", enabled: i !== 9 })),
    ];
    const refs = Object.fromEntries(nodes.slice(1).map((n, i) => [n.stableNodeId, `@e${i + 1}`]));
    const lines = formatTree(nodes, style(false), { refs, states: { n0: ["checked", "focused"] } }).split("\n");
    expect([lines[0], lines[1], lines[10]]).toEqual([
      "     Window",
      "@e1    Switch [checked] [focused]",
      "@e10   Switch [disabled]",
    ]);
  });

  test("names the foreground app as adb does, or the Mock's app and screen", () => {
    expect([
      foregroundOf({ foreground: { packageName: "com.example.shop", activity: "com.example.shop.LoginActivity" } }),
      foregroundOf({ foreground: { packageName: "com.example.shop", activity: "org.other.Main" } }),
      foregroundOf({ foreground: { packageName: "com.example.shop", activity: null } }),
      foregroundOf({ foregroundApp: "com.devicerail.mock", screen: "home" }),
      foregroundOf({}),
    ]).toEqual([
      "com.example.shop/.LoginActivity",
      "com.example.shop/org.other.Main",
      "com.example.shop",
      "com.devicerail.mock (home)",
      null,
    ]);
  });
});
