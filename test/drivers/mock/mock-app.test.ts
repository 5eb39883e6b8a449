import { describe, expect, test } from "bun:test";
import { MOCK_APP_ID, MockApp, SCREEN, SYNC_OBSERVATIONS } from "../../../drivers/mock/mock-app.ts";
import { MockDriver } from "../../../drivers/mock/mock-driver.ts";
import { uiSnapshotProblem } from "../../../src/core/sessions/ui-snapshot.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import type { UiNode } from "../../../src/protocol/types/ui.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";

const CTX: CallContext = { signal: new AbortController().signal, deadline: null, log: silentLogger };

const byId = (app: MockApp, id: string): UiNode => {
  const n = app.tree().find((x) => x.stableNodeId === id);
  if (!n) throw new Error(`no node ${id} on ${app.screen}`);
  return n;
};

/** Taps the centre of a node, as a user would. */
function tapNode(app: MockApp, id: string): string | null {
  const b = byId(app, id).bounds as NonNullable<UiNode["bounds"]>;
  return app.tap(b.x + b.width / 2, b.y + b.height / 2);
}

const textOf = (app: MockApp, id: string) => byId(app, id).text;

function signedIn(user = "alice", password = "pw"): MockApp {
  const app = new MockApp();
  tapNode(app, "login/username");
  app.type(user, false);
  tapNode(app, "login/password");
  app.type(password, true);
  tapNode(app, "login/sign_in");
  return app;
}

const leaf = (
  id: string,
  role: string,
  over: Partial<UiNode>,
  bounds: { x: number; y: number; width: number; height: number },
): UiNode => ({
  stableNodeId: `login/${id}`,
  parentStableNodeId: "login",
  role,
  name: null,
  value: null,
  identifier: id,
  text: null,
  bounds,
  enabled: true,
  hittable: false,
  ...over,
});

const LOGIN_TREE: UiNode[] = [
  {
    stableNodeId: "login",
    parentStableNodeId: null,
    role: "Window",
    name: null,
    value: null,
    identifier: null,
    text: null,
    bounds: { x: 0, y: 0, width: 1280, height: 720 },
    enabled: true,
    hittable: false,
  },
  leaf("title", "Text", { text: "Sign in" }, { x: 400, y: 40, width: 480, height: 64 }),
  leaf(
    "username",
    "TextField",
    { name: "User name", value: "", text: "", hittable: true },
    { x: 400, y: 120, width: 480, height: 56 },
  ),
  leaf(
    "password",
    "SecureTextField",
    { name: "Password", value: "", text: "", hittable: true },
    { x: 400, y: 192, width: 480, height: 56 },
  ),
  leaf(
    "sign_in",
    "Button",
    { name: "Sign in", text: "Sign in", enabled: false, hittable: true },
    { x: 400, y: 264, width: 480, height: 56 },
  ),
];

