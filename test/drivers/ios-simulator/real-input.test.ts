/**
 * Input on iOS Simulators as they really behave (issue 25, research note F4-F7, F10 and the
 * WebDriverAgent session row of §1.3): AXe's batch taps that re-read the tree, switches that
 * ignore plain coordinate taps, `type` that cannot press Tab and drops a trailing newline, secure
 * fields as the real serializer prints them, expiring WDA sessions and per-action timings.
 * Through the Driver port, over the fake xcrun, AXe and WebDriverAgent.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { IosSimulatorDriver } from "../../../drivers/ios-simulator/ios-simulator-driver.ts";
import type { CallContext } from "../../../src/driver/driver.ts";
import type { DriverError } from "../../../src/driver/driver-error.ts";
import { silentLogger } from "../../../src/protocol/rpc-error.ts";
import {
  type FakeSimulators,
  type FakeSimulatorsOptions,
  startFakeSimulators,
} from "../../support/ios-sim/fake-simulators.ts";

const ctx = (): CallContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 20_000,
  log: silentLogger,
});

async function attached(sims: FakeSimulators, opts: { wda?: boolean } = {}) {
  const driver = new IosSimulatorDriver({
    xcrunPath: join(sims.binDir, "xcrun"),
    axePath: opts.wda ? "/nonexistent/axe" : join(sims.binDir, "axe"),
    ...(opts.wda ? { wdaEndpoint: sims.wda?.url as string } : {}),
    pollMs: 100,
    log: silentLogger,
  });
  await driver.start(() => {}, ctx());
  const udid = sims.device().udid;
  const id = `ios-simulator:${udid}`;
  await driver.connect(id, ctx());
  return { driver, udid, id, [Symbol.asyncDispose]: () => driver.stop() };
}

type A = Awaited<ReturnType<typeof attached>>;
const exec = (a: A, name: string, args: unknown) => a.driver.execute(a.id, { name, arguments: args }, ctx());
const names = async (a: A) => (await a.driver.actions(a.id)).map((d) => d.name);

async function failure(p: Promise<unknown>): Promise<{ code: string; retryable?: boolean; message?: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as DriverError;
    const data = e.error.data as { retryable?: boolean; message?: string; details?: { platformCode?: string } };
    return {
      code: e.driverCode === "platform_error" ? (data.details?.platformCode ?? "") : e.driverCode,
      retryable: data.retryable,
      message: e.error.message,
    };
  }
  return { code: "no error" };
}

const axeCalls = (sims: FakeSimulators, from = 0) =>
  sims
    .readLog("axe")
    .slice(from)
    .map((r) => r.argv);

async function sims(options: FakeSimulatorsOptions = {}) {
  return startFakeSimulators(options);
}

describe("doubleTap (F4)", () => {
  test("the fake's batch taps are a tree read apart when axeTapTreeReadMs is set", async () => {
    await using s = await sims({ axeTapTreeReadMs: 400 });
    const udid = s.device().udid;
    const r = await s.run("axe", [
      "batch",
      "--udid",
      udid,
      "--step",
      "tap -x 201 -y 226",
      "--step",
      "tap -x 201 -y 226",
    ]);
    expect(r.exitCode).toBe(0);
    const [first, second] = s.device().input.filter((e) => e.kind === "tap");
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(400);
  });

  test("on AXe doubleTap is not advertised and is refused with ios_double_tap_unsupported, tapping nothing", async () => {
    await using s = await sims({ axeTapTreeReadMs: 400 });
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(await names(a)).not.toContain("doubleTap");
    const from = s.readLog("axe").length;
    const f = await failure(exec(a, "doubleTap", { x: 300, y: 600 }));
    expect(f).toEqual({
      code: "ios_double_tap_unsupported",
      retryable: false,
      message: expect.stringContaining("300 ms double-tap window"),
    });
    expect(axeCalls(s, from)).toEqual([]);
  });

  test("with WebDriverAgent doubleTap is advertised and lands as one double tap", async () => {
    await using s = await sims({ wda: true });
    await using a = await attached(s, { wda: true });
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect(await names(a)).toContain("doubleTap");
    expect(await exec(a, "doubleTap", { x: 603, y: 678 })).toEqual({ output: { accepted: true, x: 603, y: 678 } });
    expect(s.device().input.at(-1)).toMatchObject({ via: "wda", kind: "double-tap" });
  });
});

/** The "Remember me" switch of the demo login screen: its value and the centre in screenshot pixels (points × 3). */
const REMEMBER = { x: 603, y: 1070 };
async function remember(a: A): Promise<string | null> {
  const o = await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx());
  return o.uiTree?.nodes.find((n) => n.identifier === "login.remember")?.value ?? null;
}

