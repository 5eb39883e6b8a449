/**
 * The MCP server end to end, through the official SDK's client: `devicerail mcp` over stdio and
 * Streamable HTTP on the daemon's `/mcp`, driving the Mock's sign-in app. Each test gets its own
 * daemon (the Mock app keeps its state for the daemon's life).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { canaryForms, filesUnder, leaksIn } from "../support/canary.ts";
import {
  type McpPeer,
  type ToolResult,
  allResults,
  call,
  daemonReady,
  errorOf,
  httpPeer,
  imageOf,
  ownerAuth,
  ownerToken,
  refIn,
  stdioPeer,
  textOf,
} from "../support/mcp-client.ts";
import { pollUntil } from "../support/wait.ts";
import { RpcSocket, ServeDaemon, within } from "./serve-daemon.ts";

const TOOLS = [
  "device_observe",
  "devices_list",
  "double_tap",
  "launch_app",
  "long_press",
  "open_url",
  "press_key",
  "screenshot",
  "session_verdict",
  "set_secret",
  "swipe",
  "tap",
  "terminate_app",
  "type_text",
  "ui_tree",
  "wait_for",
];
const READ_ONLY = ["devices_list", "device_observe", "screenshot", "ui_tree", "wait_for"];
const MB = 1_048_576;
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const JPEG_MAGIC = [0xff, 0xd8, 0xff];

/** One MCP client and the daemon behind it, reachable over HTTP for the checks. */
interface Rig extends AsyncDisposable {
  peer: McpPeer;
  /** The daemon's http://127.0.0.1:port. */
  base: string;
  dataDir: string;
  /** Everything the daemon and the client process wrote to stderr so far (logs in files are under dataDir). */
  stderr(): string;
  /** Another MCP client of the same kind on the same daemon. */
  another(): Promise<McpPeer>;
}

/**
 * The owner's credential for each rig's base URL: the daemon `devicerail mcp` starts requires its
 * data directory's token on TCP, as every other local client of the owner presents it.
 */
const credentials = new Map<string, { headers: Record<string, string>; tokenLine?: string }>();
const authFor = (url: string) => credentials.get(new URL(url).origin)?.headers ?? {};
const rpcTo = (base: string) =>
  RpcSocket.connect(
    { port: Number(new URL(base).port) },
    { tokenLine: credentials.get(new URL(base).origin)?.tokenLine },
  );

type Kind = "stdio" | "http";
const KINDS: Kind[] = ["stdio", "http"];

async function openRig(kind: Kind, env: Record<string, string> = {}): Promise<Rig> {
  const peers: McpPeer[] = [];
  if (kind === "stdio") {
    const peer = await stdioPeer({ env });
    peers.push(peer);
    const base = await daemonReady(peer.dataDir);
    credentials.set(new URL(base).origin, { headers: ownerAuth(peer.dataDir), tokenLine: ownerToken(peer.dataDir) });
    return {
      peer,
      base,
      dataDir: peer.dataDir,
      stderr: () => peers.map((p) => p.stderr()).join("\n"),
      another: async () => {
        const p = await stdioPeer({ dataDir: peer.dataDir, env });
        peers.push(p);
        return p;
      },
      // The daemon the command started in the background is stopped after each test (test/support/preload.ts).
      [Symbol.asyncDispose]: async () => {
        for (const p of peers) await p.close();
      },
    };
  }
  const d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], env);
  const base = `http://127.0.0.1:${d.port}`;
  const auth: Record<string, string> = env.DEVICERAIL_TOKEN ? { Authorization: `Bearer ${env.DEVICERAIL_TOKEN}` } : {};
  try {
    const peer = await httpPeer(base, d.dataDir, auth);
    peers.push(peer);
    return {
      peer,
      base,
      dataDir: d.dataDir,
      stderr: () => d.stderr,
      another: async () => {
        const p = await httpPeer(base, d.dataDir, auth);
        peers.push(p);
        return p;
      },
      [Symbol.asyncDispose]: async () => {
        for (const p of peers) await p.close().catch(() => {});
        await d[Symbol.asyncDispose]();
      },
    };
  } catch (e) {
    await d[Symbol.asyncDispose]();
    throw new Error(`MCP over HTTP did not initialize: ${e}; daemon stderr:\n${d.stderr}`);
  }
}