describe("MockApp", () => {
  test("shows the sign-in screen in the first context when it is new", () => {
    const app = new MockApp();
    expect(app.screen).toBe("login");
    expect(app.context()).toEqual({ contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: "login-1" });
    expect(app.tree()).toEqual(LOGIN_TREE);
    expect(app.focusedNodeId()).toBeNull();
  });

  test("focuses the user name field and appends typed text when it is tapped", () => {
    const app = new MockApp();
    expect(tapNode(app, "login/username")).toBe("username");
    expect(app.focusedNodeId()).toBe("login/username");
    app.type("al", false);
    app.type("ice", false);
    expect(byId(app, "login/username")).toEqual({ ...(LOGIN_TREE[2] as UiNode), value: "alice", text: "alice" });
    expect(byId(app, "login/password")).toEqual(LOGIN_TREE[3] as UiNode);
    expect(app.context().documentEpoch).toBe("login-1");
  });

  test("types nowhere when no field is focused", () => {
    const app = new MockApp();
    app.type("lost", false);
    expect(app.tree()).toEqual(LOGIN_TREE);
  });

  test("masks the field with one bullet per code point when the input is secret", () => {
    const app = new MockApp();
    tapNode(app, "login/username");
    app.type("a😀", true);
    expect([textOf(app, "login/username"), byId(app, "login/username").value]).toEqual(["••", "••"]);
    app.type("b", false);
    expect(textOf(app, "login/username")).toBe("•••");
    tapNode(app, "login/password");
    app.type("pw", false);
    expect([textOf(app, "login/password"), byId(app, "login/password").value]).toEqual(["••", "••"]);
  });

  test("clearFocused empties only the focused field when a field is focused", () => {
    const app = new MockApp();
    tapNode(app, "login/username");
    app.type("alice", false);
    tapNode(app, "login/password");
    app.type("pw", true);
    app.clearFocused();
    expect([textOf(app, "login/username"), textOf(app, "login/password")]).toEqual(["alice", ""]);
    tapNode(app, "login/username");
    app.clearFocused();
    expect(app.tree()).toEqual(LOGIN_TREE);
  });

  test("clearFocused changes nothing when no field is focused", () => {
    const app = new MockApp();
    tapNode(app, "login/username");
    app.type("alice", false);
    app.tap(10, 10);
    app.clearFocused();
    expect(textOf(app, "login/username")).toBe("alice");
  });

  test("keeps sign_in disabled until both fields have text, and a tap on it does nothing while disabled", () => {
    const app = new MockApp();
    expect(tapNode(app, "login/sign_in")).toBeNull();
    expect([app.screen, app.context().documentEpoch]).toEqual(["login", "login-1"]);
    expect(app.tree()).toEqual(LOGIN_TREE);
    tapNode(app, "login/username");
    app.type("alice", false);
    expect(byId(app, "login/sign_in").enabled).toBe(false);
    expect(tapNode(app, "login/sign_in")).toBeNull();
    expect(app.screen).toBe("login");
    tapNode(app, "login/password");
    app.type("pw", true);
    expect(byId(app, "login/sign_in")).toEqual({ ...(LOGIN_TREE[4] as UiNode), enabled: true });
  });

  // A disabled control still takes the touch (Android's View.onTouchEvent consumes it), so a tap
  // on the disabled Sign in button must not act like a tap on empty space.
  test("a tap on the disabled sign_in button keeps the focused field focused", () => {
    const app = new MockApp();
    tapNode(app, "login/username");
    app.type("ali", false);
    expect(tapNode(app, "login/sign_in")).toBeNull();
    app.type("ce", false);
    expect({ focused: app.focusedNodeId(), username: textOf(app, "login/username") }).toEqual({
      focused: "login/username",
      username: "alice",
    });
  });

  test("signs in to the home screen with a new document epoch when sign_in is tapped", () => {
    const app = signedIn();
    expect(app.screen).toBe("home");
    expect(app.context()).toEqual({ contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: "home-2" });
    expect(app.focusedNodeId()).toBeNull();
    expect(app.tree().map((n) => [n.stableNodeId, n.parentStableNodeId, n.text, n.enabled, n.hittable])).toEqual([
      ["home", null, null, true, false],
      ["home/title", "home", "Welcome, alice", true, false],
      ["home/status", "home", "Not synced", true, false],
      ["home/sync", "home", "Sync", true, true],
      ["home/menu", "home", null, true, false],
      ["home/settings", "home/menu", "Settings", true, true],
      ["home/about", "home/menu", "About", true, true],
      ["home/sign_out", "home", "Sign out", true, true],
    ]);
    expect(app.tree().map((n) => n.bounds)).toEqual([
      { x: 0, y: 0, width: 1280, height: 720 },
      { x: 400, y: 40, width: 480, height: 64 },
      { x: 400, y: 120, width: 480, height: 40 },
      { x: 400, y: 176, width: 480, height: 56 },
      { x: 400, y: 248, width: 480, height: 136 },
      { x: 408, y: 256, width: 464, height: 56 },
      { x: 408, y: 320, width: 464, height: 56 },
      { x: 400, y: 400, width: 480, height: 56 },
    ]);
  });

  test("shows Syncing... until SYNC_OBSERVATIONS ticks have passed, then the synced count", () => {
    const app = signedIn();
    app.tick();
    expect(textOf(app, "home/status")).toBe("Not synced");
    tapNode(app, "home/sync");
    const seen = [textOf(app, "home/status")];
    const syncEnabled = [byId(app, "home/sync").enabled];
    for (let i = 0; i < SYNC_OBSERVATIONS; i++) {
      app.tick();
      seen.push(textOf(app, "home/status"));
      syncEnabled.push(byId(app, "home/sync").enabled);
    }
    expect(SYNC_OBSERVATIONS).toBe(3);
    expect(seen).toEqual(["Syncing...", "Syncing...", "Syncing...", "Synced 3 items"]);
    expect(syncEnabled).toEqual([false, false, false, true]);
    expect(app.context().documentEpoch).toBe("home-2");
    tapNode(app, "home/sync");
    for (let i = 0; i < SYNC_OBSERVATIONS; i++) app.tick();
    expect(textOf(app, "home/status")).toBe("Synced 6 items");
  });

  test("a tap on the disabled Sync button does not restart the sync while it runs", () => {
    const app = signedIn();
    tapNode(app, "home/sync");
    app.tick();
    expect(tapNode(app, "home/sync")).toBeNull();
    app.tick();
    app.tick();
    expect(textOf(app, "home/status")).toBe("Synced 3 items");
  });

  test("navigates to settings and about and back with a new epoch on every screen change", () => {
    const app = signedIn();
    expect(tapNode(app, "home/settings")).toBe("settings");
    expect([app.screen, app.context().documentEpoch]).toEqual(["settings", "settings-3"]);
    expect(app.tree().map((n) => [n.stableNodeId, n.role, n.text, n.value])).toEqual([
      ["settings", "Window", null, null],
      ["settings/title", "Text", "Settings", null],
      ["settings/dark_mode", "Switch", "Dark mode", "off"],
      ["settings/back", "Button", "Back", null],
    ]);
    tapNode(app, "settings/dark_mode");
    expect([app.darkMode, byId(app, "settings/dark_mode").value]).toEqual([true, "on"]);
    tapNode(app, "settings/back");
    expect([app.screen, app.context().documentEpoch]).toEqual(["home", "home-4"]);
    expect(tapNode(app, "home/about")).toBe("about");
    expect([app.screen, app.context().documentEpoch]).toEqual(["about", "about-5"]);
    expect(app.tree().map((n) => [n.stableNodeId, n.text])).toEqual([
      ["about", null],
      ["about/title", "About"],
      ["about/version", "DeviceRail Mock App 1.0"],
      ["about/back", "Back"],
    ]);
    tapNode(app, "about/back");
    expect([app.screen, app.context().documentEpoch]).toEqual(["home", "home-6"]);
  });

  test("reports the password field, the focused field and the switch while on as states when the screens show them", () => {
    const app = new MockApp();
    const seen: [string, ReturnType<MockApp["states"]>][] = [[app.screen, app.states()]];
    tapNode(app, "login/username");
    seen.push([app.screen, app.states()]);
    tapNode(app, "login/password");
    seen.push([app.screen, app.states()]);
    app.type("pw", true);
    app.tap(10, 10);
    seen.push([app.screen, app.states()]);
    tapNode(app, "login/username");
    app.type("alice", false);
    tapNode(app, "login/sign_in");
    seen.push([app.screen, app.states()]);
    tapNode(app, "home/settings");
    seen.push([app.screen, app.states()]);
    tapNode(app, "settings/dark_mode");
    seen.push([app.screen, app.states()]);
    expect(seen).toEqual([
      ["login", { "login/password": ["password"] }],
      ["login", { "login/username": ["focused"], "login/password": ["password"] }],
      ["login", { "login/password": ["focused", "password"] }],
      ["login", { "login/password": ["password"] }],
      ["home", {}],
      ["settings", {}],
      ["settings", { "settings/dark_mode": ["checked"] }],
    ]);
  });

  test("goBack does nothing when the back stack is empty", () => {
    const app = signedIn();
    app.goBack();
    expect([app.screen, app.context().documentEpoch]).toEqual(["home", "home-2"]);
    const fresh = new MockApp();
    fresh.goBack();
    expect(fresh.context().documentEpoch).toBe("login-1");
  });

  test("sign out returns to an empty sign-in screen with a new epoch and no back stack", () => {
    const app = signedIn();
    tapNode(app, "home/settings");
    tapNode(app, "settings/back");
    expect(tapNode(app, "home/sign_out")).toBe("sign_out");
    expect([app.screen, app.context().documentEpoch]).toEqual(["login", "login-5"]);
    expect(app.tree()).toEqual(LOGIN_TREE);
    app.goBack();
    expect(app.screen).toBe("login");
    tapNode(app, "login/username");
    app.type("bob", false);
    expect(textOf(app, "login/username")).toBe("bob");
  });

  test("sign out forgets the previous user's sync when the next user signs in", () => {
    const app = signedIn("alice");
    tapNode(app, "home/sync");
    for (let i = 0; i < SYNC_OBSERVATIONS; i++) app.tick();
    expect(textOf(app, "home/status")).toBe("Synced 3 items");
    tapNode(app, "home/sign_out");
    tapNode(app, "login/username");
    app.type("bob", false);
    tapNode(app, "login/password");
    app.type("pw", true);
    tapNode(app, "login/sign_in");
    expect([textOf(app, "home/title"), textOf(app, "home/status"), byId(app, "home/sync").enabled]).toEqual([
      "Welcome, bob",
      "Not synced",
      true,
    ]);
  });

  test("a tap on empty space unfocuses the field when a field is focused", () => {
    const app = new MockApp();
    tapNode(app, "login/username");
    expect(app.tap(100, 100)).toBeNull();
    expect(app.focusedNodeId()).toBeNull();
    app.type("lost", false);
    expect(app.tree()).toEqual(LOGIN_TREE);
    // The title is not tappable: a tap on it counts as empty space.
    tapNode(app, "login/password");
    expect(tapNode(app, "login/title")).toBeNull();
    expect(app.focusedNodeId()).toBeNull();
  });

  test("hit-testing uses half-open bounds when a tap lands on the edge of a field", () => {
    const app = new MockApp();
    expect(app.tap(400, 120)).toBe("username");
    expect(app.tap(879, 175)).toBe("username");
    expect(app.tap(880, 150)).toBeNull();
    expect(app.tap(500, 176)).toBeNull();
    expect(app.tap(500, 192)).toBe("password");
  });

  test("every screen's tree is a valid UiSnapshot with unique ids in preorder", () => {
    const app = new MockApp();
    const trees: Record<string, UiNode[]> = { login: app.tree() };
    tapNode(app, "login/username");
    app.type("alice", false);
    tapNode(app, "login/password");
    app.type("pw", true);
    tapNode(app, "login/sign_in");
    trees.home = app.tree();
    tapNode(app, "home/settings");
    trees.settings = app.tree();
    tapNode(app, "settings/back");
    tapNode(app, "home/about");
    trees.about = app.tree();
    expect(Object.keys(trees)).toEqual(["login", "home", "settings", "about"]);
    for (const [screen, nodes] of Object.entries(trees)) {
      const snapshot = {
        formatVersion: 1,
        observationId: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
        context: { contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: `${screen}-x` },
        rootStableNodeIds: [screen],
        nodes,
      };
      expect({ screen, problem: uiSnapshotProblem(snapshot) }).toEqual({ screen, problem: null });
      const ids = nodes.map((n) => n.stableNodeId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.every((id) => id === screen || id.startsWith(`${screen}/`))).toBe(true);
    }
  });
});

