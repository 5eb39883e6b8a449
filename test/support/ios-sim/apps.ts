/**
 * What is on screen: the demo app (a login screen like research Sample B that leads to a home
 * screen with a counter and a scrolling list, a detail screen and a help tab), a minimal Safari and
 * Settings, the home screen and the lock screen. Screens are pure functions of the persisted UI
 * state; taps, text and keys change that state.
 */
import { installedApp, launchApp } from "./lifecycle.ts";
import { type AppLayout, DEMO_BUNDLE, type SimDevice, type SimState } from "./sim-state.ts";
import { frame, node, type SimNode } from "./ui-tree.ts";

export interface DemoUi {
  screen: "login" | "home" | "detail";
  tab: "account" | "help";
  email: string;
  password: string;
  remember: boolean;
  focus: "email" | "password" | null;
  error: string;
  user: string;
  count: number;
  selected: string;
  scroll: number;
  lastUrl?: string;
}

export const DEMO_ITEMS = ["Apples", "Bread", "Cheese", "Dates", "Eggs", "Figs", "Grapes", "Honey"];
const VISIBLE_ROWS = 5;
const ROW_HEIGHT = 60;
/** The password that the demo back end rejects, to exercise the error path. */
export const WRONG_PASSWORD = "wrong";

export const demoInitial = (): DemoUi => ({
  screen: "login",
  tab: "account",
  email: "",
  password: "",
  remember: true,
  focus: null,
  error: "",
  user: "",
  count: 0,
  selected: "",
  scroll: 0,
});

export function demoUi(device: SimDevice): DemoUi {
  const ui = device.ui[DEMO_BUNDLE];
  if (ui && "screen" in ui) return ui as unknown as DemoUi;
  const fresh = { ...demoInitial(), ...(ui ?? {}) };
  device.ui[DEMO_BUNDLE] = fresh as unknown as Record<string, unknown>;
  return fresh;
}

/** iOS shows a secure field's content as one bullet per character (an assumption for the fake; research §7). */
const bullets = (s: string) => "•".repeat([...s].length);

function tabBar(ui: DemoUi, w: number, h: number): SimNode {
  const tab = (label: string, name: DemoUi["tab"], x: number) =>
    node("tab", frame(x, h - 83, w / 2, 49), {
      label,
      value: ui.tab === name ? "1" : "0",
      selected: ui.tab === name,
      action: `demo:tab:${name}`,
    });
  return node("tabBar", frame(0, h - 83, w, 83), {
    children: [tab("Account", "account", 0), tab("Help", "help", w / 2)],
  });
}

function demoScreen(ui: DemoUi, w: number, h: number): SimNode {
  const fw = w - 48;
  const children: SimNode[] = [];
  if (ui.tab === "help") {
    children.push(node("text", frame(24, 140, fw, 41), { label: "Help", identifier: "help.title" }));
    children.push(
      node("text", frame(24, 201, fw, 21), { label: "Write to support@acme.example", identifier: "help.contact" }),
    );
  } else if (ui.screen === "login") {
    children.push(
      node("text", frame(24, 140, fw, 41), { label: "Sign in", identifier: "login.title" }),
      node("textField", frame(24, 221, fw, 44), {
        label: "Email",
        identifier: "login.email",
        value: ui.email || "name@example.com",
        placeholder: "name@example.com",
        focused: ui.focus === "email",
        action: "demo:focus:email",
      }),
      node("secureTextField", frame(24, 281, fw, 44), {
        label: "Password",
        identifier: "login.password",
        value: ui.password ? bullets(ui.password) : null,
        placeholder: null,
        focused: ui.focus === "password",
        action: "demo:focus:password",
      }),
      node("switch", frame(24, 341, fw, 31), {
        label: "Remember me",
        identifier: "login.remember",
        value: ui.remember ? "1" : "0",
        selected: ui.remember,
        action: "demo:remember",
      }),
      node("button", frame(24, 404, fw, 50), {
        label: "Sign In",
        identifier: "login.submit",
        enabled: ui.email !== "" && ui.password !== "",
        action: "demo:submit",
      }),
    );
    if (ui.error) children.push(node("text", frame(24, 470, fw, 21), { label: ui.error, identifier: "login.error" }));
  } else if (ui.screen === "home") {
    const rows = DEMO_ITEMS.slice(ui.scroll, ui.scroll + VISIBLE_ROWS).map((item, i) =>
      node("button", frame(0, 271 + i * ROW_HEIGHT, w, ROW_HEIGHT), {
        label: item,
        identifier: `home.item.${item.toLowerCase()}`,
        action: `demo:item:${item}`,
      }),
    );
    children.push(
      node("text", frame(24, 140, fw, 41), { label: `Welcome, ${ui.user}!`, identifier: "home.welcome" }),
      node("button", frame(24, 201, fw, 50), {
        label: `Taps: ${ui.count}`,
        identifier: "home.counter",
        action: "demo:counter",
      }),
      node("group", frame(0, 271, w, VISIBLE_ROWS * ROW_HEIGHT), {
        identifier: "home.list",
        scroll: { action: "demo:scroll", rowHeight: ROW_HEIGHT },
        children: rows,
      }),
      node("button", frame(24, 591, fw, 50), { label: "Sign Out", identifier: "home.signout", action: "demo:signout" }),
    );
  } else {
    children.push(
      node("backButton", frame(8, 62, 80, 44), { label: "Back", identifier: "BackButton", action: "demo:back" }),
      node("text", frame(24, 140, fw, 41), { label: ui.selected, identifier: "detail.title" }),
    );
  }
  if (ui.screen !== "detail") children.push(tabBar(ui, w, h));
  return node("application", frame(0, 0, w, h), { label: "Acme", children });
}