const getJson = async (url: string) => {
  const res = await fetch(url, { headers: { Accept: "*/*", ...authFor(url) } });
  return { status: res.status, body: (await res.json()) as any };
};
type SessionRow = {
  id: string;
  state: string;
  deviceId: string | null;
  outcome: string | null;
  verdict: { status: string; summary: string } | null;
};
const sessionsOn = async (base: string): Promise<SessionRow[]> => (await getJson(`${base}/sessions`)).body.sessions;
const sessionRow = async (base: string, id: string) => (await sessionsOn(base)).find((s) => s.id === id);
const eventsOf = async (base: string, id: string): Promise<{ payload: any }[]> =>
  (await getJson(`${base}/sessions/${id}/events`)).body;

/** The Mock's device id, as devices_list names it (the only device unless the rig registers more). */
async function mockId(peer: McpPeer, index = 0): Promise<string> {
  const r = await call(peer, "devices_list");
  return (r.structuredContent.devices as { id: string }[])[index]?.id as string;
}

/** Expects a successful device-tool result and returns it. */
function ok(r: ToolResult, what: string): ToolResult {
  expect({ what, isError: r.isError ?? false, first: r.isError ? textOf(r) : "" }).toEqual({
    what,
    isError: false,
    first: "",
  });
  return r;
}

/** Types the user name, sets the password secret and taps Sign in, all by selector. */
async function signIn(peer: McpPeer, deviceId: string, user: string, secret: string): Promise<void> {
  ok(
    await call(peer, "type_text", { deviceId, selector: { identifier: "username" }, text: user }),
    "type_text username",
  );
  ok(await call(peer, "set_secret", { deviceId, selector: { identifier: "password" }, secret }), "set_secret password");
  ok(await call(peer, "tap", { deviceId, selector: { identifier: "sign_in" } }), "tap sign_in");
}

describe("devicerail MCP tools/list", () => {
  for (const kind of KINDS)
    test(`lists exactly the spec's tools with object input schemas and hints when served over ${kind}`, async () => {
      await using rig = await openRig(kind);
      expect(rig.peer.client.getServerVersion()?.name).toBe("devicerail");
      const { tools } = await rig.peer.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
      for (const t of tools) {
        const required = (t.inputSchema.required ?? []) as string[];
        expect({
          tool: t.name,
          type: t.inputSchema.type,
          needsDevice: required.includes("deviceId"),
          hasDescription: (t.description ?? "").length > 0,
        }).toEqual({
          tool: t.name,
          type: "object",
          needsDevice: t.name !== "devices_list",
          hasDescription: true,
        });
        expect({ tool: t.name, readOnly: t.annotations?.readOnlyHint === true }).toEqual({
          tool: t.name,
          readOnly: READ_ONLY.includes(t.name),
        });
      }
      expect(tools.find((t) => t.name === "terminate_app")?.annotations?.destructiveHint).toBe(true);
      const devices = await call(rig.peer, "devices_list");
      expect(devices.structuredContent).toEqual({
        devices: [
          {
            id: "mock-1",
            name: "DeviceRail Mock Device",
            platform: expect.anything(),
            osVersion: "0.1",
            connected: expect.any(Boolean),
            heldBy: null,
          },
        ],
      });
      expect(textOf(devices)).toContain("mock-1");
      expect(rig.peer.transportErrors).toEqual([]);
    }, 30_000);
});

