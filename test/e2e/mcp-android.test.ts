/**
 * The MCP server against a simulated Android phone (1080x2400) behind the real adb server: every
 * tool Android supports, through the official SDK client over Streamable HTTP (a `serve` daemon on
 * TCP) and over stdio (`devicerail mcp`), with the effect read back from the fake phone.
 */
import { expect, test } from "bun:test";
import { lstatSync, readFileSync } from "node:fs";
import { canaryForms, filesUnder, leaksIn, processArgvs } from "../support/canary.ts";
import {
  adbServerForFile,
  DEMO_PACKAGE,
  type DemoState,
  type FakeDevice,
  type Scenario,
  type UiNode,
  demoScenario,
  describeWithAdb,
  screenRoot,
  startFakeDevice,
} from "../support/adb-device/index.ts";
import { type DaemonProcess, spawnDaemon, tempDataDir } from "../support/daemon.ts";
import {
  type McpPeer,
  type ToolResult,
  call,
  daemonBase,
  errorOf,
  httpPeer,
  imageOf,
  ownerAuth,
  refIn,
  stdioPeer,
  textOf,
} from "../support/mcp-client.ts";
import { pollUntil, until } from "../support/wait.ts";

const { server, androidEnv } = adbServerForFile();
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const LAUNCHER = "com.android.launcher3";
const BROWSER = "com.android.chrome";
/** 1 MB: no tool result may exceed it. */
const RESULT_LIMIT = 1_048_576;
/** The spec's defaults: long edge 1568 px, 400 KB; 1080x2400 scales by 1568/2400 to 706x1568. */
const MAX_EDGE = 1568;
const MAX_BYTES = 400_000;
// Printable ASCII (all an Android secret may hold) with characters that JSON and the shell treat specially.
const CANARY = `pw-"c4n4ry'$(id)\`;x`;

interface TcpDaemon extends AsyncDisposable {
  proc: DaemonProcess;
  base: string;
  dataDir: string;
}

/** `devicerail serve --listen 127.0.0.1:0` seeing the adb server's phones; SIGTERM on dispose. */
async function tcpDaemon(env: Record<string, string> = {}): Promise<TcpDaemon> {
  const proc = spawnDaemon({ env: { ...androidEnv(), ...env }, args: ["serve", "--listen", "127.0.0.1:0"] });
  const line = await proc.nextLine(15_000);
  if (line === null) throw new Error(`the daemon exited without listening; stderr:\n${proc.stderr}`);
  const { port } = (JSON.parse(line) as { listening: { port: number } }).listening;
  return {
    proc,
    base: `http://127.0.0.1:${port}`,
    dataDir: proc.dataDir,
    async [Symbol.asyncDispose]() {
      if (proc.proc.exitCode === null) proc.proc.kill("SIGTERM");
      const t = setTimeout(() => proc.proc.kill("SIGKILL"), 5_000);
      await proc.exited;
      clearTimeout(t);
      await proc[Symbol.asyncDispose]();
    },
  };
}

const demoPhone = () =>
  startFakeDevice(server(), { scenario: demoScenario, props: { "ro.product.model": "Pixel_Test" } });
const deviceIdOf = (phone: FakeDevice) => `android-adb:${phone.serial}`;
const demo = (phone: FakeDevice) =>
  phone.phone.runtime(DEMO_PACKAGE) as unknown as { screen: string; state: DemoState; focusedField: string | null };

/** A tool call that must succeed; a failure throws with the tool's own text as evidence. */
async function ok(peer: McpPeer, tool: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const r = await call(peer, tool, args);
  if (r.isError) throw new Error(`${tool} ${JSON.stringify(args)} failed:\n${textOf(r)}`);
  return r;
}

/**
 * An action result: a first line naming the device, "ok", the time taken, the action and the Session
 * (the spec's example: `tap at 700,120 on mock:device-1: ok in 3 ms (action <uuid>, session <uuid>)`),
 * with the same ids in structuredContent.
 */
function expectAction(r: ToolResult, deviceId: string, sessionId: string): void {
  const text = textOf(r);
  const actionId = r.structuredContent?.actionId as string;
  expect(r.structuredContent).toEqual(
    expect.objectContaining({ deviceId, sessionId, actionId: expect.stringMatching(new RegExp(`^${UUID}$`)) }),
  );
  // A tool that runs two actions (type_text into a selector: a tap, then the text) names each; actionId is the last.
  expect(text.split("\n")[0]).toMatch(
    new RegExp(
      `^.+ on ${deviceId.replaceAll(".", "\\.")}: ok\\b.*\\b\\d+ ms\\b.*\\baction ${UUID}\\b.*\\bsession ${sessionId}\\b`,
    ),
  );
  expect(text).toContain(`action ${actionId}`);
}