function simpleApp(label: string, children: SimNode[], w: number, h: number): SimNode {
  return node("application", frame(0, 0, w, h), { label, children });
}

function homeScreen(device: SimDevice, w: number, h: number): SimNode {
  const cols = 4;
  const cell = (w - 40) / cols;
  const icons = device.installed.map((app, i) =>
    node("icon", frame(20 + (i % cols) * cell + (cell - 64) / 2, 80 + Math.floor(i / cols) * 100, 64, 64), {
      label: app.name,
      action: `springboard:launch:${app.bundleId}`,
    }),
  );
  return simpleApp("SpringBoard", icons, w, h);
}

/** The frontmost app's layout (sim-state.ts AppLayout), or null for a full-screen app or SpringBoard. */
export function frontLayout(device: SimDevice): AppLayout | null {
  if (device.locked || device.foreground === null) return null;
  return installedApp(device, device.foreground)?.layout ?? null;
}

function shifted(n: SimNode, dx: number, dy: number): SimNode {
  return {
    ...n,
    frame: { ...n.frame, x: n.frame.x + dx, y: n.frame.y + dy },
    children: n.children.map((c) => shifted(c, dx, dy)),
  };
}

/**
 * The frontmost application's tree, as `describe-ui` and `/source` see it: in screen points, or,
 * for a letterboxed landscape-only app, in its logical landscape points (see AppLayout).
 */
export function screenTree(device: SimDevice): SimNode {
  const layout = frontLayout(device);
  if (layout?.kind === "letterbox") return appTree(device, device.screen.height, device.screen.width);
  if (layout?.kind === "window") return shifted(appTree(device, layout.width, layout.height), layout.x, layout.y);
  return appTree(device, device.screen.width, device.screen.height);
}

function appTree(device: SimDevice, w: number, h: number): SimNode {
  if (device.locked)
    return simpleApp(
      "SpringBoard",
      [node("text", frame(0, 120, w, 90), { label: "9:41", identifier: "lockscreen.time" })],
      w,
      h,
    );
  const front = device.foreground;
  if (front === null) return homeScreen(device, w, h);
  const app = installedApp(device, front);
  if (app?.kind === "demo") return demoScreen(demoUi(device), w, h);
  if (app?.kind === "safari") {
    const url = String(device.ui[front]?.lastUrl ?? "");
    return simpleApp(
      "Safari",
      [
        node("textField", frame(16, 800, w - 32, 44), {
          label: "Address",
          identifier: "TabBarItemTitle",
          value: url || "Search or enter website name",
          placeholder: "Search or enter website name",
        }),
      ],
      w,
      h,
    );
  }
  return simpleApp(app?.name ?? front, [node("text", frame(24, 100, w - 48, 41), { label: app?.name ?? front })], w, h);
}

/** The pid that AXe reports on every node: the frontmost app's process. */
export function frontPid(device: SimDevice): number {
  return device.foreground ? (device.running[device.foreground] ?? 0) : 0;
}

function submit(ui: DemoUi): void {
  if (!ui.email || !ui.password) return;
  if (ui.password === WRONG_PASSWORD) {
    ui.error = "Incorrect email or password.";
    return;
  }
  ui.user = ui.email;
  ui.error = "";
  ui.focus = null;
  ui.screen = "home";
  if (!ui.remember) ui.email = "";
  ui.password = "";
}