describe("switches (F5)", () => {
  test("the fake AXe before 1.7.0 rejects --tap-style with ArgumentParser's unknown-option error and v1.6.0's usage; 1.8.0 accepts it", async () => {
    await using old = await sims({ axeVersion: "1.6.0" });
    const udid = old.device().udid;
    const r = await old.run("axe", ["tap", "-x", "201", "-y", "356.5", "--tap-style", "physical", "--udid", udid]);
    expect([r.exitCode, r.stderr]).toEqual([
      64,
      "Error: Unknown option '--tap-style'\n" +
        "Usage: axe tap [-x <x>] [-y <y>] [--id <id>] [--label <label>] [--value <value>] [--element-type <element-type>] [--pre-delay <pre-delay>] [--post-delay <post-delay>] [--wait-timeout <wait-timeout>] [--poll-interval <poll-interval>] --udid <udid>\n" +
        "  See 'axe tap --help' for more information.\n",
    ]);
    await using current = await sims();
    expect(
      (
        await current.run("axe", [
          "tap",
          "-x",
          "201",
          "-y",
          "356.5",
          "--tap-style",
          "physical",
          "--udid",
          current.device().udid,
        ])
      ).exitCode,
    ).toBe(0);
  });

  test("the fake ignores a plain coordinate tap on a switch in switchesIgnoreSimulatorTaps mode, and a physical one flips it", async () => {
    await using s = await sims({ switchesIgnoreSimulatorTaps: true });
    const udid = s.device().udid;
    await s.run("axe", ["tap", "-x", "201", "-y", "356.5", "--udid", udid]);
    expect((s.device().ui["com.acme.app"] as { remember: boolean }).remember).toBe(true);
    await s.run("axe", ["tap", "-x", "201", "-y", "356.5", "--tap-style", "physical", "--udid", udid]);
    expect((s.device().ui["com.acme.app"] as { remember: boolean }).remember).toBe(false);
  });

  test("a tap at a switch flips it on AXe 1.8, through --tap-style physical", async () => {
    await using s = await sims({ switchesIgnoreSimulatorTaps: true });
    await using a = await attached(s);
    expect(await remember(a)).toBe("1");
    const from = s.readLog("axe").length;
    await exec(a, "tap", REMEMBER);
    expect(axeCalls(s, from)).toContainEqual([
      "tap",
      "-x",
      "201",
      "-y",
      "356.67",
      "--tap-style",
      "physical",
      "--udid",
      a.udid,
    ]);
    expect(await remember(a)).toBe("0");
  });
});

type Demo = { email: string; password: string; focus: string | null; screen: string };
const demo = (s: FakeSimulators) => s.device().ui["com.acme.app"] as unknown as Demo;
/** The e-mail field's centre in screenshot pixels: (24 + 354 / 2, 221 + 44 / 2) points × 3. */
const EMAIL = { x: 603, y: 729 };

