import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodePng, pngSize } from "./png-pixels.ts";
import { startFakeSimulators } from "./fake-simulators.ts";

const FIXTURES = join(import.meta.dir, "../../../fixtures/platform/ios/wda");
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
const U = "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F";

type El = Record<string, unknown> & { children?: El[] };
const flat = (n: El): El[] => [n, ...(n.children ?? []).flatMap(flat)];

async function call(base: string, method: string, path: string, body?: unknown) {
  const r = await fetch(base + path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  return { status: r.status, json: (await r.json()) as { value: any; sessionId: string | null } };
}

describe("fake WebDriverAgent session-less routes", () => {
  test("GET /status is research's sample for an iPhone 17 Pro on iOS 26.5; /wda/screen gives points and scale", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const base = sim.wda?.url as string;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await call(base, "GET", "/status")).toEqual({ status: 200, json: fixture("status.json") });
    expect(await call(base, "GET", "/wda/screen")).toEqual({ status: 200, json: fixture("screen.json") });
    expect((await call(base, "GET", "/wda/device/info")).json.value).toMatchObject({
      name: "iPhone 17 Pro",
      isSimulator: true,
      userInterfaceStyle: "light",
    });
  });

  test("GET /source?format=json has Sample C's nodes, field for field", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const base = sim.wda?.url as string;
    const { json: s } = await call(base, "POST", "/session", { capabilities: { alwaysMatch: {} } });
    const sid = s.sessionId as string;
    const email = (
      await call(base, "POST", `/session/${sid}/element`, { using: "accessibility id", value: "login.email" })
    ).json.value.ELEMENT;
    await call(base, "POST", `/session/${sid}/element/${email}/click`);
    const source = (await call(base, "GET", "/source?format=json")).json;
    expect(source.sessionId).toBe(sid);
    const sample = fixture("source-login.json").value as El;
    const ours = flat(source.value);
    const same = (a: El) => ours.find((b) => b.type === a.type && b.name === a.name);
    for (const node of flat(sample)) {
      const { children: _a, ...want } = node;
      const { children: _b, ...got } = same(node) ?? {};
      expect(got).toEqual(want);
    }
    expect(ours.filter((n) => n.type === "Window").length).toBe(1);
  });

  test("GET /screenshot is a base64 PNG at native pixels", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const png = Buffer.from((await call(sim.wda?.url as string, "GET", "/screenshot")).json.value, "base64");
    expect(pngSize(png)).toEqual({ width: 1206, height: 2622 });
    expect(decodePng(png).width).toBe(1206);
  });
});

