/**
 * The routes of the simulated UiAutomator2 server and what each does to the FakePhone. Routes,
 * bodies and answers are those of appium/appium-uiautomator2-server (mirror at v10.6.2; paths below
 * are under app/src/main/java/io/appium/uiautomator2/): server/AppiumServlet.java registers them,
 * handler/*.java implement them, model/api/**.java are the bodies. Input goes through runInput,
 * the code behind the shell's `input`, so the scenario reacts and phone.inputLog records it as it
 * would for `input tap|swipe|keyevent|text`. Research note: /work/wt/issue27-uia2.md §5-§7.
 */
import { StdinBuffer } from "./command-io.ts";
import type { FakePhone } from "./fake-phone.ts";
import { runInput } from "./input-command.ts";
import { toUia2Xml } from "./uia2-source.ts";
import { performActions } from "./uia2-actions.ts";
import {
  invalidArgument,
  missing,
  noSuchElement,
  notSimulated,
  type Uia2Context,
  Uia2Error,
  type Uia2Op,
} from "./uia2-protocol.ts";

const EXC = "io.appium.uiautomator2.common.exceptions.";

interface Route {
  method: "GET" | "POST" | "DELETE";
  /** Segments; `:x` matches any one. */
  path: string[];
  op: Uia2Op;
  /** Handlers of NoSessionCommandHandler (no session check). */
  noSession?: boolean;
  run(ctx: Uia2Context, body: Record<string, unknown>, params: Record<string, string>): unknown;
}

/** A shell-less `input` invocation: its usage errors go nowhere (the arguments here are always well formed). */
function input(phone: FakePhone, args: string[]): void {
  const stdin = new StdinBuffer();
  stdin.end();
  runInput(phone, args, {
    stdin,
    out: () => {},
    err: () => {},
    signal: new AbortController().signal,
    unplug: () => {},
  });
}

/** PointModel: x and y are required doubles, truncated to int (toNativePoint). */
function point(v: unknown, what: string): { x: number; y: number } {
  const p = v as { x?: unknown; y?: unknown } | undefined;
  if (!p || typeof p !== "object") throw invalidArgument(`${what} coordinates must be provided if element is not set`);
  // A non-number (Gson's JsonSyntaxException) is reported as missing here.
  if (typeof p.x !== "number") throw missing("PointModel", "x");
  if (typeof p.y !== "number") throw missing("PointModel", "y");
  return { x: Math.trunc(p.x), y: Math.trunc(p.y) };
}

/** Gestures with an element origin are not simulated: the fake hands out no element ids for them. */
function noOrigin(body: Record<string, unknown>): void {
  if (body.origin !== undefined || body.locator !== undefined) throw notSimulated("a gesture relative to an element");
}

/** The focused field of the app in front, as `By.focused(true)` finds it; none → no such element. */
function focusedField(phone: FakePhone): string {
  const field = phone.power.appReachable ? phone.runtime().focusedField : null;
  if (field === null) throw noSuchElement();
  return field;
}

/** SendKeysToElement.setText: `replace` sets the text, otherwise it goes after what is there (not at the cursor). */
function setText(phone: FakePhone, field: string, body: Record<string, unknown>): void {
  if (typeof body.text !== "string") throw missing("SendKeysModel", "text");
  const rt = phone.runtime();
  if (rt.focusedField !== field) throw notSimulated("typing into an element that has no focus");
  if (body.replace === true) (rt.state as Record<string, unknown>)[field] = "";
  rt.moveCursor("end");
  // ACTION_SET_TEXT leaves the cursor at the end, as moveCursor put it.
  phone.inputLog.push({ kind: "text", text: body.text, target: rt.typeText(body.text) });
}

const s = (p: string) => p.split("/").filter(Boolean);

