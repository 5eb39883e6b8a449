/**
 * A fake WebDriverAgent (16.x routes, research §2.3) on 127.0.0.1:0, driving the shared simulated
 * device. Every answer is `{value, sessionId}` with the active session id; errors are
 * `{value: {error, message, traceback}}`. Creating a session kills the active one, as
 * FBSessionCommands does. When the device shuts down (or the shutdown-mid-call fault fires) the
 * server goes away like the real runner does with its simulator: connections drop, then refused.
 */
import { randomUUID } from "node:crypto";
import { button, enterText, swipe, tapAt } from "./axe-actions.ts";
import { clearField, frontPid, hasFocusedField, screenTree } from "./apps.ts";
import { launchApp, openUrl, stopApp } from "./lifecycle.ts";
import { screenshotPng } from "./screenshot.ts";
import { appendLog, readState, type SimDevice, type SimState, takeFaults, transact } from "./sim-state.ts";
import { center } from "./ui-tree.ts";
import { ElementCache, elementRef, WdaError } from "./wda-elements.ts";
import { wdaSource } from "./wda-json.ts";
import { parseRuntimeId } from "./device-catalog.ts";

export interface FakeWdaOptions {
  /** The simulator this runner lives in; default the first booted one. */
  udid?: string;
  /** Serve the pre-6.0 `/wda/tap/:uuid` instead of `/wda/tap`. */
  legacyTapRoute?: boolean;
  /** Start with a session open, as when a user's Appium is attached. */
  existingSession?: boolean;
  /**
   * Every session dies right after it is created, as when another client keeps creating its own
   * (FBSessionCommands handleCreateSession ends the active one). Default false.
   */
  sessionsDieAtOnce?: boolean;
}

export interface FakeWda {
  readonly url: string;
  readonly port: number;
  readonly udid: string;
  /** The active session, or null. */
  sessionId(): string | null;
  /** Sessions ended by a newer POST /session (not by DELETE). */
  readonly killedSessions: string[];
  /**
   * Ends the active session as a runner restart does: later calls under its id get WDA's 404
   * `invalid session id` ("Session does not exist", FBRoute.m raiseNoSessionException) with
   * `sessionId: null` (FBResponsePayload.m:94).
   */
  expireSession(): void;
  readonly running: boolean;
  close(): Promise<void>;
}

