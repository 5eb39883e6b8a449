import { afterAll, beforeAll, expect, test } from "bun:test";
import { scanXml } from "../../../drivers/android/parse/xml-scanner.ts";
import { type AdbServer, freePort, startAdbServer } from "./adb-server.ts";
import { DEMO_PACKAGE, demoScenario } from "./demo-scenario.ts";
import { type FakeDevice, startFakeDevice } from "./fake-device.ts";
import type { FakePhoneOptions } from "./fake-phone.ts";
import { installApk } from "./packages.ts";
import { UIA2_ROUTES } from "./uia2-routes.ts";
import { PINNED_APKS, UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "./apk-catalog.ts";
import { CRASH_OUTPUT, UIA2_INSTRUMENTATION, UIA2_TEST_CLASS } from "./uia2-server.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

/** The command line of appium-uiautomator2-driver's startInstrumentationProcess (no animation option set). */
const INSTRUMENT = ["am", "instrument", "-w", "-e", "disableAnalytics", "true", UIA2_INSTRUMENTATION];
const START_LINE = `\n${UIA2_TEST_CLASS}:`;

async function device(options: FakePhoneOptions = {}, install = true): Promise<FakeDevice> {
  const dev = await startFakeDevice(server, { scenario: demoScenario, ...options });
  // As `pm install` of the two APKs of appium-uiautomator2-server@10.6.6 leaves them (packages.ts).
  if (install)
    for (const apk of Object.values(PINNED_APKS))
      if (apk.package === UIA2_SERVER_PACKAGE || apk.package === UIA2_TEST_PACKAGE) installApk(dev.phone, apk, false);
  return dev;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await Bun.sleep(10);
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

/** `adb forward tcp:<free> tcp:6790`; the base URL of the forwarded port. */
async function forward(dev: FakeDevice): Promise<string> {
  const port = await freePort();
  const r = await server.adb(["-s", dev.serial, "forward", `tcp:${port}`, "tcp:6790"]);
  expect(r.exitCode).toBe(0);
  return `http://127.0.0.1:${port}`;
}

/** Starts `am instrument` over `adb shell` and waits for port 6790; `done` gives its output and exit code. */
async function instrument(dev: FakeDevice) {
  const proc = server.spawnAdb(["-s", dev.serial, "shell", ...INSTRUMENT], { timeoutMs: 30_000 });
  const output = new Response(proc.stdout).text();
  const done = async () => ({ out: await output, code: await proc.exited });
  await until(() => dev.phone.uia2.running, "the server to listen");
  return { done, base: await forward(dev) };
}

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json; charset=utf-8" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as { value: any; sessionId: string | null } };
}

async function session(base: string): Promise<string> {
  const r = await call(base, "POST", "/session", { capabilities: { firstMatch: [{}], alwaysMatch: {} } });
  expect(r.status).toBe(200);
  expect(r.json.value.sessionId).toBe(r.json.sessionId as string);
  return r.json.sessionId as string;
}

/** The page source's elements in document order: tag and attributes. */
function elements(xml: string): { tag: string; attrs: ReadonlyMap<string, string> }[] {
  const out: { tag: string; attrs: ReadonlyMap<string, string> }[] = [];
  scanXml(xml, 0, { open: (tag, attrs) => void out.push({ tag, attrs }), close: () => {} });
  return out;
}

describeWithAdb("simulated UiAutomator2 server", () => {
  test("am instrument without the test package fails as ActivityManagerService reports it", async () => {
    await using dev = await device({}, false);
    const r = await server.adb(["-s", dev.serial, "shell", ...INSTRUMENT]);
    expect(r.stdout).toBe(
      `INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{${UIA2_INSTRUMENTATION}}\nINSTRUMENTATION_STATUS_CODE: -1\n`,
    );
    expect(r.stderr).toBe(`android.util.AndroidException: INSTRUMENTATION_FAILED: ${UIA2_INSTRUMENTATION}\n`);
    expect(r.exitCode).toBe(1);
    expect(dev.phone.uia2.running).toBe(false);
  });

  test("a forwarded connection before the server runs is closed, as adbd closes a refused tcp: open", async () => {
    await using dev = await device();
    const base = await forward(dev);
    await expect(fetch(`${base}/status`)).rejects.toThrow();
  });

  test("status, a session, the page source, a tap and typing, then DELETE ends am instrument with OK", async () => {
    await using dev = await device();
    const { done, base } = await instrument(dev);
    const status = await fetch(`${base}/status`);
    expect(status.headers.get("content-type")).toBe("application/json");
    expect(await status.text()).toBe(
      '{"value":{"ready":true,"message":"UiAutomator2 Server is ready to accept commands","build":{"version":"10.6.6","versionCode":278}},"sessionId":"None"}',
    );
    const id = await session(base);

    const source = await call(base, "GET", `/session/${id}/source`);
    const xml = source.json.value as string;
    expect(xml.startsWith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<hierarchy index=\"0\"")).toBe(
      true,
    );
    const els = elements(xml);
    expect(els[0]?.tag).toBe("hierarchy");
    expect(Object.fromEntries(els[0]?.attrs ?? [])).toEqual({
      index: "0",
      class: "hierarchy",
      rotation: "0",
      width: "1080",
      height: "2400",
    });
    const signIn = els.find((e) => e.attrs.get("resource-id") === `${DEMO_PACKAGE}:id/sign_in`);
    expect(signIn?.tag).toBe("android.widget.Button");
    expect([...(signIn?.attrs.keys() ?? [])].slice(0, 4)).toEqual(["index", "package", "class", "text"]);
    expect(signIn?.attrs.get("displayed")).toBe("true");
    const username = els.find((e) => e.attrs.get("resource-id") === `${DEMO_PACKAGE}:id/username`);
    const [x1, y1, x2, y2] = (username?.attrs.get("bounds")?.match(/\d+/g) ?? []).map(Number) as number[];

    // A tap focuses the field; /keys types into it without an element id; the scenario sees both.
    const tap = await call(base, "POST", `/session/${id}/appium/gestures/click`, {
      offset: { x: ((x1 as number) + (x2 as number)) / 2, y: ((y1 as number) + (y2 as number)) / 2 },
    });
    expect(tap).toEqual({ status: 200, json: { value: null, sessionId: id } });
    expect((await call(base, "POST", `/session/${id}/keys`, { text: "alice smith" })).status).toBe(200);
    expect(dev.phone.runtime().state.username).toBe("alice smith");
    expect(dev.phone.inputLog).toEqual([
      {
        kind: "tap",
        x: 540,
        y: Math.trunc(((y1 as number) + (y2 as number)) / 2),
        target: `${DEMO_PACKAGE}:id/username`,
      },
      { kind: "text", text: "alice smith", target: "username" },
    ]);
    // The typed text is recorded where `input text` records it, and nowhere else.
    const elsewhere = JSON.stringify([
      dev.phone.uia2.requests,
      dev.phone.commandLog,
      dev.phone.serviceLog,
      dev.phone.appLog,
    ]);
    expect(elsewhere).not.toContain("alice");

    const del = await call(base, "DELETE", `/session/${id}`);
    expect(del).toEqual({ status: 200, json: { value: null, sessionId: id } });
    const { out, code } = await done();
    expect(out).toMatch(
      /^\nio\.appium\.uiautomator2\.server\.test\.AppiumUiAutomator2Server:\.\n\nTime: [\d.,]+\n\nOK \(1 test\)\n\n\n$/,
    );
    expect(code).toBe(0);
    expect(dev.phone.uia2.running).toBe(false);
    expect(dev.phone.processes.byName(UIA2_SERVER_PACKAGE)).toEqual([]);
  });

  test("a swipe through W3C actions scrolls the list; a press in place is a tap", async () => {
    await using dev = await device();
    dev.phone.runtime(DEMO_PACKAGE).context().goto("home", { replace: true });
    dev.phone.runtime(DEMO_PACKAGE).state.user = "bob";
    const { base } = await instrument(dev);
    const id = await session(base);
    const finger = (actions: object[]) => ({
      actions: [{ type: "pointer", id: "finger1", parameters: { pointerType: "touch" }, actions }],
    });
    const started = Date.now();
    const swipe = await call(
      base,
      "POST",
      `/session/${id}/actions`,
      finger([
        { type: "pointerMove", duration: 0, x: 540, y: 1200 },
        { type: "pointerDown", button: 0 },
        { type: "pointerMove", duration: 250, x: 540, y: 880 },
        { type: "pointerUp", button: 0 },
      ]),
    );
    expect(swipe.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(dev.phone.runtime().state.scroll).toBe(2);
    expect(dev.phone.inputLog.at(-1)).toEqual({
      kind: "swipe",
      x1: 540,
      y1: 1200,
      x2: 540,
      y2: 880,
      durationMs: 250,
      target: `${DEMO_PACKAGE}:id/list`,
    });
    const counter = elements((await call(base, "GET", `/session/${id}/source`)).json.value).find(
      (e) => e.attrs.get("resource-id") === `${DEMO_PACKAGE}:id/counter`,
    );
    const [, cy1, , cy2] = (counter?.attrs.get("bounds")?.match(/\d+/g) ?? []).map(Number) as number[];
    const cy = Math.trunc(((cy1 as number) + (cy2 as number)) / 2);
    const press = finger([
      { type: "pointerMove", duration: 0, x: 300, y: cy },
      { type: "pointerDown", button: 0 },
      { type: "pause", duration: 50 },
      { type: "pointerUp", button: 0 },
    ]);
    expect((await call(base, "POST", `/session/${id}/actions`, press)).status).toBe(200);
    expect(dev.phone.runtime().state.count).toBe(1);
    expect((await call(base, "POST", `/session/${id}/appium/device/press_keycode`, { keycode: 4 })).status).toBe(200);
    expect(dev.phone.inputLog.at(-1)).toEqual({ kind: "keyevent", keyCode: 4, longpress: false, target: null });
  });

  test("an unknown session, an unknown route and a missing focus answer as the server does", async () => {
    await using dev = await device();
    const { base } = await instrument(dev);
    expect(await call(base, "GET", "/session/nope/source")).toEqual({
      status: 404,
      json: {
        value: {
          error: "invalid session id",
          message: "The session identified by nope is not known",
          stacktrace:
            "io.appium.uiautomator2.common.exceptions.NoSuchDriverException: The session identified by nope is not known",
        },
        sessionId: "nope",
      },
    });
    const unknown = await call(base, "GET", "/no/such/route");
    expect([unknown.status, unknown.json.value.error, unknown.json.sessionId]).toEqual([404, "unknown command", null]);
    const id = await session(base);
    const click = `/session/${id}/appium/gestures/click`;
    expect((await call(base, "POST", click, { offset: { x: 1 } })).json.value.message).toBe(
      "java.lang.IllegalArgumentException: PointModel: The mandatory field 'y' is not present in JSON",
    );
    const noOffset = await call(base, "POST", click, {});
    expect([noOffset.status, noOffset.json.value.error, noOffset.json.value.message]).toEqual([
      400,
      "invalid argument",
      "java.lang.IllegalArgumentException: Click offset coordinates must be provided if element is not set",
    ]);
    const keys = await call(base, "POST", `/session/${id}/keys`, { text: "x" });
    expect([keys.status, keys.json.value.error]).toEqual([404, "no such element"]);
    const settings = await call(base, "POST", `/session/${id}/appium/settings`, {
      settings: { waitForIdleTimeout: 0 },
    });
    expect(settings.status).toBe(200);
    expect((await call(base, "GET", `/session/${id}/appium/settings`)).json.value.waitForIdleTimeout).toBe(0);
    const shot = await call(base, "GET", `/session/${id}/screenshot`);
    expect(
      Buffer.from(shot.json.value as string, "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
  });

  test("while it runs `uiautomator dump` is refused, and works again once it has stopped", async () => {
    await using dev = await device();
    await instrument(dev);
    const refused = await server.adb(["-s", dev.serial, "shell", "uiautomator", "dump"]);
    expect(refused.stderr).toContain("already registered!");
    expect(refused.exitCode).toBe(1);
    expect((await server.adb(["-s", dev.serial, "shell", "am", "force-stop", UIA2_SERVER_PACKAGE])).exitCode).toBe(0);
    expect(dev.phone.uia2.running).toBe(false);
    const ok = await server.adb(["-s", dev.serial, "shell", "uiautomator", "dump"]);
    expect(ok.stdout).toBe("UI hierchary dumped to: /sdcard/window_dump.xml\n");
  });

  test("a crash mid-call closes the connection and am instrument reports the crash", async () => {
    await using dev = await device({ uia2: { latencyMs: { source: 5_000 } } });
    const { done, base } = await instrument(dev);
    const id = await session(base);
    const pending = fetch(`${base}/session/${id}/source`);
    await until(() => dev.phone.uia2.requests.some((r) => r.path.endsWith("/source")), "the source request");
    const started = Date.now();
    dev.phone.uia2.crash();
    await expect(pending).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await done()).toEqual({ out: `${START_LINE}${CRASH_OUTPUT}`, code: 0 });
    await expect(fetch(`${base}/status`)).rejects.toThrow();
  });

  test("killing the server's process ends it; refuseStart never opens the port", async () => {
    await using dev = await device();
    const { done } = await instrument(dev);
    const pid = dev.phone.uia2.pid as number;
    expect((await server.adb(["-s", dev.serial, "shell", "ps", "-A"])).stdout).toContain(` ${UIA2_SERVER_PACKAGE}`);
    expect((await server.adb(["-s", dev.serial, "shell", "kill", String(pid)])).exitCode).toBe(0);
    expect(await done()).toEqual({ out: `${START_LINE}${CRASH_OUTPUT}`, code: 0 });

    dev.phone.uia2.refuseStart = true;
    const r = await server.adb(["-s", dev.serial, "shell", ...INSTRUMENT]);
    expect([r.stdout, r.exitCode]).toEqual([`${START_LINE}${CRASH_OUTPUT}`, 0]);
    expect(dev.phone.uia2.running).toBe(false);
  });

  test("long press, double tap, active element, clear and replace act on the scenario", async () => {
    await using dev = await device();
    const { base } = await instrument(dev);
    const id = await session(base);
    const longPress = await call(base, "POST", `/session/${id}/appium/gestures/long_click`, {
      offset: { x: 540, y: 440 },
      duration: 120,
    });
    expect(longPress.status).toBe(200);
    // As the shell long-presses: `input swipe x y x y ms`; the field under it is not tapped.
    expect(dev.phone.inputLog).toEqual([
      { kind: "swipe", x1: 540, y1: 440, x2: 540, y2: 440, durationMs: 120, target: null },
    ]);
    await call(base, "POST", `/session/${id}/appium/gestures/double_click`, { offset: { x: 540, y: 440 } });
    expect(dev.phone.inputLog.slice(1).map((r) => r.kind)).toEqual(["tap", "tap"]);
    await call(base, "POST", `/session/${id}/keys`, { text: "abc" });
    await call(base, "POST", `/session/${id}/keys`, { text: "def" });
    expect(dev.phone.runtime().state.username).toBe("abcdef");
    await call(base, "POST", `/session/${id}/keys`, { text: "xyz", replace: true });
    expect(dev.phone.runtime().state.username).toBe("xyz");
    const active = await call(base, "GET", `/session/${id}/element/active`);
    const el = active.json.value.ELEMENT as string;
    expect(active.json.value).toEqual({ ELEMENT: el, "element-6066-11e4-a52f-4f735466cecf": el });
    expect((await call(base, "POST", `/session/${id}/element/${el}/clear`)).status).toBe(200);
    expect(dev.phone.runtime().state.username).toBe("");
    const stale = await call(base, "POST", `/session/${id}/element/nope/clear`);
    expect([stale.status, stale.json.value.error]).toEqual([404, "no such element"]);
  });

  test("a slow start: the forwarded port is closed until the server listens", async () => {
    await using dev = await device({ uia2: { startupMs: 400 } });
    const proc = server.spawnAdb(["-s", dev.serial, "shell", ...INSTRUMENT], { timeoutMs: 30_000 });
    const base = await forward(dev);
    await until(() => dev.phone.processes.byName(UIA2_SERVER_PACKAGE).length === 1, "the instrumented process");
    await expect(fetch(`${base}/status`)).rejects.toThrow();
    await until(() => dev.phone.uia2.running, "the server to listen");
    expect((await fetch(`${base}/status`)).status).toBe(200);
    dev.phone.uia2.crash();
    expect(await proc.exited).toBe(0);
  });

  test("the latency model delays each request by its operation's figure", async () => {
    await using dev = await device({ uia2: { latencyMs: { tap: 200 } } });
    const { base } = await instrument(dev);
    const id = await session(base);
    const started = Date.now();
    await call(base, "POST", `/session/${id}/appium/gestures/click`, { offset: { x: 1, y: 1 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(UIA2_ROUTES).toContain("POST /session/:sessionId/appium/gestures/click");
  });
});