/** The tree part of a ui_tree / device_observe text: its `@eN` lines. */
const treeLines = (text: string) => text.split("\n").filter((l) => /^@e\d+ /.test(l));

/** Width and height from a JPEG's start-of-frame segment. */
function jpegSize(b: Uint8Array): { width: number; height: number } {
  if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error("not a JPEG: no SOI marker");
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) throw new Error(`JPEG: no marker at ${i}`);
    const marker = b[i + 1] as number;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = ((b[i + 2] as number) << 8) | (b[i + 3] as number);
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
      return {
        height: ((b[i + 5] as number) << 8) | (b[i + 6] as number),
        width: ((b[i + 7] as number) << 8) | (b[i + 8] as number),
      };
    i += 2 + length;
  }
  throw new Error("JPEG: no SOFn segment");
}

/**
 * Checks an observation-like result's image against its header and metadata; returns what was
 * measured. The header states the screen (`screen: 1080x2400 …`) and the image with its scale
 * (`image: 706x1568 … scale 0.6537 …`; the spec words it `screen: WxH px; image: wxh (scale s)`).
 */
function checkImage(r: ToolResult, maxBytes: number) {
  const image = imageOf(r);
  const text = textOf(r);
  if (!image) throw new Error(`no image content:\n${text.slice(0, 1_000)}`);
  const size = jpegSize(image.bytes);
  const header = /\bimage: (\d+)x(\d+)\b.*\bscale ([\d.]+)/m.exec(text);
  if (!header) throw new Error(`no image line with a scale in:\n${text.slice(0, 1_000)}`);
  const scale = Number(header[3]);
  expect(text).toMatch(/^screen: 1080x2400\b/m);
  expect(image.mimeType).toBe("image/jpeg");
  expect([Number(header[1]), Number(header[2])]).toEqual([size.width, size.height]);
  expect(r.structuredContent.image).toEqual(
    expect.objectContaining({
      width: size.width,
      height: size.height,
      scale,
      bytes: image.bytes.length,
      mimeType: "image/jpeg",
    }),
  );
  expect(Math.abs(scale - size.width / 1080)).toBeLessThan(0.002);
  expect(Math.max(size.width, size.height)).toBeLessThanOrEqual(MAX_EDGE);
  expect(image.bytes.length).toBeLessThanOrEqual(maxBytes);
  return { ...size, bytes: image.bytes.length, scale };
}

/** No result of `peer` over 1 MB. */
function expectBounded(peer: McpPeer): void {
  const over = peer.results.map((r) => Buffer.byteLength(JSON.stringify(r))).filter((n) => n > RESULT_LIMIT);
  expect(over).toEqual([]);
}

/** The fake phone's uiautomator dumps so far (each observation runs one). */
const dumps = (phone: FakeDevice) => phone.phone.commandLog.filter((c) => c.argv[0] === "uiautomator").length;

/**
 * 3,000 labelled cells in a 30 x 100 grid of 36x24 px filling the 1080x2400 screen: every cell is on
 * screen, so none is left out of the listing for being off screen, and the screenshot is busy.
 */
function gridScenario(): Scenario<Record<string, never>> {
  const cells = Array.from({ length: 3_000 }, (_, i): UiNode => {
    const [x, y] = [(i % 30) * 36, Math.floor(i / 30) * 24];
    return {
      className: "android.widget.TextView",
      resourceId: "com.example.grid:id/cell",
      text: `Item ${i}`,
      bounds: [x, y, x + 36, y + 24],
      onTap: () => undefined,
    };
  });
  return {
    package: "com.example.grid",
    activity: "com.example.grid.MainActivity",
    initial: "grid",
    state: {},
    screens: { grid: (_s, view) => screenRoot(view, cells) },
  };
}