const ROUTES: Route[] = [
  {
    // handler/Status.java; BuildConfigModel from the 10.6.6 APK's manifest (versionName, versionCode).
    method: "GET",
    path: s("/status"),
    op: "status",
    noSession: true,
    run: () => ({
      ready: true,
      message: "UiAutomator2 Server is ready to accept commands",
      build: { version: "10.6.6", versionCode: 278 },
    }),
  },
  {
    // handler/NewSession.java: the parsed W3C caps are echoed with the new id (only value.sessionId matters).
    method: "POST",
    path: s("/session"),
    op: "session",
    noSession: true,
    run: (ctx, body) => {
      const caps = body.capabilities as { alwaysMatch?: object; firstMatch?: object[] } | undefined;
      if (!caps || typeof caps !== "object")
        // NewSession wraps its InvalidArgumentException in SessionNotCreatedException(e): the cause's toString().
        throw new Uia2Error(
          500,
          "session not created",
          `${EXC}InvalidArgumentException: 'capabilities' are mandatory for session creation`,
          `${EXC}SessionNotCreatedException`,
        );
      ctx.sessionId = crypto.randomUUID();
      ctx.elements.clear();
      return { sessionId: ctx.sessionId, capabilities: { ...caps.alwaysMatch, ...caps.firstMatch?.[0] } };
    },
  },
  {
    method: "GET",
    path: s("/sessions"),
    op: "session",
    noSession: true,
    run: (ctx) => (ctx.sessionId ? [{ sessionId: ctx.sessionId, capabilities: {}, id: ctx.sessionId }] : []),
  },
  {
    method: "DELETE",
    path: s("/session/:sessionId"),
    op: "session",
    run: (ctx) => {
      ctx.sessionId = null;
      ctx.stopSoon();
      return null;
    },
  },
  {
    method: "GET",
    path: s("/session/:sessionId/source"),
    op: "source",
    run: ({ phone }) =>
      toUia2Xml(phone.tree(), {
        // As the fake's `uiautomator dump`: the tree is never rotated, so neither is the root.
        rotation: 0,
        ...phone.view,
        sdk: Number(phone.props.get("ro.build.version.sdk") ?? 29),
      }),
  },
  {
    // ScreenshotHelper.bitmapToBase64Png: Base64.NO_WRAP of the PNG.
    method: "GET",
    path: s("/session/:sessionId/screenshot"),
    op: "screenshot",
    run: ({ phone }) => Buffer.from(phone.screenshot()).toString("base64"),
  },
  {
    method: "POST",
    path: s("/session/:sessionId/appium/gestures/click"),
    op: "tap",
    run: ({ phone }, body) => {
      noOrigin(body);
      const p = point(body.offset, "Click offset");
      input(phone, ["tap", String(p.x), String(p.y)]);
      return null;
    },
  },
  {
    // GestureController.longClick: a press held `duration` ms (default the long-press timeout).
    method: "POST",
    path: s("/session/:sessionId/appium/gestures/long_click"),
    op: "gesture",
    run: (ctx, body) => {
      noOrigin(body);
      const p = point(body.offset, "Long click offset");
      const duration = body.duration === undefined ? longPressTimeout(ctx.phone) : Number(body.duration);
      if (!(duration >= 0)) throw invalidArgument("Long click duration cannot be negative");
      ctx.hold(duration);
      input(ctx.phone, ["swipe", ...[p.x, p.y, p.x, p.y].map(String), String(Math.trunc(duration))]);
      return null;
    },
  },
  {
    method: "POST",
    path: s("/session/:sessionId/appium/gestures/double_click"),
    op: "tap",
    run: ({ phone }, body) => {
      noOrigin(body);
      const p = point(body.offset, "Double click offset");
      for (let i = 0; i < 2; i++) input(phone, ["tap", String(p.x), String(p.y)]);
      return null;
    },
  },
  {
    // Drag.java takes a speed, not a duration; a drag is a long press then a move, as `input draganddrop`.
    method: "POST",
    path: s("/session/:sessionId/appium/gestures/drag"),
    op: "gesture",
    run: ({ phone }, body) => {
      noOrigin(body);
      const a = point(body.start, "The starting point");
      if (body.end === undefined || body.end === null) throw missing("DragModel", "end");
      const b = point(body.end, "The end point");
      input(phone, ["draganddrop", ...[a.x, a.y, b.x, b.y].map(String)]);
      return null;
    },
  },
  {
    method: "POST",
    path: s("/session/:sessionId/actions"),
    op: "gesture",
    run: (ctx, body) => {
      performActions(ctx, body, longPressTimeout(ctx.phone), (args) => input(ctx.phone, args));
      return null;
    },
  },
  ...(["press_keycode", "long_press_keycode"] as const).map(
    (name): Route => ({
      method: "POST",
      path: s(`/session/:sessionId/appium/device/${name}`),
      op: "key",
      run: ({ phone }, body) => {
        if (typeof body.keycode !== "number") throw missing("KeyCodeModel", "keycode");
        if (body.flags !== undefined || body.source !== undefined) throw notSimulated("key flags and sources");
        const code = String(Math.trunc(body.keycode));
        input(phone, name === "press_keycode" ? ["keyevent", code] : ["keyevent", "--longpress", code]);
        return null;
      },
    }),
  ),
  {
    method: "POST",
    path: s("/session/:sessionId/back"),
    op: "key",
    run: ({ phone }) => (input(phone, ["keyevent", "4"]), null),
  },
  {
    // SendKeysToElement without an element id acts on the focused element.
    method: "POST",
    path: s("/session/:sessionId/keys"),
    op: "text",
    run: ({ phone }, body) => (setText(phone, focusedField(phone), body), null),
  },
  {
    method: "POST",
    path: s("/session/:sessionId/element/:id/value"),
    op: "text",
    run: (ctx, body, params) => (setText(ctx.phone, element(ctx, params.id as string), body), null),
  },
  {
    // ActiveElement.java: the focused element, cached under a fresh UUID (model/api/ElementModel.java keys).
    method: "GET",
    path: s("/session/:sessionId/element/active"),
    op: "text",
    run: (ctx) => {
      const field = focusedField(ctx.phone);
      const id = crypto.randomUUID();
      ctx.elements.set(id, field);
      return { ELEMENT: id, "element-6066-11e4-a52f-4f735466cecf": id };
    },
  },
  {
    // Clear.java: element.clear(), i.e. the node's text set to empty; nothing is typed.
    method: "POST",
    path: s("/session/:sessionId/element/:id/clear"),
    op: "text",
    run: (ctx, _body, params) => {
      const field = element(ctx, params.id as string);
      (ctx.phone.runtime().state as Record<string, unknown>)[field] = "";
      ctx.phone.runtime().moveCursor("end");
      return null;
    },
  },
  {
    method: "GET",
    path: s("/session/:sessionId/appium/settings"),
    op: "settings",
    run: (ctx) => Object.fromEntries(ctx.settings),
  },
  {
    // UpdateSettings.java: unknown names are skipped; known ones are stored (their checks are not simulated).
    method: "POST",
    path: s("/session/:sessionId/appium/settings"),
    op: "settings",
    run: (ctx, body) => {
      const settings = body.settings as Record<string, unknown> | undefined;
      if (!settings || typeof settings !== "object") throw missing("SettingsModel", "settings");
      for (const [k, v] of Object.entries(settings)) if (ctx.settings.has(k)) ctx.settings.set(k, v);
      return null;
    },
  },
];