describe("exact text (F6)", () => {
  test("the fake AXe type fails on a tab, and loses a trailing newline and leading empty lines (readLine)", async () => {
    await using s = await sims();
    const udid = s.device().udid;
    await s.run("axe", ["tap", "-x", "201", "-y", "243", "--udid", udid]);
    const tab = await s.run("axe", ["type", "--stdin", "--udid", udid], { stdin: "a\tb\n" });
    expect([tab.exitCode, tab.stderr]).toEqual([1, "Error: No keycode found for character: '\t'\n"]);
    await s.run("axe", ["type", "--stdin", "--udid", udid], { stdin: "\nbob\n" });
    expect([demo(s).email, demo(s).focus]).toEqual(["bob", "email"]);
  });

  test("a trailing newline is pressed as Return (HID 40), so it moves on as typed", async () => {
    await using s = await sims();
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", EMAIL);
    const from = s.readLog("axe").length;
    expect(await exec(a, "inputText", { text: "bob@example.com\n" })).toEqual({
      output: { accepted: true, characters: 16, via: "axe" },
    });
    expect([demo(s).email, demo(s).focus]).toEqual(["bob@example.com", "password"]);
    expect(axeCalls(s, from).filter((c) => c[0] !== "describe-ui")).toEqual([
      ["type", "--stdin", "--udid", a.udid],
      ["key", "40", "--udid", a.udid],
    ]);
  });

  test("a tab is pressed as Tab (HID 43) instead of failing in AXe's type", async () => {
    await using s = await sims();
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", EMAIL);
    expect(await exec(a, "inputText", { text: "bob@example.com\tpw" })).toEqual({
      output: { accepted: true, characters: 18, via: "axe" },
    });
    expect([demo(s).email, demo(s).password]).toEqual(["bob@example.com", "pw"]);
  });

  test("text that iOS rewrites is reported as ios_text_incomplete with what arrived, and the Return after it is not pressed", async () => {
    await using s = await sims({ typingSmartPunctuation: true });
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", EMAIL);
    const from = s.readLog("axe").length;
    const f = await failure(exec(a, "inputText", { text: "it's--ok\n" }));
    expect(f).toEqual({
      code: "ios_text_incomplete",
      retryable: false,
      message: expect.stringContaining('the field login.email shows "it\u2019s\u2014ok"'),
    });
    expect(axeCalls(s, from).map((c) => c[0])).not.toContain("key");
    expect(demo(s).focus).toBe("email");
  });

  test("a protected value is not read back, so iOS's rewriting of it is never quoted", async () => {
    await using s = await sims({ typingSmartPunctuation: true });
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", { x: 603, y: 909 });
    const from = s.readLog("axe").length;
    expect(await exec(a, "inputSecret", { secret: "it's" })).toEqual({ output: { accepted: true } });
    expect(axeCalls(s, from).map((c) => c[0])).toEqual(["type"]);
  });
});

describe("secure fields (F7)", () => {
  test("the fake prints a password field as the real serializer would: type TextField, subrole AXSecureTextField", async () => {
    await using s = await sims();
    const r = await s.run("axe", ["describe-ui", "--udid", s.device().udid]);
    const find = (n: Record<string, unknown>): Record<string, unknown> | null =>
      n.AXUniqueId === "login.password"
        ? n
        : ((n.children as Record<string, unknown>[]).map(find).find((x) => x) ?? null);
    const pw = find((JSON.parse(r.text) as Record<string, unknown>[])[0] as Record<string, unknown>);
    expect([pw?.type, pw?.role, pw?.subrole, pw?.role_description]).toEqual([
      "TextField",
      "AXTextField",
      "AXSecureTextField",
      "secure text field",
    ]);
  });

  test("the driver recognises the secure field from its subrole and keeps its value masked", async () => {
    await using s = await sims();
    await using a = await attached(s);
    await s.run("axe", ["tap", "-x", "201", "-y", "303", "--udid", a.udid]);
    await s.run("axe", ["type", "--stdin", "--udid", a.udid], { stdin: "hunter2" });
    const o = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const pw = o.uiTree?.nodes.find((n) => n.identifier === "login.password");
    expect([pw?.role, pw?.value, pw?.text]).toEqual(["secureTextField", "•••••••", "•••••••"]);
  });

  test("a pasted (non-US) secret is not left on the simulator pasteboard", async () => {
    await using s = await sims();
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", { x: 603, y: 909 });
    expect(await exec(a, "inputSecret", { secret: "pässwörd" })).toEqual({ output: { accepted: true } });
    expect([demo(s).password, s.device().pasteboard]).toEqual(["pässwörd", ""]);
  });

  test("a secret typed by a semantic action (typeText with secret) is neither read back nor left on the pasteboard", async () => {
    await using s = await sims();
    await using a = await attached(s);
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", { x: 603, y: 909 });
    const from = s.readLog("axe").length;
    await a.driver.elements.typeText(a.id, "pässwörd", { secret: true }, ctx());
    expect([demo(s).password, s.device().pasteboard]).toEqual(["pässwörd", ""]);
    expect(axeCalls(s, from).map((c) => c[0])).toEqual(["key-combo"]);
  });
});