describe("signing in to the Mock app through MCP tools", () => {
  for (const kind of KINDS)
    test(`observe, type, set_secret, tap by ref, diff, wait_for and verdict work when served over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const { peer } = rig;
      const deviceId = await mockId(peer);
      const canary = `mcp-flow-${crypto.randomUUID()}`;

      const observed = ok(await call(peer, "device_observe", { deviceId }), "device_observe");
      const text = textOf(observed);
      const sc = observed.structuredContent;
      expect(text).toContain(`observation ${sc.observationId}`);
      expect(text).toContain(`session ${sc.sessionId}`);
      expect(text).toMatch(/^foreground: \S/m);
      expect(text).toMatch(/^\s*@e\d+ Button "Sign in" .*\[disabled\].* at=640,292 size=480x56$/m);
      expect(text).toMatch(/^\s*@e\d+ TextField "User name" .*id=username/m);
      const image = imageOf(observed);
      if (!image)
        throw new Error(`device_observe gave no image content: ${JSON.stringify(observed.content.map((c) => c.type))}`);
      const meta = await new Bun.Image(image.bytes).metadata();
      expect([image.mimeType, [...image.bytes.subarray(0, 3)], meta.format]).toEqual([
        "image/jpeg",
        JPEG_MAGIC,
        "jpeg",
      ]);
      expect(Math.max(meta.width, meta.height)).toBeLessThanOrEqual(1568);
      expect(image.bytes.length).toBeLessThanOrEqual(400_000);
      const refs = text.split("\n").filter((l) => /^\s*@e\d+ /.test(l)).length;
      expect(sc).toEqual(
        expect.objectContaining({
          deviceId,
          sessionId: expect.stringMatching(new RegExp(`^${UUID}$`)),
          observationId: expect.stringMatching(new RegExp(`^${UUID}$`)),
          image: expect.objectContaining({
            width: meta.width,
            height: meta.height,
            scale: 1,
            bytes: image.bytes.length,
            mimeType: "image/jpeg",
          }),
          elements: refs,
          truncated: false,
        }),
      );
      const sessionId = sc.sessionId as string;
      const signInRef = refIn(text, /Button "Sign in"/);

      const typed = ok(
        await call(peer, "type_text", { deviceId, selector: { identifier: "username" }, text: "alice" }),
        "type_text",
      );
      expect(textOf(typed)).toMatch(
        new RegExp(`^type .* on ${deviceId}: ok\\b.*\\baction ${UUID}, session ${sessionId}\\)$`, "m"),
      );
      expect(typed.structuredContent).toEqual(
        expect.objectContaining({ deviceId, sessionId, actionId: expect.stringMatching(new RegExp(`^${UUID}$`)) }),
      );
      ok(
        await call(peer, "set_secret", { deviceId, selector: { identifier: "password" }, secret: canary }),
        "set_secret",
      );
      // On the same screen the diff names each changed element with its ref, old and new.
      const same = textOf(
        ok(await call(peer, "ui_tree", { deviceId, diff: true }), "ui_tree diff on the login screen"),
      );
      expect(same).toMatch(
        new RegExp(`^~ @e\\d+ TextField "alice" id=username .*\\(was: TextField "User name" id=username `, "m"),
      );
      expect(same).toMatch(
        new RegExp(
          `^~ ${signInRef} Button "Sign in" id=sign_in at=640,292 size=480x56 \\(was: Button "Sign in" id=sign_in \\[disabled\\] `,
          "m",
        ),
      );

      const tapped = ok(await call(peer, "tap", { deviceId, ref: signInRef }), "tap by ref");
      expect(textOf(tapped).split("\n")[0]).toMatch(
        new RegExp(`^tap .*on ${deviceId}: ok\\b.*\\baction ${UUID}, session ${sessionId}\\)$`),
      );
      expect(tapped.structuredContent).toEqual(
        expect.objectContaining({ deviceId, sessionId, actionId: expect.any(String) }),
      );

      // A new screen: the listing is new, and the diff says so in one line.
      const diff = textOf(ok(await call(peer, "ui_tree", { deviceId, diff: true }), "ui_tree diff"));
      expect(diff).toMatch(/^@e1 Text "Welcome, alice"/m);
      expect(diff).toMatch(
        /^changes since observation \S+: a new screen \(its UI context changed\): the 4 elements listed then are gone, and every element above is new$/m,
      );

      const waited = ok(
        await call(peer, "wait_for", {
          deviceId,
          selector: { text: { value: "Welcome, alice", mode: "contains" } },
          timeoutMs: 10_000,
        }),
        "wait_for",
      );
      expect(waited.structuredContent).toEqual(expect.objectContaining({ deviceId, sessionId }));
      const tree = ok(await call(peer, "ui_tree", { deviceId }), "ui_tree");
      expect(textOf(tree)).toContain("Welcome, alice");
      expect(imageOf(tree)).toBeNull();

      const verdict = ok(
        await call(peer, "session_verdict", { deviceId, status: "pass", summary: "signed in as alice" }),
        "session_verdict",
      );
      expect(verdict.structuredContent).toEqual(expect.objectContaining({ deviceId, sessionId }));
      expect(await sessionRow(rig.base, sessionId)).toEqual(
        expect.objectContaining({
          id: sessionId,
          state: "active",
          deviceId,
          verdict: { status: "pass", summary: "signed in as alice" },
        }),
      );
      // Every device tool of this MCP session worked in the one DeviceRail Session.
      expect([
        ...new Set(peer.results.filter((r) => r.structuredContent?.deviceId).map((r) => r.structuredContent.sessionId)),
      ]).toEqual([sessionId]);
      expect(peer.transportErrors).toEqual([]);
    }, 60_000);
});

describe("device_observe text", () => {
  test("the header names the observation, session and foreground, and states the screen size and the image's size, bytes, scale and evidence when the Mock is observed", async () => {
    await using rig = await openRig("http");
    const deviceId = await mockId(rig.peer);
    const observed = ok(await call(rig.peer, "device_observe", { deviceId }), "device_observe");
    const { observationId, sessionId, image } = observed.structuredContent;
    const header = textOf(observed)
      .split("\n")
      .filter((l) => !/^\s*@e\d+ /.test(l));
    expect(header).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`observation ${observationId}`),
        expect.stringContaining(`session ${sessionId}`),
        expect.stringMatching(/^foreground: com\.devicerail\.mock\b/),
        "screen: 1280x720 device px",
        `image: ${image.width}x${image.height} image/jpeg, ${image.bytes} bytes, scale ${image.scale} (device x = image x / ${image.scale}); evidence devicerail://evidence/${image.sha256}`,
      ]),
    );
    // The tree line of the spec's example, for the Mock's Sign in button.
    expect(textOf(observed)).toMatch(/^@e\d+ Button "Sign in" id=sign_in \[disabled\] at=640,292 size=480x56$/m);
  }, 30_000);
});