/** ElementsCache.get: an id it never handed out is "not present in the cache". */
function element(ctx: Uia2Context, id: string): string {
  const field = ctx.elements.get(id);
  if (field === undefined)
    throw noSuchElement(
      `The element identified by '${id}' is not present in the cache or has expired. Try to find it again`,
    );
  return field;
}

/**
 * ViewConfiguration.getLongPressTimeout's default: DEFAULT_LONG_PRESS_TIMEOUT is 500 in older AOSP
 * copies and 400 in a newer one (both seen in code-index excerpts of ViewConfiguration); that the
 * change came with Android 12 (API 31) is this fake's assumption.
 */
export function longPressTimeout(phone: FakePhone): number {
  return Number(phone.props.get("ro.build.version.sdk") ?? 29) >= 31 ? 400 : 500;
}

/** The route for `method` and `path` (after the `/wd/hub` prefix is gone), with its `:params`. */
export function findRoute(method: string, path: string): { route: Route; params: Record<string, string> } | null {
  const parts = s(path);
  for (const route of ROUTES) {
    if (route.method !== method || route.path.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (
      route.path.every((seg, i) =>
        seg.startsWith(":") ? ((params[seg.slice(1)] = parts[i] as string), true) : seg === parts[i],
      )
    )
      return { route, params };
  }
  return null;
}

/** Every route as `METHOD /path`, for the report and the test. */
export const UIA2_ROUTES: readonly string[] = ROUTES.map((r) => `${r.method} /${r.path.join("/")}`);