describe("WebDriverAgent sessions (§1.3)", () => {
  test("the fake's expired session answers WDA's 404 invalid session id with sessionId null", async () => {
    await using s = await sims({ wda: true });
    const url = s.wda?.url as string;
    const created = (await (
      await fetch(`${url}/session`, { method: "POST", body: JSON.stringify({ capabilities: { alwaysMatch: {} } }) })
    ).json()) as { sessionId: string };
    s.wda?.expireSession();
    const r = await fetch(`${url}/session/${created.sessionId}/wda/tap`, {
      method: "POST",
      body: JSON.stringify({ x: 1, y: 1 }),
    });
    expect([r.status, await r.json()]).toEqual([
      404,
      { value: { error: "invalid session id", message: "Session does not exist", traceback: "" }, sessionId: null },
    ]);
  });

  test("an expired session is re-created once and the tap goes through", async () => {
    await using s = await sims({ wda: true });
    await using a = await attached(s, { wda: true });
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    await exec(a, "tap", EMAIL);
    s.wda?.expireSession();
    const taps = s.device().input.length;
    expect(await exec(a, "tap", EMAIL)).toEqual({ output: { accepted: true, x: 603, y: 729 } });
    expect(s.device().input.length).toBe(taps + 1);
    expect(s.wda?.sessionId()).not.toBeNull();
  });

  test("a session that dies again at once is a typed ios_wda_session_lost, not a raw failure", async () => {
    await using s = await sims({ wda: { sessionsDieAtOnce: true } });
    await using a = await attached(s, { wda: true });
    await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const f = await failure(exec(a, "tap", EMAIL));
    expect(f).toEqual({
      code: "ios_wda_session_lost",
      retryable: false,
      message: expect.stringContaining("another client"),
    });
    expect(s.readLog("wda").filter((r) => r.argv.join(" ") === "POST /session").length).toBe(2);
  });
});

describe("per-action timings (F10)", () => {
  test("the observation after an action carries its tree-before, tool and tree-after times", async () => {
    await using s = await sims({ axeTapTreeReadMs: 300 });
    await using a = await attached(s);
    s.setFault({ tool: "axe", command: "describe-ui", mode: "slow", ms: 200 });
    const before = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect((before.metadata.ios as Record<string, unknown>).timings).toBeUndefined();
    await exec(a, "tap", { x: 603, y: 600 });
    const after = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    const t = (
      after.metadata.ios as { timings: { action: string; treeBeforeMs: number; toolMs: number; treeAfterMs: number } }
    ).timings;
    expect(t.action).toBe("tap");
    expect([t.treeBeforeMs >= 200, t.toolMs >= 300, t.treeAfterMs >= 200]).toEqual([true, true, true]);
    // Reported once: the next observation is the next action's "before".
    expect((await a.driver.observe(a.id, { screenshot: false, uiTree: true }, ctx())).metadata.ios).not.toHaveProperty(
      "timings",
    );
  });

  test("one AXe input call may take its own tree read and the HID broker's readiness wait", async () => {
    const { AXE_INPUT_CEILING_MS, DESCRIBE_UI_CEILING_MS, HID_BROKER_READY_MS } = await import(
      "../../../drivers/ios-simulator/action-timings.ts"
    );
    expect(AXE_INPUT_CEILING_MS).toBeGreaterThan(DESCRIBE_UI_CEILING_MS + HID_BROKER_READY_MS);
  });
});