describe("type_text with Unicode", () => {
  for (const kind of KINDS)
    test(`Hebrew and emoji reach the field unchanged when served over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const deviceId = await mockId(rig.peer);
      const text = "שלום 👋";
      ok(await call(rig.peer, "type_text", { deviceId, selector: { identifier: "username" }, text }), "type_text");
      const tree = textOf(ok(await call(rig.peer, "ui_tree", { deviceId }), "ui_tree"));
      expect(tree.split("\n").find((l) => /^\s*@e\d+ TextField .*id=username/.test(l))).toContain(text);
    }, 30_000);
});

describe("tool errors", () => {
  for (const kind of KINDS) {
    test(`tap answers element_not_found with retryable, closest elements and the screen when the selector matches nothing over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const deviceId = await mockId(rig.peer);
      // A near miss of the Sign in button's identifier (sign_in).
      const e = errorOf(await call(rig.peer, "tap", { deviceId, selector: { identifier: "sign_up" } }));
      expect([e.isError, e.code, e.retryable, e.error?.code, String(e.error?.retryable)]).toEqual([
        true,
        "element_not_found",
        e.retryable,
        "element_not_found",
        e.retryable,
      ]);
      expect(["true", "false"]).toContain(e.retryable as string);
      const lines = e.text.split("\n");
      const from = lines.findIndex((l) => l.startsWith("closest elements:"));
      const to = lines.findIndex((l) => /^screen\b/.test(l));
      expect({ from: from > 0, to: to > from }).toEqual({ from: true, to: true });
      const closest = lines.slice(from, to).join("\n");
      expect(closest).toMatch(/@e\d+ Button "Sign in" id=sign_in/);
      expect(e.error).toEqual({
        code: "element_not_found",
        message: expect.any(String),
        retryable: e.retryable === "true",
        details: expect.anything(),
      });
    }, 30_000);

    test(`a ref from the login screen answers stale_ref when used after signing in over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const deviceId = await mockId(rig.peer);
      const login = textOf(ok(await call(rig.peer, "ui_tree", { deviceId }), "ui_tree"));
      const usernameRef = refIn(login, /TextField "User name"/);
      await signIn(rig.peer, deviceId, "alice", `pw-${crypto.randomUUID()}`);
      const e = errorOf(await call(rig.peer, "tap", { deviceId, ref: usernameRef }));
      expect([e.isError, e.code, e.error?.code]).toEqual([true, "stale_ref", "stale_ref"]);
      expect(e.text).toMatch(/observe/);
      expect(e.retryable).toMatch(/^(true|false)$/);
    }, 30_000);

    test(`tap answers device_not_found when the deviceId is unknown over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const e = errorOf(await call(rig.peer, "tap", { deviceId: "no-such-device", x: 10, y: 10 }));
      expect([e.isError, e.code, e.retryable, e.error?.code]).toEqual([
        true,
        "device_not_found",
        "false",
        "device_not_found",
      ]);
      expect(e.text.split("\n")[0]).toContain("no-such-device");
    }, 30_000);

    test(`double_tap and other tools the Mock lacks answer unsupported_on_device naming the tools it can do when served over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const deviceId = await mockId(rig.peer);
      const e = errorOf(await call(rig.peer, "double_tap", { deviceId, x: 640, y: 148 }));
      expect([e.isError, e.code, e.retryable, e.error?.code]).toEqual([
        true,
        "unsupported_on_device",
        "false",
        "unsupported_on_device",
      ]);
      // A line lists what works on the Mock (and only that: not the tool that was refused).
      const listings = e.text
        .split("\n")
        .slice(1)
        .filter(
          (l) =>
            ["tap", "type_text", "set_secret", "wait_for"].every((tool) => new RegExp(`\\b${tool}\\b`).test(l)) &&
            !/\bdouble_tap\b/.test(l),
        );
      expect(listings.length).toBeGreaterThan(0);
      for (const [tool, args] of [
        ["long_press", { deviceId, x: 640, y: 148 }],
        ["launch_app", { deviceId, appId: "com.devicerail.mock" }],
        ["open_url", { deviceId, url: "https://example.com" }],
        ["press_key", { deviceId, key: "home" }],
      ] as const) {
        const r = errorOf(await call(rig.peer, tool, args));
        expect({ tool, code: r.code }).toEqual({ tool, code: "unsupported_on_device" });
      }
    }, 30_000);

    test(`tap answers isError naming both forms when given x/y and a selector together over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const deviceId = await mockId(rig.peer);
      const r = await call(rig.peer, "tap", { deviceId, x: 640, y: 148, selector: { identifier: "username" } });
      const text = textOf(r);
      expect(r.isError).toBe(true);
      expect(text).toMatch(/selector/);
      expect(text).toMatch(/\bx\b|coordinates/);
      // Nothing was tapped: the field did not get focus.
      const tree = textOf(ok(await call(rig.peer, "ui_tree", { deviceId }), "ui_tree"));
      expect(tree.split("\n").find((l) => /^\s*@e\d+ TextField .*id=username/.test(l))).not.toContain("focused");
    }, 30_000);
  }
});