/** Width and height from a PNG's IHDR chunk, after checking the signature and chunk type. */
function ihdr(png: Uint8Array): { width: number; height: number } {
  expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(String.fromCharCode(...png.subarray(12, 16))).toBe("IHDR");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

async function connected(count = 1): Promise<MockDriver> {
  const driver = new MockDriver({ count });
  for (let i = 1; i <= count; i++) await driver.connect(`mock-${i}`);
  return driver;
}

describe("MockDriver", () => {
  test("observe is device_not_connected when the device was never connected", async () => {
    const driver = new MockDriver();
    const err = await driver.observe("mock-1", { screenshot: true, uiTree: true }, CTX).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverError);
    const e = err as DriverError;
    expect({ driverCode: e.driverCode, data: e.error.data }).toEqual({
      driverCode: "device_not_connected",
      data: {
        code: "device_not_connected",
        message: "device mock-1 is not connected",
        retryable: true,
        details: { deviceId: "mock-1" },
      },
    });
  });

  test("observe gives the app's tree and a 1280×720 PNG when connected", async () => {
    const driver = await connected();
    const raw = await driver.observe("mock-1", { screenshot: true, uiTree: true }, CTX);
    expect(raw.viewport).toEqual({ width: SCREEN.width, height: SCREEN.height, scaleFactor: 1 });
    expect(raw.uiTree).toEqual({
      context: { contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: "login-1" },
      nodes: LOGIN_TREE,
    });
    expect(raw.metadata).toEqual({
      frameSequence: 1,
      foregroundApp: MOCK_APP_ID,
      screen: "login",
      uiStates: { "login/password": ["password"] },
    });
    expect(ihdr(raw.screenshot as Uint8Array)).toEqual({ width: 1280, height: 720 });
  });

  test("observe leaves out what was not asked for", async () => {
    const driver = await connected();
    const raw = await driver.observe("mock-1", { screenshot: false, uiTree: false }, CTX);
    expect(raw).toEqual({
      viewport: { width: 1280, height: 720, scaleFactor: 1 },
      screenshot: null,
      uiTree: null,
      metadata: { frameSequence: 1, foregroundApp: MOCK_APP_ID, screen: "login" },
    });
  });

  test("observe reports uiStates only with a tree and only when a node has a state", async () => {
    const driver = await connected();
    await driver.elements.tapPoint("mock-1", { x: 640, y: 148 }, CTX);
    const metadata = async (uiTree: boolean) =>
      (await driver.observe("mock-1", { screenshot: false, uiTree }, CTX)).metadata;
    const withTree = await metadata(true);
    const without = await metadata(false);
    await driver.elements.typeText("mock-1", "alice", { secret: false }, CTX);
    await driver.elements.tapPoint("mock-1", { x: 640, y: 220 }, CTX);
    await driver.elements.typeText("mock-1", "pw", { secret: true }, CTX);
    await driver.elements.tapPoint("mock-1", { x: 640, y: 292 }, CTX);
    const home = await metadata(true);
    expect([withTree, without, home]).toEqual([
      {
        frameSequence: 1,
        foregroundApp: MOCK_APP_ID,
        screen: "login",
        uiStates: { "login/username": ["focused"], "login/password": ["password"] },
      },
      { frameSequence: 2, foregroundApp: MOCK_APP_ID, screen: "login" },
      { frameSequence: 3, foregroundApp: MOCK_APP_ID, screen: "home" },
    ]);
  });

  test("screenshots are equal for equal states and differ after the focus changes", async () => {
    const driver = await connected();
    const shot = async () =>
      (await driver.observe("mock-1", { screenshot: true, uiTree: false }, CTX)).screenshot as Uint8Array;
    const first = await shot();
    expect(Buffer.from(await shot()).equals(Buffer.from(first))).toBe(true);
    await driver.elements.tapPoint("mock-1", { x: 640, y: 148 }, CTX);
    const focused = await shot();
    expect(Buffer.from(focused).equals(Buffer.from(first))).toBe(false);
    expect(ihdr(focused)).toEqual({ width: 1280, height: 720 });
    await driver.elements.tapPoint("mock-1", { x: 640, y: 220 }, CTX);
    const otherFocus = await shot();
    expect(Buffer.from(otherFocus).equals(Buffer.from(focused))).toBe(false);
    await driver.elements.tapPoint("mock-1", { x: 10, y: 10 }, CTX);
    expect(Buffer.from(await shot()).equals(Buffer.from(first))).toBe(true);
  });

  test("two fresh devices give byte-identical first screenshots", async () => {
    const a = await connected();
    const b = await connected();
    const shotA = (await a.observe("mock-1", { screenshot: true, uiTree: false }, CTX)).screenshot as Uint8Array;
    const shotB = (await b.observe("mock-1", { screenshot: true, uiTree: false }, CTX)).screenshot as Uint8Array;
    expect(Buffer.from(shotA).equals(Buffer.from(shotB))).toBe(true);
  });

  test("the elements primitives change the app like the tap, inputText, inputSecret and back actions do", async () => {
    const driver = await connected(2);
    const viaActions = async (d: string) => {
      await driver.execute(d, { name: "tap", arguments: { x: 640, y: 148 } }, CTX);
      await driver.execute(d, { name: "inputText", arguments: { text: "alice" } }, CTX);
      await driver.execute(d, { name: "tap", arguments: { x: 640, y: 220 } }, CTX);
      await driver.execute(d, { name: "inputSecret", arguments: { secret: "pw" } }, CTX);
      await driver.execute(d, { name: "tap", arguments: { x: 640, y: 292 } }, CTX);
    };
    const viaElements = async (d: string) => {
      await driver.elements.tapPoint(d, { x: 640, y: 148 }, CTX);
      await driver.elements.typeText(d, "alice", { secret: false }, CTX);
      await driver.elements.tapPoint(d, { x: 640, y: 220 }, CTX);
      await driver.elements.typeText(d, "pw", { secret: true }, CTX);
      await driver.elements.tapPoint(d, { x: 640, y: 292 }, CTX);
    };
    await viaActions("mock-1");
    await viaElements("mock-2");
    const see = async (d: string) => {
      const raw = await driver.observe(d, { screenshot: true, uiTree: true }, CTX);
      return {
        tree: raw.uiTree,
        screen: raw.metadata.screen,
        png: Buffer.from(raw.screenshot as Uint8Array).toString("base64"),
      };
    };
    const one = await see("mock-1");
    const two = await see("mock-2");
    expect(one.screen).toBe("home");
    expect(one.tree?.context).toEqual({ contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: "home-2" });
    expect(two).toEqual(one);
  });

  test("clearFocused through the elements primitives empties the focused field", async () => {
    const driver = await connected();
    await driver.elements.tapPoint("mock-1", { x: 640, y: 148 }, CTX);
    await driver.elements.typeText("mock-1", "alice", { secret: false }, CTX);
    await driver.elements.clearFocused("mock-1", CTX);
    await driver.elements.typeText("mock-1", "bob", { secret: false }, CTX);
    const raw = await driver.observe("mock-1", { screenshot: false, uiTree: true }, CTX);
    expect(raw.uiTree?.nodes[2]).toEqual({ ...(LOGIN_TREE[2] as UiNode), value: "bob", text: "bob" });
  });

  test("the elements primitives are device_not_connected when the device is disconnected", async () => {
    const driver = await connected();
    await driver.disconnect("mock-1");
    const err = (await driver.elements
      .tapPoint("mock-1", { x: 640, y: 148 }, CTX)
      .catch((e: unknown) => e)) as DriverError;
    expect({ driverCode: err.driverCode, data: err.error.data }).toEqual({
      driverCode: "device_not_connected",
      data: {
        code: "device_not_connected",
        message: "device mock-1 is not connected",
        retryable: true,
        details: { deviceId: "mock-1" },
      },
    });
  });

  test("each observation advances a running sync by one tick", async () => {
    const driver = await connected();
    for (const [x, y, text, secret] of [
      [640, 148, "alice", false],
      [640, 220, "pw", true],
    ] as const) {
      await driver.elements.tapPoint("mock-1", { x, y }, CTX);
      await driver.elements.typeText("mock-1", text, { secret }, CTX);
    }
    await driver.elements.tapPoint("mock-1", { x: 640, y: 292 }, CTX);
    await driver.elements.tapPoint("mock-1", { x: 640, y: 204 }, CTX);
    const statuses: (string | null | undefined)[] = [];
    for (let i = 0; i < SYNC_OBSERVATIONS + 1; i++) {
      const raw = await driver.observe("mock-1", { screenshot: false, uiTree: true }, CTX);
      statuses.push(raw.uiTree?.nodes.find((n) => n.stableNodeId === "home/status")?.text);
    }
    expect(statuses).toEqual(["Syncing...", "Syncing...", "Synced 3 items", "Synced 3 items"]);
  });
});