type Body = Record<string, unknown>;
type Handler = (ctx: {
  state: SimState;
  device: SimDevice;
  body: Body;
  params: string[];
  query: URLSearchParams;
}) => unknown;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeWda(dir: string, options: FakeWdaOptions = {}): Promise<FakeWda> {
  const udid = options.udid ?? readState(dir).devices.find((d) => d.state === "Booted")?.udid;
  if (!udid) throw new Error("fake WDA: no booted simulator to run in");
  let session: string | null = options.existingSession ? randomUUID().toUpperCase() : null;
  const killedSessions: string[] = [];
  const cache = new ElementCache();
  let running = true;

  const device = (s: SimState) => s.devices.find((d) => d.udid === udid) as SimDevice;
  const tree = (s: SimState) => screenTree(device(s));
  const at = (body: Body, k: string) => Number(body[k]);

  const sessionless: Record<string, Handler> = {
    "GET /status": ({ device: d }) => {
      const { version } = parseRuntimeId(d.runtime);
      return {
        ready: true,
        message: "WebDriverAgent is ready to accept commands",
        state: "success",
        os: { name: "iOS", version, sdkVersion: version, testmanagerdVersion: 65535 },
        ios: { simulatorVersion: version, ip: null },
        build: {
          time: "Nov 20 2026 10:12:44",
          productBundleIdentifier: "com.facebook.WebDriverAgentRunner",
          version: "16.7.0",
        },
        device: d.deviceTypeIdentifier.includes("iPad") ? "ipad" : "iphone",
      };
    },
    "GET /source": ({ state, query }) => {
      const format = query.get("format") ?? "xml";
      if (format !== "json")
        throw new WdaError(500, "unknown error", `fake WDA: /source?format=${format} is not modelled`);
      return wdaSource(tree(state));
    },
    "GET /screenshot": ({ device: d }) => Buffer.from(screenshotPng(d)).toString("base64"),
    "GET /wda/screen": ({ device: d }) => ({
      screenSize: { width: d.screen.width, height: d.screen.height },
      statusBarSize: { width: d.screen.width, height: 62 },
      scale: d.screen.scale,
    }),
    "GET /wda/device/info": ({ device: d }) => ({
      timeZone: "Europe/Berlin",
      currentLocale: "en_US",
      model: d.deviceTypeIdentifier.includes("iPad") ? "iPad" : "iPhone",
      uuid: "5B1E2C3D-4F5A-4B6C-8D7E-9F0A1B2C3D4E",
      userInterfaceIdiom: d.deviceTypeIdentifier.includes("iPad") ? 1 : 0,
      userInterfaceStyle: d.appearance,
      name: d.name,
      isSimulator: true,
    }),
    "POST /wda/homescreen": ({ device: d }) => void button(d, "home", null, "wda"),
    "GET /wda/activeAppInfo": ({ device: d }) => ({
      bundleId: d.foreground ?? "com.apple.springboard",
      name: "",
      pid: frontPid(d),
      processArguments: { env: {}, args: [] },
    }),
    "GET /orientation": () => "PORTRAIT",
    "POST /session": ({ state, device: d, body }) => {
      if (session) killedSessions.push(session);
      session = randomUUID().toUpperCase();
      const caps =
        ((body.capabilities as Body | undefined)?.alwaysMatch as Body | undefined) ??
        (body.desiredCapabilities as Body | undefined) ??
        {};
      if (typeof caps.bundleId === "string") launchApp(state, d, caps.bundleId);
      return {
        sessionId: session,
        capabilities: {
          device: "iphone",
          browserName: d.foreground ?? "SpringBoard",
          sdkVersion: parseRuntimeId(d.runtime).version,
          CFBundleIdentifier: d.foreground ?? "com.apple.springboard",
        },
      };
    },
  };

  const tapRoute = options.legacyTapRoute ? "POST /wda/tap/:uuid" : "POST /wda/tap";
  const withSession: Record<string, Handler> = {
    "DELETE /": () => {
      session = null;
      return null;
    },
    [tapRoute]: ({ state, device: d, body }) => void tapAt(state, d, at(body, "x"), at(body, "y"), "wda"),
    "POST /wda/doubleTap": ({ state, device: d, body }) =>
      void tapAt(state, d, at(body, "x"), at(body, "y"), "wda", "double-tap"),
    "POST /wda/touchAndHold": ({ state, device: d, body }) =>
      void tapAt(state, d, at(body, "x"), at(body, "y"), "wda", "long-press", at(body, "duration")),
    "POST /wda/dragfromtoforduration": ({ device: d, body }) =>
      void swipe(
        d,
        { x: at(body, "fromX"), y: at(body, "fromY") },
        { x: at(body, "toX"), y: at(body, "toY") },
        at(body, "duration"),
        "wda",
      ),
    "POST /wda/keys": ({ device: d, body }) => {
      const text = ((body.value as unknown[] | undefined) ?? []).map(String).join("");
      if (!hasFocusedField(d))
        throw new WdaError(400, "invalid element state", "The on-screen keyboard must be present to send keys");
      enterText(d, text, "wda");
      return null;
    },
    "POST /wda/pressButton": ({ device: d, body }) => {
      const name = String(body.name ?? "");
      if (name !== "home")
        throw new WdaError(
          500,
          "unknown error",
          `The button '${name}' is not supported. The device under test only supports the following buttons: (home)`,
        );
      button(d, name, null, "wda");
      return null;
    },
    "POST /url": ({ state, device: d, body }) => {
      if (!openUrl(state, d, String(body.url ?? "")))
        throw new WdaError(500, "unknown error", `Failed to open ${String(body.url)}`);
      return null;
    },
    "POST /wda/apps/launch": ({ state, device: d, body }) =>
      void launchApp(state, d, String(body.bundleId), { args: (body.arguments as string[] | undefined) ?? [] }),
    "POST /wda/apps/activate": ({ state, device: d, body }) => void launchApp(state, d, String(body.bundleId)),
    "POST /wda/apps/terminate": ({ device: d, body }) => stopApp(d, String(body.bundleId)),
    "POST /wda/apps/state": ({ device: d, body }) => {
      const b = String(body.bundleId);
      return d.running[b] === undefined ? 1 : d.foreground === b ? 4 : 3;
    },
    "POST /wda/keyboard/dismiss": ({ device: d }) =>
      void d.input.push({ via: "wda", kind: "key", keys: [], target: "keyboard-dismiss" }),
    "POST /actions": ({ state, device: d, body }) => runActions(state, d, body),
    "POST /element": ({ state, body }) =>
      elementRef(cache.find(tree(state), String(body.using), String(body.value), false)[0] as string),
    "POST /elements": ({ state, body }) =>
      cache.find(tree(state), String(body.using), String(body.value), true).map(elementRef),
    "POST /element/:uuid/click": ({ state, device: d, params }) => {
      const c = center(cache.resolve(tree(state), params[0] as string).frame);
      tapAt(state, d, c.x, c.y, "wda");
      return null;
    },
    "POST /element/:uuid/value": ({ state, device: d, body, params }) => {
      const n = cache.resolve(tree(state), params[0] as string);
      if (!n.focused) tapAt(state, d, center(n.frame).x, center(n.frame).y, "wda");
      const text = Array.isArray(body.value) ? body.value.map(String).join("") : String(body.text ?? "");
      enterText(d, text, "wda");
      return null;
    },
    "POST /element/:uuid/clear": ({ state, device: d, params }) => {
      const n = cache.resolve(tree(state), params[0] as string);
      if (!clearField(d, n.identifier))
        throw new WdaError(400, "invalid element state", "Cannot clear the value of a non-text element");
      return null;
    },
    "GET /element/:uuid/text": ({ state, params }) => {
      const n = cache.resolve(tree(state), params[0] as string);
      return n.label ?? n.value ?? "";
    },
    "GET /element/:uuid/rect": ({ state, params }) => cache.resolve(tree(state), params[0] as string).frame,
    "GET /element/:uuid/enabled": ({ state, params }) => cache.resolve(tree(state), params[0] as string).enabled,
    "GET /element/:uuid/displayed": ({ state, params }) => (cache.resolve(tree(state), params[0] as string), true),
    "GET /element/:uuid/attribute/:name": ({ state, params }) =>
      cache.attribute(tree(state), params[0] as string, params[1] as string),
  };

  /** W3C pointer actions reduced to what the device sees: a tap, a long press or a drag. */
  function runActions(state: SimState, d: SimDevice, body: Body): null {
    for (const seq of (body.actions as Body[] | undefined) ?? []) {
      if (seq.type !== "pointer") continue;
      let pos = { x: 0, y: 0 };
      let down: { x: number; y: number } | null = null;
      let held = 0;
      for (const a of (seq.actions as Body[] | undefined) ?? []) {
        if (a.type === "pointerMove") pos = { x: Number(a.x), y: Number(a.y) };
        else if (a.type === "pointerDown") down = { ...pos };
        else if (a.type === "pause" && down) held += Number(a.duration ?? 0);
        else if (a.type === "pointerUp" && down) {
          const moved = Math.hypot(pos.x - down.x, pos.y - down.y) > 10;
          if (moved) swipe(d, down, pos, held / 1000, "wda");
          else if (held >= 500) tapAt(state, d, down.x, down.y, "wda", "long-press", held / 1000);
          else tapAt(state, d, down.x, down.y, "wda");
          down = null;
          held = 0;
        }
      }
    }
    return null;
  }

  const match = (
    table: Record<string, Handler>,
    method: string,
    path: string,
  ): { h: Handler; params: string[] } | null => {
    for (const [route, h] of Object.entries(table)) {
      const [m, pattern] = route.split(" ") as [string, string];
      if (m !== method) continue;
      const re = new RegExp(`^${pattern.replace(/:[a-z]+/g, "([^/]+)")}$`);
      const hit = re.exec(path);
      if (hit) return { h, params: hit.slice(1) };
    }
    return null;
  };

  const reply = (value: unknown, status = 200) => Response.json({ value, sessionId: session }, { status });
  const errorReply = (e: WdaError) => reply({ error: e.error, message: e.message, traceback: "" }, e.status);

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const bodyText = req.method === "POST" ? await req.text() : "";
      const id = `wda-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
      appendLog(dir, {
        t: "start",
        id,
        tool: "wda",
        argv: [req.method, url.pathname + url.search],
        childEnv: {},
        pid: process.pid,
      });
      if (bodyText) appendLog(dir, { t: "stdin", id, data: bodyText });
      const done = (r: Response) => {
        appendLog(dir, { t: "end", id, exitCode: r.status });
        return r;
      };
      let path = url.pathname.replace(/\/+$/, "") || "/";
      const sm = /^\/session\/([^/]+)(\/.*)?$/.exec(path);
      const sid = sm?.[1] ?? null;
      if (sm) path = sm[2] ?? "/";
      const command = `${req.method} ${path}`;

      const faults = readState(dir).faults.length > 0 ? transact(dir, (s) => takeFaults(s, "wda", command, udid)) : [];
      for (const f of faults) if (f.mode === "slow") await sleep(f.ms ?? 1000);
      if (faults.some((f) => f.mode === "hang")) {
        // Held open until the client gives up, as a wedged runner does.
        await new Promise((r) => req.signal.addEventListener("abort", r));
        return done(new Response(null, { status: 499 }));
      }
      const fail = faults.find((f) => f.mode === "fail");
      if (fail)
        return done(
          fail.stdout
            ? new Response(fail.stdout, { status: fail.exitCode ?? 500 })
            : errorReply(new WdaError(fail.exitCode ?? 500, "unknown error", fail.stderr ?? "injected failure")),
        );
      const down = faults.find((f) => f.mode === "shutdown-mid-call");
      if (down || readState(dir).devices.find((d) => d.udid === udid)?.state !== "Booted") {
        if (down) await sleep(down.ms ?? 20);
        if (down)
          transact(
            dir,
            (s) => void Object.assign(device(s), { state: "Shutdown", running: {}, ui: {}, foreground: null }),
          );
        running = false;
        void server.stop(true);
        return done(new Response(null, { status: 503 }));
      }

      // Every answer after the faults and the runner's liveness: the routes.
      const routed = async (): Promise<Response> => {
        let found = match(sessionless, req.method, path);
        if (!found) {
          if (sid !== null && sid !== session)
            return done(errorReply(new WdaError(404, "invalid session id", "Session does not exist")));
          if (sid !== null) found = match(withSession, req.method, path);
        }
        if (!found) {
          return done(
            errorReply(
              new WdaError(
                404,
                "unknown command",
                `Unhandled endpoint: ${url.pathname} -- http://${url.host}/ with parameters {\n    wildcards = (\n        "${url.pathname.slice(1)}"\n    );\n}`,
              ),
            ),
          );
        }
        let body: Body = {};
        try {
          body = bodyText ? (JSON.parse(bodyText) as Body) : {};
        } catch {
          return done(errorReply(new WdaError(400, "invalid argument", "Request body is not valid JSON")));
        }
        try {
          const h = found.h;
          const params = found.params;
          const value = transact(dir, (s) => h({ state: s, device: device(s), body, params, query: url.searchParams }));
          const r = reply(value ?? null);
          if (faults.some((f) => f.mode === "malformed-json")) {
            const text = await r.text();
            return done(
              new Response(text.slice(0, Math.floor(text.length / 2)), {
                status: 200,
                headers: { "content-type": "application/json" },
              }),
            );
          }
          return done(r);
        } catch (e) {
          if (e instanceof WdaError) return done(errorReply(e));
          throw e;
        }
      };
      if (command === "POST /session" && options.sessionsDieAtOnce) {
        // The session is gone as soon as its id has been handed out.
        const r = await routed();
        session = null;
        return r;
      }
      return routed();
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port as number,
    udid,
    sessionId: () => session,
    killedSessions,
    expireSession: () => void (session = null),
    get running() {
      return running;
    },
    async close() {
      running = false;
      await server.stop(true);
    },
  };
}