describe("a secret set through set_secret", () => {
  for (const kind of KINDS)
    test(`appears in no tool result, log, stored file, export or resource when served over ${kind}`, async () => {
      await using rig = await openRig(kind, { DEVICERAIL_LOG_LEVEL: "debug", DEVICERAIL_MOCK_DEVICES: "1" });
      const { peer } = rig;
      const canary = `Cn4ry-${crypto.randomUUID()}`;
      const forms = canaryForms(canary);
      const deviceId = await mockId(peer);
      ok(await call(peer, "device_observe", { deviceId }), "device_observe");
      await signIn(peer, deviceId, "alice", canary);
      ok(
        await call(peer, "wait_for", {
          deviceId,
          selector: { text: { value: "Welcome, alice", mode: "contains" } },
          timeoutMs: 10_000,
        }),
        "wait_for",
      );
      ok(await call(peer, "screenshot", { deviceId }), "screenshot");
      const sessionId = peer.results.at(-1)?.structuredContent.sessionId as string;
      const resource = await peer.client.readResource({ uri: `devicerail://sessions/${sessionId}` });
      await peer.close();
      await pollUntil(
        "the Session ended",
        () => sessionRow(rig.base, sessionId),
        (s) => s?.state === "ended",
      );

      const rpc = await rpcTo(rig.base);
      await rpc.hello();
      const rpcExport = await rpc.call("session.export", { sessionId });
      rpc.close();
      const httpExport = await (
        await fetch(`${rig.base}/sessions/${sessionId}/export`, { headers: authFor(rig.base) })
      ).text();
      expect(rpcExport.result).toBeDefined();
      const files = filesUnder(rig.dataDir).filter((f) => statSync(f).isFile());
      const leaks = [
        ...peer.results.flatMap((r, i) => leaksIn(forms, `tool result ${i}`, JSON.stringify(r))),
        ...leaksIn(forms, "stderr", rig.stderr()),
        ...files.flatMap((f) => leaksIn(forms, f, readFileSync(f, "latin1"))),
        ...leaksIn(forms, "session.export", JSON.stringify(rpcExport)),
        ...leaksIn(forms, "GET export", httpExport),
        ...leaksIn(forms, "resources/read", JSON.stringify(resource)),
      ];
      expect(leaks).toEqual([]);
      // The checks can see what was stored: the user name is in the database and the export.
      expect(files.some((f) => f.includes("sqlite") && readFileSync(f, "latin1").includes("alice"))).toBe(true);
      expect(httpExport).toContain("alice");
      expect(JSON.stringify(resource)).toContain("alice");
    }, 60_000);
});