describe("fake WebDriverAgent sessions and actions", () => {
  test("a new session kills the active one; the old id is then an invalid session", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: { existingSession: true } });
    const wda = sim.wda as NonNullable<typeof sim.wda>;
    const users = wda.sessionId() as string;
    expect((await call(wda.url, "GET", "/status")).json.sessionId).toBe(users);
    const ours = (
      await call(wda.url, "POST", "/session", { capabilities: { alwaysMatch: { bundleId: "com.acme.app" } } })
    ).json.sessionId as string;
    expect(wda.killedSessions).toEqual([users]);
    expect(await call(wda.url, "POST", `/session/${users}/wda/tap`, { x: 1, y: 1 })).toEqual({
      status: 404,
      json: {
        value: { error: "invalid session id", message: "Session does not exist", traceback: "" },
        sessionId: ours,
      },
    });
    expect((await call(wda.url, "DELETE", `/session/${ours}`)).status).toBe(200);
    expect(wda.sessionId()).toBeNull();
  });

  test("tap, find, value and clear drive the same login screen as AXe", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const base = sim.wda?.url as string;
    const sid = (await call(base, "POST", "/session", {})).json.sessionId as string;
    await call(base, "POST", `/session/${sid}/wda/tap`, { x: 201, y: 243 });
    await call(base, "POST", `/session/${sid}/wda/keys`, { value: ["zoë@example.com"] });
    const pw = (
      await call(base, "POST", `/session/${sid}/element`, {
        using: "predicate string",
        value: "type == 'XCUIElementTypeSecureTextField'",
      })
    ).json.value;
    expect(Object.keys(pw)).toEqual(["ELEMENT", "element-6066-11e4-a52e-4f735466cecf"]);
    await call(base, "POST", `/session/${sid}/element/${pw.ELEMENT}/value`, { value: ["wrong"] });
    await call(base, "POST", `/session/${sid}/element/${pw.ELEMENT}/clear`);
    await call(base, "POST", `/session/${sid}/element/${pw.ELEMENT}/value`, { text: "pässwörd" });
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ email: "zoë@example.com", password: "pässwörd" });
    const submit = (
      await call(base, "POST", `/session/${sid}/element`, { using: "accessibility id", value: "login.submit" })
    ).json.value.ELEMENT;
    expect((await call(base, "GET", `/session/${sid}/element/${submit}/enabled`)).json.value).toBe(true);
    await call(base, "POST", `/session/${sid}/element/${submit}/click`);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ screen: "home", user: "zoë@example.com" });
    expect(await call(base, "GET", `/session/${sid}/element/${submit}/rect`)).toMatchObject({
      status: 404,
      json: { value: { error: "stale element reference" } },
    });
    expect(sim.device(U).input.map((e) => [e.via, e.kind, e.target ?? null])).toEqual([
      ["wda", "tap", "login.email"],
      ["wda", "text", null],
      ["wda", "tap", "login.password"],
      ["wda", "text", null],
      ["wda", "text", null],
      ["wda", "tap", "login.submit"],
    ]);
  });

  test("find errors, unsupported buttons and unknown routes answer in WDA's error shape", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const base = sim.wda?.url as string;
    const sid = (await call(base, "POST", "/session", {})).json.sessionId as string;
    expect(await call(base, "POST", `/session/${sid}/element`, { using: "accessibility id", value: "nope" })).toEqual({
      status: 404,
      json: {
        value: {
          error: "no such element",
          message: "unable to find an element using 'accessibility id', value 'nope'",
          traceback: "",
        },
        sessionId: sid,
      },
    });
    const button = await call(base, "POST", `/session/${sid}/wda/pressButton`, { name: "volumeup" });
    expect(button).toEqual({ status: 500, json: { ...fixture("error-unsupported-button.json"), sessionId: sid } });
    expect((await call(base, "POST", `/session/${sid}/wda/tap/0`, { x: 1, y: 1 })).json.value.error).toBe(
      "unknown command",
    );
    expect((await call(base, "POST", "/wda/tap", { x: 1, y: 1 })).status).toBe(404);
  });

  test("the legacy tap route serves pre-6.0 clients only; homescreen needs no session", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: { legacyTapRoute: true } });
    const base = sim.wda?.url as string;
    const sid = (await call(base, "POST", "/session", {})).json.sessionId as string;
    expect((await call(base, "POST", `/session/${sid}/wda/tap`, { x: 201, y: 356 })).status).toBe(404);
    expect((await call(base, "POST", `/session/${sid}/wda/tap/0`, { x: 201, y: 356 })).status).toBe(200);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ remember: false });
    expect((await call(base, "POST", "/wda/homescreen")).status).toBe(200);
    expect(sim.device(U).foreground).toBeNull();
  });

  test("W3C actions become a tap, a long press or a drag", async () => {
    await using sim = await startFakeSimulators({ tools: [], wda: true });
    const base = sim.wda?.url as string;
    const sid = (await call(base, "POST", "/session", {})).json.sessionId as string;
    const pointer = (actions: unknown[]) =>
      call(base, "POST", `/session/${sid}/actions`, {
        actions: [{ type: "pointer", id: "finger1", parameters: { pointerType: "touch" }, actions }],
      });
    await pointer([
      { type: "pointerMove", duration: 0, x: 201, y: 356 },
      { type: "pointerDown", button: 0 },
      { type: "pause", duration: 50 },
      { type: "pointerUp", button: 0 },
    ]);
    await pointer([
      { type: "pointerMove", duration: 0, x: 201, y: 356 },
      { type: "pointerDown", button: 0 },
      { type: "pause", duration: 800 },
      { type: "pointerUp", button: 0 },
    ]);
    await pointer([
      { type: "pointerMove", x: 200, y: 500 },
      { type: "pointerDown" },
      { type: "pause", duration: 100 },
      { type: "pointerMove", x: 200, y: 300 },
      { type: "pointerUp" },
    ]);
    expect(sim.device(U).input.map((e) => [e.kind, e.target])).toEqual([
      ["tap", "login.remember"],
      ["long-press", "login.remember"],
      ["swipe", null],
    ]);
    expect(sim.readLog("wda").map((r) => r.argv[1])).toEqual([
      "/session",
      `/session/${sid}/actions`,
      `/session/${sid}/actions`,
      `/session/${sid}/actions`,
    ]);
  });
});