describeWithAdb("the MCP server with an Android phone on the real adb server", () => {
  test("devices_list lists the phone, and device_observe answers the header, the compact tree and a JPEG within the limits", async () => {
    await using phone = await demoPhone();
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);

    const tools = (await mcp.client.listTools()).tools.map((t) => t.name);
    const ANDROID_TOOLS = [
      "devices_list",
      "device_observe",
      "screenshot",
      "ui_tree",
      "tap",
      "double_tap",
      "long_press",
      "swipe",
      "type_text",
      "press_key",
      "launch_app",
      "terminate_app",
      "open_url",
      "wait_for",
      "set_secret",
      "session_verdict",
    ];
    expect(tools).toEqual(expect.arrayContaining(ANDROID_TOOLS));

    const list = await ok(mcp, "devices_list");
    expect(textOf(list)).toContain(deviceId);
    // The Mock steps aside while a real device is present (DEVICERAIL_MOCK=auto).
    const entry = { id: deviceId, name: "Pixel Test", platform: { kind: "android" } };
    expect(list.structuredContent.devices).toEqual([{ ...entry, osVersion: "10", connected: false, heldBy: null }]);

    const obs = await ok(mcp, "device_observe", { deviceId });
    const text = textOf(obs);
    expect(obs.content.map((c) => c.type)).toEqual(["text", "image"]);
    const sessionId = obs.structuredContent.sessionId as string;
    expect(text).toMatch(new RegExp(`^observation ${obs.structuredContent.observationId}\\b`, "m"));
    expect(text).toMatch(new RegExp(`\\bsession ${sessionId}\\b`));
    expect(text).toMatch(/^foreground: .*com\.example\.app/m);
    const measured = checkImage(obs, MAX_BYTES);
    expect([measured.width, measured.height]).toEqual([706, 1568]);
    expect(measured.scale).toBeCloseTo(0.654, 2);
    expect(measured.bytes).toBeLessThanOrEqual(MAX_BYTES);
    console.log(
      `android 1080x2400 observe image: ${measured.width}x${measured.height}, ${measured.bytes} bytes, scale ${measured.scale}`,
    );
    expect(obs.structuredContent).toEqual(
      expect.objectContaining({
        deviceId,
        sessionId: expect.stringMatching(new RegExp(`^${UUID}$`)),
        observationId: expect.stringMatching(new RegExp(`^${UUID}$`)),
        elements: treeLines(text).length,
        truncated: false,
      }),
    );
    // The login screen, one line per meaningful element, centres and sizes in device pixels.
    const lines = treeLines(text);
    expect(lines.find((l) => / id=username /.test(l))).toMatch(
      /^@e\d+ EditText "Username" id=username .*at=540,440 size=960x120$/,
    );
    expect(lines.find((l) => / id=password /.test(l))).toMatch(
      /^@e\d+ EditText "•+" id=password .*at=540,600 size=960x120$/,
    );
    expect(lines.find((l) => / id=sign_in /.test(l))).toMatch(
      /^@e\d+ Button "SIGN IN" id=sign_in .*at=540,935 size=960x150$/,
    );

    // The first device tool leased the phone for this MCP session's DeviceRail Session.
    expect((await ok(mcp, "devices_list")).structuredContent.devices).toEqual([
      { ...entry, osVersion: "10", connected: true, heldBy: sessionId },
    ]);

    const shot = await ok(mcp, "screenshot", { deviceId });
    expect(shot.content.map((c) => c.type)).toEqual(["text", "image"]);
    expect(treeLines(textOf(shot))).toEqual([]);
    expect(checkImage(shot, MAX_BYTES)).toEqual(measured);
    expect(shot.structuredContent.sessionId).toBe(sessionId);

    const tree = await ok(mcp, "ui_tree", { deviceId });
    expect(tree.content.map((c) => c.type)).toEqual(["text"]);
    expect(tree.structuredContent).toEqual(
      expect.objectContaining({ deviceId, sessionId, image: null, truncated: false }),
    );
    expect(treeLines(textOf(tree))).toEqual(lines);
    expectBounded(mcp);
  }, 60_000);

  test("tap by point, ref and selector, type_text into a selector with submit, and set_secret sign in without the secret leaking", async () => {
    await using phone = await demoPhone();
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const sessionId = (await ok(mcp, "ui_tree", { deviceId })).structuredContent.sessionId as string;

    const byPoint = await ok(mcp, "tap", { deviceId, x: 540, y: 440 });
    expectAction(byPoint, deviceId, sessionId);
    expect(textOf(byPoint)).toStartWith(`tap at 540,440 on ${deviceId}: ok`);
    expect(phone.phone.inputLog.at(-1)).toEqual({ kind: "tap", x: 540, y: 440, target: `${DEMO_PACKAGE}:id/username` });
    expect(demo(phone).focusedField).toBe("username");

    const typed = await ok(mcp, "type_text", {
      deviceId,
      text: "alice",
      selector: { identifier: "username" },
      submit: true,
    });
    expectAction(typed, deviceId, sessionId);
    expect(phone.phone.inputLog.slice(-3)).toEqual([
      { kind: "tap", x: 540, y: 440, target: `${DEMO_PACKAGE}:id/username` },
      { kind: "text", text: "alice", target: "username" },
      { kind: "keyevent", keyCode: 66, longpress: false, target: "username" },
    ]);
    expect(demo(phone).state.username).toBe("alice");

    const remember = refIn(textOf(await ok(mcp, "ui_tree", { deviceId })), / id=remember /);
    expectAction(await ok(mcp, "tap", { deviceId, ref: remember }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual({ kind: "tap", x: 540, y: 760, target: `${DEMO_PACKAGE}:id/remember` });
    expect(demo(phone).state.remember).toBe(true);

    // The secret, sampled from every process's argv on this machine while the call runs.
    const forms = canaryForms(CANARY);
    const argvLeaks = new Set<string>();
    let settled = false;
    const pending = call(mcp, "set_secret", { deviceId, secret: CANARY, selector: { identifier: "password" } }).finally(
      () => void (settled = true),
    );
    let samples = 0;
    while (!settled) {
      for (const leak of leaksIn(forms, "host argv", processArgvs())) argvLeaks.add(leak);
      samples++;
      await new Promise((r) => setImmediate(r));
    }
    const secret = await pending;
    if (secret.isError) throw new Error(`set_secret failed:\n${textOf(secret)}`);
    expectAction(secret, deviceId, sessionId);
    expect(samples).toBeGreaterThan(0);
    expect(demo(phone).state.password).toBe(CANARY);

    const signIn = await ok(mcp, "tap", {
      deviceId,
      selector: { role: "Button", text: { value: "sign in", mode: "exact", caseSensitive: false } },
    });
    expectAction(signIn, deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual({ kind: "tap", x: 540, y: 935, target: `${DEMO_PACKAGE}:id/sign_in` });
    expect(demo(phone).state).toEqual(
      expect.objectContaining({ username: "alice", password: CANARY, remember: true, user: "alice" }),
    );
    expect(textOf(await ok(mcp, "ui_tree", { deviceId }))).toMatch(/^@e\d+ TextView "Welcome, alice!" id=welcome /m);

    // The session's events, read back as the MCP resource and over HTTP, hold no secret either.
    const resource = await mcp.client.readResource({ uri: `devicerail://sessions/${sessionId}` });
    const events = await (await fetch(`${d.base}/sessions/${sessionId}/events`)).text();
    const deviceArgv = JSON.stringify(phone.phone.serviceLog.map((s) => s.command));
    const leaks = [
      ...argvLeaks,
      ...mcp.results.flatMap((r, i) => leaksIn(forms, `result ${i}`, JSON.stringify(r))),
      ...leaksIn(forms, "session resource", JSON.stringify(resource)),
      ...leaksIn(forms, "GET /sessions/{id}/events", events),
      ...leaksIn(forms, "daemon stderr", d.proc.stderr),
      ...leaksIn(forms, "device argv", deviceArgv),
      ...filesUnder(d.dataDir)
        .filter((f) => lstatSync(f).isFile())
        .flatMap((f) => leaksIn(forms, f, readFileSync(f).toString("latin1"))),
    ];
    expect(leaks).toEqual([]);
    // On the phone it went to one script's stdin only.
    expect(phone.phone.serviceLog.filter((s) => s.stdin.includes(CANARY)).length).toBe(1);
    expectBounded(mcp);
  }, 120_000);

  test("double_tap, long_press, swipe by points and by direction, and press_key back on the home screen", async () => {
    await using phone = await demoPhone();
    const rt = phone.phone.runtime(DEMO_PACKAGE);
    rt.state.user = "bob";
    rt.context().goto("home", { replace: true });
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const sessionId = (await ok(mcp, "ui_tree", { deviceId })).structuredContent.sessionId as string;

    expectAction(await ok(mcp, "double_tap", { deviceId, selector: { identifier: "counter" } }), deviceId, sessionId);
    expect(phone.phone.inputLog.slice(-2)).toEqual([
      { kind: "tap", x: 540, y: 440, target: `${DEMO_PACKAGE}:id/counter` },
      { kind: "tap", x: 540, y: 440, target: `${DEMO_PACKAGE}:id/counter` },
    ]);
    expect(demo(phone).state.count).toBe(2);
    expectAction(await ok(mcp, "double_tap", { deviceId, x: 540, y: 440 }), deviceId, sessionId);
    expect(demo(phone).state.count).toBe(4);

    expectAction(await ok(mcp, "long_press", { deviceId, x: 540, y: 620, durationMs: 1_000 }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual({
      kind: "swipe",
      x1: 540,
      y1: 620,
      x2: 540,
      y2: 620,
      durationMs: 1_000,
      target: `${DEMO_PACKAGE}:id/list`,
    });
    const apples = refIn(textOf(await ok(mcp, "ui_tree", { deviceId })), /"Apples"/);
    expectAction(await ok(mcp, "long_press", { deviceId, ref: apples }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual(
      expect.objectContaining({ kind: "swipe", x1: 540, y1: 620, x2: 540, y2: 620 }),
    );
    expectAction(
      await ok(mcp, "long_press", { deviceId, selector: { text: { value: "Bread" } } }),
      deviceId,
      sessionId,
    );
    expect(phone.phone.inputLog.at(-1)).toEqual(
      expect.objectContaining({ kind: "swipe", x1: 540, y1: 780, x2: 540, y2: 780 }),
    );
    expect(demo(phone).screen).toBe("home");

    // A finger moving up over the list (rows of 160 px) scrolls it by three rows, to its end.
    expectAction(
      await ok(mcp, "swipe", { deviceId, startX: 540, startY: 1_300, endX: 540, endY: 700, durationMs: 300 }),
      deviceId,
      sessionId,
    );
    expect(phone.phone.inputLog.at(-1)).toEqual({
      kind: "swipe",
      x1: 540,
      y1: 1_300,
      x2: 540,
      y2: 700,
      durationMs: 300,
      target: `${DEMO_PACKAGE}:id/list`,
    });
    expect(demo(phone).state.scroll).toBe(3);
    expect(textOf(await ok(mcp, "ui_tree", { deviceId }))).toMatch(/^@e\d+ TextView "Honey" /m);

    // A direction moves the finger that way from the screen's centre ("up" reveals content further down),
    // by the fraction of the screen given: 0.1 of 2400 px is 240 px, a row and a half of the list.
    const list = `${DEMO_PACKAGE}:id/list`;
    const directions = [
      ["down", { x1: 540, y1: 1_080, x2: 540, y2: 1_320 }, 2],
      ["up", { x1: 540, y1: 1_320, x2: 540, y2: 1_080 }, 3],
      ["left", { x1: 594, y1: 1_200, x2: 486, y2: 1_200 }, 3],
      ["right", { x1: 486, y1: 1_200, x2: 594, y2: 1_200 }, 3],
    ] as const;
    for (const [direction, points, scroll] of directions) {
      expectAction(await ok(mcp, "swipe", { deviceId, direction, distance: 0.1 }), deviceId, sessionId);
      expect([phone.phone.inputLog.at(-1), demo(phone).state.scroll]).toEqual([
        { kind: "swipe", ...points, durationMs: 300, target: list },
        scroll,
      ]);
    }

    expectAction(await ok(mcp, "tap", { deviceId, selector: { text: { value: "Eggs" } } }), deviceId, sessionId);
    expect([demo(phone).screen, demo(phone).state.selected]).toEqual(["detail", "Eggs"]);
    expectAction(await ok(mcp, "press_key", { deviceId, key: "back" }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual(expect.objectContaining({ kind: "keyevent", keyCode: 4 }));
    expect(demo(phone).screen).toBe("home");
    expectBounded(mcp);
  }, 120_000);

  test("press_key home and enter, launch_app, terminate_app and open_url change what is in front", async () => {
    await using phone = await demoPhone();
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const sessionId = (await ok(mcp, "ui_tree", { deviceId })).structuredContent.sessionId as string;

    await ok(mcp, "tap", { deviceId, selector: { identifier: "username" } });
    expectAction(await ok(mcp, "press_key", { deviceId, key: "enter" }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual({
      kind: "keyevent",
      keyCode: 66,
      longpress: false,
      target: "username",
    });

    demo(phone).state.username = "carol";
    expectAction(await ok(mcp, "press_key", { deviceId, key: "home" }), deviceId, sessionId);
    expect(phone.phone.inputLog.at(-1)).toEqual(expect.objectContaining({ kind: "keyevent", keyCode: 3 }));
    expect(phone.phone.foreground).toBe(LAUNCHER);
    expect(textOf(await ok(mcp, "ui_tree", { deviceId }))).toMatch(/^foreground: .*com\.android\.launcher3/m);

    // Launching resumes the running app where it was.
    expectAction(await ok(mcp, "launch_app", { deviceId, appId: DEMO_PACKAGE }), deviceId, sessionId);
    expect(phone.phone.foreground).toBe(DEMO_PACKAGE);
    expect(demo(phone).state.username).toBe("carol");

    expectAction(await ok(mcp, "terminate_app", { deviceId, appId: DEMO_PACKAGE }), deviceId, sessionId);
    expect(phone.phone.foreground).toBe(LAUNCHER);
    expect(phone.phone.apps.get(DEMO_PACKAGE)?.runtime).toBeNull();
    expect(phone.phone.commandLog.some((c) => c.argv.join(" ") === `am force-stop ${DEMO_PACKAGE}`)).toBe(true);

    // After a force-stop the app starts afresh.
    await ok(mcp, "launch_app", { deviceId, appId: DEMO_PACKAGE });
    expect([phone.phone.foreground, demo(phone).screen, demo(phone).state.username]).toEqual([
      DEMO_PACKAGE,
      "login",
      "",
    ]);

    const url = "https://example.com/path?q=1";
    expectAction(await ok(mcp, "open_url", { deviceId, url }), deviceId, sessionId);
    expect(phone.phone.foreground).toBe(BROWSER);
    expect(phone.phone.apps.get(BROWSER)?.url).toBe(url);
    const tree = textOf(await ok(mcp, "ui_tree", { deviceId }));
    expect(tree).toMatch(/^foreground: .*com\.android\.chrome/m);
    expect(tree).toContain(JSON.stringify(url));

    const missing = await call(mcp, "launch_app", { deviceId, appId: "com.example.missing" });
    expect([missing.isError, errorOf(missing).retryable]).toEqual([true, "false"]);
    expectBounded(mcp);
  }, 120_000);

  test("launch_app takes an Android activity: without one an app with several launcher activities fails with their names", async () => {
    await using phone = await demoPhone();
    phone.phone.install({
      package: "com.example.multi",
      activity: "com.example.multi.MainActivity",
      extraLaunchers: ["com.example.multi.debug.DebugActivity"],
      label: "Multi",
      initial: "main",
      state: {},
      screens: { main: (_s, view) => screenRoot(view, [{ className: "android.widget.TextView", text: "Multi" }]) },
    } satisfies Scenario);
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const ambiguous = errorOf(await call(mcp, "launch_app", { deviceId, appId: "com.example.multi" }));
    expect([ambiguous.isError, ambiguous.retryable]).toEqual([true, "false"]);
    expect(ambiguous.text).toContain("android_app_launch_ambiguous");
    expect(ambiguous.text).toContain("com.example.multi.MainActivity, com.example.multi.debug.DebugActivity");
    expect(phone.phone.foreground).toBe(DEMO_PACKAGE);
    await ok(mcp, "launch_app", { deviceId, appId: "com.example.multi", activity: ".debug.DebugActivity" });
    expect(phone.phone.foreground).toBe("com.example.multi");
    expect(
      phone.phone.commandLog.some(
        (c) =>
          c.argv.join(" ") === "am start -W --user current -n com.example.multi/com.example.multi.debug.DebugActivity",
      ),
    ).toBe(true);
    const bad = errorOf(await call(mcp, "launch_app", { deviceId, appId: "com.example.multi", activity: "a b" }));
    expect([bad.isError, bad.retryable]).toEqual([true, "false"]);
    expectBounded(mcp);
  }, 120_000);

  test("wait_for returns once an element appears, once it is gone, and fails after its timeout; a missing element fails with the closest ones", async () => {
    await using phone = await demoPhone();
    const rt = phone.phone.runtime(DEMO_PACKAGE);
    rt.state.user = "dave";
    rt.context().goto("home", { replace: true });
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    await ok(mcp, "ui_tree", { deviceId });

    // The phone changes on its own, after the wait has looked at the screen at least once.
    let before = dumps(phone);
    const appear = call(mcp, "wait_for", { deviceId, selector: { text: { value: "Taps: 5" } }, timeoutMs: 15_000 });
    await until("wait_for to dump the screen", () => dumps(phone) > before);
    demo(phone).state.count = 5;
    const appeared = await appear;
    expect(appeared.isError).toBeFalsy();
    expect(textOf(appeared)).toMatch(/^wait .* on android-adb:\S+: ok\b/);

    before = dumps(phone);
    const gone = call(mcp, "wait_for", {
      deviceId,
      selector: { identifier: "counter", text: { value: "Taps: 5" } },
      gone: true,
      timeoutMs: 15_000,
    });
    await until("wait_for gone to dump the screen", () => dumps(phone) > before);
    demo(phone).state.count = 6;
    const went = await gone;
    expect(went.isError).toBeFalsy();

    // Already satisfied: answered from the first look.
    expect(
      (await call(mcp, "wait_for", { deviceId, selector: { text: { value: "Taps: 6" } }, timeoutMs: 5_000 })).isError,
    ).toBeFalsy();

    const started = performance.now();
    const never = await call(mcp, "wait_for", {
      deviceId,
      selector: { text: { value: "Never there" } },
      timeoutMs: 1_000,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    const e = errorOf(never);
    expect([e.isError, e.code, e.error?.code]).toEqual([true, "action_timed_out", "action_timed_out"]);
    expect(e.retryable).toMatch(/^(true|false)$/);
    expect(e.text).toMatch(/^screen\b/m);

    // An element that is not there: the closest elements, with refs, and the screen.
    const missing = errorOf(
      await call(mcp, "tap", { deviceId, selector: { role: "Button", text: { value: "Taps: 7" } } }),
    );
    expect([missing.isError, missing.code, missing.retryable, missing.error?.code]).toEqual([
      true,
      "element_not_found",
      missing.retryable,
      "element_not_found",
    ]);
    expect(missing.retryable).toMatch(/^(true|false)$/);
    expect(missing.text).toMatch(/^closest elements:\n\s*@e\d+ Button "Taps: 6" id=counter /m);
    expect(missing.text).toMatch(/^screen\b/m);
    expect(phone.phone.inputLog.filter((i) => i.kind === "tap")).toEqual([]);
    expectBounded(mcp);
  }, 60_000);

  test("session_verdict records a verdict on the MCP session's DeviceRail Session, which ends with the MCP session", async () => {
    await using phone = await demoPhone();
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const sessionId = (await ok(mcp, "device_observe", { deviceId, screenshot: false })).structuredContent
      .sessionId as string;
    await ok(mcp, "tap", { deviceId, selector: { identifier: "remember" } });
    const verdict = await ok(mcp, "session_verdict", { deviceId, status: "pass", summary: "remember-me ticks" });
    expect(verdict.structuredContent).toEqual(expect.objectContaining({ deviceId, sessionId }));

    const sessions = async () =>
      (
        (await (await fetch(`${d.base}/sessions`)).json()) as {
          sessions: { id: string; state: string; deviceId: string; verdict: unknown }[];
        }
      ).sessions;
    expect((await sessions()).find((s) => s.id === sessionId)).toEqual(
      expect.objectContaining({ state: "active", deviceId, verdict: { status: "pass", summary: "remember-me ticks" } }),
    );
    const listed = (await mcp.client.listResources()).resources.map((r) => r.uri);
    expect(listed).toContain(`devicerail://sessions/${sessionId}`);

    await mcp.close();
    await pollUntil(
      "the DeviceRail Session to end with the MCP session",
      sessions,
      (all) => all.find((s) => s.id === sessionId)?.state === "ended",
      5_000,
    );
  }, 60_000);

  test("type_text types Hebrew and emoji through the clipboard, and the tree shows them when the clipboard has a shell command", async () => {
    await using phone = await startFakeDevice(server(), {
      scenario: demoScenario,
      props: { "ro.product.model": "Pixel_Test" },
      clipboardShell: true,
    });
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const text = "שלום עולם 👋🏽🇮🇱";
    await ok(mcp, "type_text", { deviceId, text, selector: { identifier: "username" } });
    expect(demo(phone).state.username).toBe(text);
    expect(
      phone.phone.commandLog.some((c) => c.argv[0] === "cmd" && c.argv[1] === "clipboard" && c.argv[3] === "text"),
    ).toBe(true);
    expect(phone.phone.inputLog.some((e) => e.kind === "keyevent" && e.keyCode === 279)).toBe(true);
    expect(textOf(await ok(mcp, "ui_tree", { deviceId }))).toMatch(
      new RegExp(`^@e\\d+ EditText ${JSON.stringify(text)} id=username `, "m"),
    );
  }, 60_000);

  test("the largest demo screen's tree stays within 8,000 tokens", async () => {
    await using phone = await demoPhone();
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const rt = phone.phone.runtime(DEMO_PACKAGE);
    rt.state.user = "erin";
    rt.state.selected = "Apples";
    const sizes: { screen: string; elements: number; chars: number }[] = [];
    for (const screen of Object.keys(demoScenario.screens)) {
      rt.screen = screen;
      const r = await ok(mcp, "ui_tree", { deviceId });
      sizes.push({ screen, elements: r.structuredContent.elements, chars: textOf(r).length });
      expect(r.structuredContent.truncated).toBe(false);
    }
    const largest = sizes.reduce((a, b) => (b.elements > a.elements ? b : a));
    console.log(
      `demo ui_tree sizes: ${sizes.map((s) => `${s.screen} ${s.elements} elements ${s.chars} chars ≈ ${Math.ceil(s.chars / 4)} tokens`).join("; ")}`,
    );
    expect(largest.screen).toBe("home");
    expect(Math.ceil(largest.chars / 4)).toBeLessThanOrEqual(8_000);
  }, 60_000);

  test("a screen of 3,000 elements gives a tree cut with a note, and every result stays under 1 MB", async () => {
    await using phone = await startFakeDevice(server(), { scenario: gridScenario() });
    await using d = await tcpDaemon();
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);

    const tree = await ok(mcp, "ui_tree", { deviceId });
    const text = textOf(tree);
    const note = text.split("\n").filter((l) => l.startsWith("… "));
    expect(note.length).toBe(1);
    expect(tree.structuredContent.truncated).toBe(true);
    expect(treeLines(text).length).toBeLessThan(3_000);
    expect(treeLines(text).join("\n").length).toBeLessThanOrEqual(32_000);
    console.log(
      `3,000-cell ui_tree: ${treeLines(text).length} lines, ${text.length} chars ≈ ${Math.ceil(text.length / 4)} tokens; ${note[0]}`,
    );

    const obs = await ok(mcp, "device_observe", { deviceId });
    expect(obs.structuredContent.truncated).toBe(true);
    const measured = checkImage(obs, MAX_BYTES);
    console.log(
      `3,000-cell observe: ${Buffer.byteLength(JSON.stringify(obs))} bytes of result, image ${measured.width}x${measured.height} ${measured.bytes} bytes`,
    );
    expectBounded(mcp);
  }, 120_000);

  test("DEVICERAIL_MCP_IMAGE_MAX_BYTES brings a busy screen's screenshot within a lower byte limit", async () => {
    // The grid's screenshot encodes to about 290 KB at the defaults.
    const limit = 60_000;
    await using phone = await startFakeDevice(server(), { scenario: gridScenario() });
    await using d = await tcpDaemon({ DEVICERAIL_MCP_IMAGE_MAX_BYTES: String(limit) });
    await using mcp = await httpPeer(d.base, d.dataDir);
    const deviceId = deviceIdOf(phone);
    const measured = checkImage(await ok(mcp, "screenshot", { deviceId }), limit);
    console.log(
      `grid screenshot with DEVICERAIL_MCP_IMAGE_MAX_BYTES=${limit}: ${measured.width}x${measured.height}, ${measured.bytes} bytes, scale ${measured.scale}`,
    );
    expect(checkImage(await ok(mcp, "device_observe", { deviceId }), limit)).toEqual(measured);
  }, 60_000);

  test("devicerail mcp over stdio drives the phone, and a new process drives it at once after the first exits", async () => {
    await using phone = await demoPhone();
    const deviceId = deviceIdOf(phone);
    const dataDir = tempDataDir();
    let sessionId: string;
    const leaks: string[] = [];
    {
      await using a = await stdioPeer({ dataDir, env: androidEnv() });
      expect((await ok(a, "devices_list")).structuredContent.devices).toEqual([
        expect.objectContaining({ id: deviceId }),
      ]);
      const obs = await ok(a, "device_observe", { deviceId });
      expect([checkImage(obs, MAX_BYTES).width, checkImage(obs, MAX_BYTES).height]).toEqual([706, 1568]);
      sessionId = obs.structuredContent.sessionId;
      expectAction(
        await ok(a, "type_text", { deviceId, text: "frank", selector: { identifier: "username" } }),
        deviceId,
        sessionId,
      );
      expect(demo(phone).state.username).toBe("frank");
      expectAction(
        await ok(a, "set_secret", { deviceId, secret: CANARY, selector: { identifier: "password" } }),
        deviceId,
        sessionId,
      );
      expect(demo(phone).state.password).toBe(CANARY);
      expect(a.transportErrors).toEqual([]);
      const forms = canaryForms(CANARY);
      // The bridge process and the background daemon it started (its daemon.log is in the data directory).
      leaks.push(
        ...a.results.flatMap((r, i) => leaksIn(forms, `result ${i}`, JSON.stringify(r))),
        ...leaksIn(forms, "devicerail mcp stderr", a.stderr()),
      );
      const files = filesUnder(dataDir).filter((f) => lstatSync(f).isFile());
      expect(files.map((f) => f.slice(dataDir.length + 1))).toContain("daemon.log");
      leaks.push(...files.flatMap((f) => leaksIn(forms, f, readFileSync(f).toString("latin1"))));
    }
    expect(leaks).toEqual([]);
    const base = daemonBase(dataDir);
    const sessions = async () =>
      (
        (await (await fetch(`${base}/sessions`, { headers: ownerAuth(dataDir) })).json()) as {
          sessions: { id: string; state: string }[];
        }
      ).sessions;
    await pollUntil(
      "the stdio client's Session to end",
      sessions,
      (all) => all.find((s) => s.id === sessionId)?.state === "ended",
      5_000,
    );

    await using b = await stdioPeer({ dataDir, env: androidEnv() });
    const tapped = await ok(b, "tap", { deviceId, selector: { identifier: "remember" } });
    expect(tapped.structuredContent.sessionId).not.toBe(sessionId);
    expect(demo(phone).state.remember).toBe(true);
    expect(b.transportErrors).toEqual([]);
  }, 120_000);
});