describe("recording an MCP session", () => {
  for (const kind of KINDS)
    test(`its device work is one Session, listed while active and ended when the client closes, with evidence readable as a resource, over ${kind}`, async () => {
      await using rig = await openRig(kind);
      const { peer } = rig;
      const deviceId = await mockId(peer);
      const shot = ok(await call(peer, "screenshot", { deviceId }), "screenshot");
      ok(await call(peer, "tap", { deviceId, x: 640, y: 148 }), "tap");
      ok(await call(peer, "ui_tree", { deviceId }), "ui_tree");
      const sessionId = shot.structuredContent.sessionId as string;
      expect(imageOf(shot)?.mimeType).toBe("image/jpeg");
      expect(textOf(shot)).toContain(`session ${sessionId}`);

      const row = await sessionRow(rig.base, sessionId);
      expect(row).toEqual(expect.objectContaining({ id: sessionId, state: "active", deviceId }));
      const rpc = await rpcTo(rig.base);
      await rpc.hello();
      const viaRpc = ((await rpc.call("devicerail.sessions.list")).result.sessions as SessionRow[]).find(
        (s) => s.id === sessionId,
      );
      expect(viaRpc?.state).toBe("active");

      const listed = await peer.client.listResources();
      expect(listed.resources.map((r) => r.uri)).toContain(`devicerail://sessions/${sessionId}`);
      const log = await peer.client.readResource({ uri: `devicerail://sessions/${sessionId}` });
      expect(log.contents.map((c) => [c.uri, c.mimeType])).toEqual([
        [`devicerail://sessions/${sessionId}`, "application/json"],
      ]);
      const events = JSON.parse((log.contents[0] as { text: string }).text);
      expect(JSON.stringify(events)).toContain("sessionStarted");

      const observation = (await eventsOf(rig.base, sessionId)).find(
        (e) => e.payload.type === "observationCaptured" && e.payload.observation.screenshot,
      )?.payload.observation;
      const sha = observation?.screenshot.sha256 as string;
      expect(sha).toMatch(/^[0-9a-f]{64}$/);
      const evidence = await peer.client.readResource({ uri: `devicerail://evidence/${sha}` });
      const blob = evidence.contents[0] as { uri: string; mimeType?: string; blob?: string };
      expect([evidence.contents.length, blob.uri, blob.mimeType]).toEqual([
        1,
        `devicerail://evidence/${sha}`,
        "image/png",
      ]);
      expect(new Bun.CryptoHasher("sha256").update(Buffer.from(blob.blob ?? "", "base64")).digest("hex")).toBe(sha);

      await peer.close();
      const ended = await pollUntil(
        "the Session ended after the client closed",
        () => sessionRow(rig.base, sessionId),
        (s) => s?.state === "ended",
        5_000,
      );
      expect(ended?.deviceId).toBe(deviceId);
      expect((await eventsOf(rig.base, sessionId)).at(-1)?.payload.type).toBe("sessionEnded");
      // The device is free for anyone else at once.
      const tap = await fetch(`${rig.base}/devices/${deviceId}/actions/tap`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...authFor(rig.base) },
        body: '{"x":1,"y":1}',
      });
      expect(tap.status).toBe(200);
      rpc.close();
    }, 60_000);
});