/** Runs a node's tap action. */
export function runAction(state: SimState, device: SimDevice, action: string): void {
  const [app, verb, ...rest] = action.split(":");
  const arg = rest.join(":");
  if (app === "springboard" && verb === "launch") {
    launchApp(state, device, arg);
    return;
  }
  if (app !== "demo") return;
  const ui = demoUi(device);
  if (verb === "focus") ui.focus = arg as DemoUi["focus"];
  else if (verb === "remember") ui.remember = !ui.remember;
  else if (verb === "submit") submit(ui);
  else if (verb === "tab") ui.tab = arg as DemoUi["tab"];
  else if (verb === "counter") ui.count++;
  else if (verb === "item") {
    ui.selected = arg;
    ui.screen = "detail";
  } else if (verb === "back") ui.screen = "home";
  else if (verb === "signout") {
    ui.screen = "login";
    ui.user = "";
    ui.focus = null;
  }
}

/** A vertical drag inside a scrollable node: finger up (negative dy) moves the list forward. */
export function runScroll(device: SimDevice, action: string, dy: number, rowHeight: number): void {
  if (action !== "demo:scroll") return;
  const ui = demoUi(device);
  const rows = Math.trunc(-dy / rowHeight);
  ui.scroll = Math.max(0, Math.min(DEMO_ITEMS.length - VISIBLE_ROWS, ui.scroll + rows));
}

/** Empties a demo text field (WDA's element clear); false when the identifier is not one. */
export function clearField(device: SimDevice, identifier: string | null): boolean {
  if (device.foreground !== DEMO_BUNDLE) return false;
  const ui = demoUi(device);
  const field = identifier === "login.email" ? "email" : identifier === "login.password" ? "password" : null;
  if (!field) return false;
  ui[field] = "";
  ui.focus = field;
  return true;
}

/** Whether typing would reach a field (the keyboard is up). */
export function hasFocusedField(device: SimDevice): boolean {
  return device.foreground === DEMO_BUNDLE && !device.locked && demoUi(device).focus !== null;
}

/** Text from the keyboard (HID keys or WDA keys) into the focused field; `\n` is Return, `\b` Backspace. */
export function typeText(device: SimDevice, text: string): void {
  if (device.foreground !== DEMO_BUNDLE || device.locked) return;
  const ui = demoUi(device);
  for (const ch of text) {
    if (ch === "\n") pressReturn(ui);
    else if (ch === "\b") backspace(ui);
    else if (ui.focus) ui[ui.focus] += ch;
  }
}

function pressReturn(ui: DemoUi): void {
  if (ui.focus === "email") ui.focus = "password";
  else if (ui.focus === "password") submit(ui);
}

function backspace(ui: DemoUi): void {
  if (ui.focus) ui[ui.focus] = [...ui[ui.focus]].slice(0, -1).join("");
}

export const HID = {
  return: 40,
  escape: 41,
  backspace: 42,
  tab: 43,
  space: 44,
  v: 25,
  a: 4,
  leftCommand: 227,
  rightCommand: 231,
} as const;

/** One HID key press (no modifiers). */
export function pressKey(device: SimDevice, keycode: number): void {
  if (device.foreground !== DEMO_BUNDLE || device.locked) return;
  const ui = demoUi(device);
  if (keycode === HID.return) pressReturn(ui);
  else if (keycode === HID.backspace) backspace(ui);
  else if (keycode === HID.tab) ui.focus = ui.focus === "email" ? "password" : "email";
  else if (keycode === HID.escape) ui.focus = null;
  else if (keycode === HID.space && ui.focus) ui[ui.focus] += " ";
}

/** A key with modifiers held: Cmd+V pastes the device pasteboard into the focused field. */
export function pressCombo(device: SimDevice, modifiers: number[], key: number): void {
  const command = modifiers.includes(HID.leftCommand) || modifiers.includes(HID.rightCommand);
  if (command && key === HID.v && device.foreground === DEMO_BUNDLE && !device.locked) {
    const ui = demoUi(device);
    if (ui.focus) ui[ui.focus] += device.pasteboard;
  }
}

/** Hardware buttons: home goes to (or unlocks to) the home screen, lock and side-button lock. */
export function pressButton(device: SimDevice, button: string): void {
  if (button === "home") {
    device.locked = false;
    device.foreground = null;
  } else if (button === "lock" || button === "side-button") device.locked = !device.locked;
}