describe("two MCP clients", () => {
  for (const kind of KINDS)
    test(`sign in on two devices in parallel without interfering, and the second gets device_in_use when it asks for the first's device, over ${kind}`, async () => {
      await using rig = await openRig(kind, { DEVICERAIL_MOCK_DEVICES: "2" });
      const a = rig.peer;
      const b = await rig.another();
      const [one, two] = [await mockId(a, 0), await mockId(b, 1)];
      expect([one, two]).toEqual(["mock-1", "mock-2"]);
      const run = async (peer: McpPeer, deviceId: string, user: string) => {
        ok(await call(peer, "device_observe", { deviceId }), "device_observe");
        await signIn(peer, deviceId, user, `pw-${crypto.randomUUID()}`);
        ok(
          await call(peer, "wait_for", {
            deviceId,
            selector: { text: { value: `Welcome, ${user}`, mode: "contains" } },
            timeoutMs: 10_000,
          }),
          "wait_for",
        );
        return textOf(ok(await call(peer, "ui_tree", { deviceId }), "ui_tree"));
      };
      const [treeA, treeB] = await Promise.all([run(a, one, "alice"), run(b, two, "bob")]);
      expect([
        treeA.includes("Welcome, alice"),
        treeA.includes("bob"),
        treeB.includes("Welcome, bob"),
        treeB.includes("alice"),
      ]).toEqual([true, false, true, false]);
      const sessionA = a.results.at(-1)?.structuredContent.sessionId as string;
      const sessionB = b.results.at(-1)?.structuredContent.sessionId as string;
      expect(sessionA).not.toBe(sessionB);
      expect([
        (await sessionRow(rig.base, sessionA))?.deviceId,
        (await sessionRow(rig.base, sessionB))?.deviceId,
      ]).toEqual([one, two]);
      const listed = (await call(b, "devices_list")).structuredContent.devices as {
        id: string;
        heldBy: string | null;
      }[];
      expect(listed.map((x) => [x.id, x.heldBy])).toEqual([
        [one, sessionA],
        [two, sessionB],
      ]);

      const t0 = performance.now();
      const refused = errorOf(
        await within(
          call(b, "tap", { deviceId: one, x: 640, y: 148 }),
          10_000,
          "an answer to a tap on a device another client holds",
        ),
      );
      expect([refused.isError, refused.code, refused.retryable, refused.error?.code, refused.error?.retryable]).toEqual(
        [true, "device_in_use", "true", "device_in_use", true],
      );
      expect(performance.now() - t0).toBeLessThan(5_000);
      // A's device is untouched by the refused call.
      expect(textOf(ok(await call(a, "ui_tree", { deviceId: one }), "ui_tree"))).toContain("Welcome, alice");
    }, 60_000);
});

describe("devicerail mcp over stdio killed mid-call", () => {
  test("the daemon cancels the call, ends the Session and frees the device within about a second when the process gets SIGKILL", async () => {
    await using rig = await openRig("stdio");
    const { peer, base } = rig;
    const deviceId = await mockId(peer);
    const observed = ok(await call(peer, "device_observe", { deviceId }), "device_observe");
    const sessionId = observed.structuredContent.sessionId as string;
    const before = (await eventsOf(base, sessionId)).length;
    const waiting = call(
      peer,
      "wait_for",
      { deviceId, selector: { identifier: "never_there" }, timeoutMs: 30_000 },
      { timeoutMs: 60_000 },
    ).then(
      (r) => ({ answered: r }),
      (e: unknown) => ({ failed: String(e) }),
    );
    // In flight once the daemon has recorded some of its work (its first observation or action).
    await pollUntil(
      "the wait_for call recorded in the Session",
      () => eventsOf(base, sessionId),
      (events) => events.length > before,
      10_000,
    );
    const probe = async () => {
      const r = await fetch(`${base}/devices/${deviceId}/actions/tap`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...authFor(base) },
        body: '{"x":1,"y":1}',
      });
      return { status: r.status, code: r.status === 200 ? null : ((await r.json()) as any).error?.data?.code };
    };
    // Held until the kill: the probe below measures the lease's release, not a free device.
    expect(await probe()).toEqual({ status: 409, code: "device_in_use" });
    const pid = peer.pid() as number;
    expect(pid).toBeGreaterThan(0);
    const t0 = performance.now();
    process.kill(pid, "SIGKILL");

    const freed = await pollUntil(
      "the device free after the kill",
      probe,
      (p) => p.status === 200 || p.code !== "device_in_use",
      10_000,
    );
    const freeMs = performance.now() - t0;
    console.log(`mcp stdio SIGKILL → device lease freed in ${freeMs.toFixed(0)} ms`);
    expect(freed).toEqual({ status: 200, code: null });
    const ended = await pollUntil(
      "the Session ended after the kill",
      () => sessionRow(base, sessionId),
      (s) => s?.state === "ended",
      5_000,
    );
    expect(ended?.state).toBe("ended");
    // The wait was cancelled, and the Session ended as a dropped connection's does.
    const log = (await eventsOf(base, sessionId)).map((e) => e.payload);
    expect(log.map((p) => [p.type, p.call?.name ?? p.outcome?.outcome ?? p.outcome ?? null, p.reason ?? null])).toEqual(
      [
        ["sessionStarted", null, null],
        ["observationCaptured", null, null],
        ["actionStarted", "waitForElement", null],
        ["actionCompleted", "cancelled", null],
        ["sessionEnded", "shutdown", "RPC connection closed"],
      ],
    );
    expect(freeMs).toBeLessThan(1_500);
    // The call in flight did not complete normally in the Session: no wait succeeded after the kill.
    expect("failed" in (await waiting)).toBe(true);

    // A new `devicerail mcp` works at once on the same daemon.
    await using next = await stdioPeer({ dataDir: rig.dataDir });
    const tap = ok(await call(next, "tap", { deviceId, x: 640, y: 148 }), "tap after the kill");
    expect(tap.structuredContent.sessionId).not.toBe(sessionId);
  }, 90_000);
});

describe("/mcp browser protection and the token", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "evil", version: "1" } },
  });
  const post = (base: string, headers: Record<string, string>) =>
    fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      body: initialize,
    });

  test("POST /mcp is refused with 403 permission_denied when the Origin is foreign", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    const res = await post(`http://127.0.0.1:${d.port}`, { Origin: "http://evil.test" });
    const body = (await res.json()) as any;
    expect([
      res.status,
      res.headers.get("mcp-session-id"),
      body.error.data.code,
      body.error.data.details?.reason,
    ]).toEqual([403, null, "permission_denied", "originNotAllowed"]);
  }, 30_000);

  test("POST /mcp is refused with 401 when the daemon has a token and the request none, and the SDK client is served with it", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_TOKEN: token });
    const base = `http://127.0.0.1:${d.port}`;
    const res = await post(base, {});
    expect([res.status, res.headers.get("www-authenticate"), ((await res.json()) as any).error.data.code]).toEqual([
      401,
      "Bearer",
      "authentication_required",
    ]);
    await using peer = await httpPeer(base, d.dataDir, { Authorization: `Bearer ${token}` });
    expect((await peer.client.listTools()).tools.length).toBe(TOOLS.length);
  }, 30_000);

  test("devicerail mcp attaches to its daemon with the token when DEVICERAIL_TOKEN is set", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    await using peer = await stdioPeer({ env: { DEVICERAIL_TOKEN: token } });
    const deviceId = await mockId(peer);
    ok(await call(peer, "tap", { deviceId, x: 640, y: 148 }), "tap");
    const base = await daemonReady(peer.dataDir);
    expect((await post(base, {})).status).toBe(401);
    expect(peer.stderr()).not.toContain(token);
  }, 30_000);
});

describe("image limits", () => {
  test("the screenshot is scaled to DEVICERAIL_MCP_IMAGE_MAX_EDGE and its scale stated when the setting is lower than the screen", async () => {
    await using rig = await openRig("http", { DEVICERAIL_MCP_IMAGE_MAX_EDGE: "640" });
    const deviceId = await mockId(rig.peer);
    const shot = ok(await call(rig.peer, "screenshot", { deviceId }), "screenshot");
    const image = imageOf(shot);
    const meta = await new Bun.Image(image?.bytes ?? new Uint8Array()).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["jpeg", 640, 360]);
    expect(shot.structuredContent.image).toEqual(
      expect.objectContaining({
        width: 640,
        height: 360,
        scale: 0.5,
        mimeType: "image/jpeg",
        bytes: image?.bytes.length,
      }),
    );
  }, 30_000);
});

describe("tool result size", () => {
  test("no tool result exceeded 1 MB when every call of this file is counted", () => {
    expect(allResults.length).toBeGreaterThan(0);
    const largest = allResults.reduce((m, r) => (r.bytes > m.bytes ? r : m));
    console.log(`${allResults.length} tool results; largest ${largest.bytes} bytes (${largest.tool})`);
    expect(allResults.filter((r) => r.bytes > MB).map((r) => [r.tool, r.bytes])).toEqual([]);
  });
});
