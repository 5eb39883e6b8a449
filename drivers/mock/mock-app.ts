import type { UiContextRef, UiNode, UiState } from "../../src/protocol/types/ui.ts";

/** The package-like id of the scripted app; it is the UI context id of every tree. */
export const MOCK_APP_ID = "com.devicerail.mock";
export const SCREEN = { width: 1280, height: 720 } as const;

export type ScreenName = "login" | "home" | "settings" | "about";
type Role = "Window" | "Text" | "TextField" | "SecureTextField" | "Button" | "Switch" | "List" | "ListItem";

/** One node as the app lays it out, before bounds are assigned. */
interface Widget {
  id: string;
  role: Role;
  name: string | null;
  text: string | null;
  value?: string | null;
  height: number;
  enabled?: boolean;
  /** Whether taps land on it (its reaction is in MockApp.handlers). */
  tappable?: boolean;
  children?: Widget[];
}

interface Field {
  text: string;
  /** A field that ever received secret input shows only bullets from then on. */
  masked: boolean;
}

const COLUMN = { x: 400, width: 480, top: 40, gap: 16 } as const;
/** Observations between tapping Sync and the result appearing (a deterministic "slow" load). */
export const SYNC_OBSERVATIONS = 3;

const bullets = (s: string) => "•".repeat([...s].length);

/**
 * A small deterministic app: sign in, a home screen with a sync that completes a few observations
 * later, a settings screen with a switch, and an about screen. Taps hit-test the current tree;
 * text goes to the focused field. Each navigation starts a new document epoch, so node references
 * into a previous screen become stale.
 */
export class MockApp {
  screen: ScreenName = "login";
  private epoch = 1;
  private readonly back: ScreenName[] = [];
  private readonly fields: Record<"username" | "password", Field> = {
    username: { text: "", masked: false },
    password: { text: "", masked: true },
  };
  private focused: "username" | "password" | null = null;
  private syncLeft: number | null = null;
  private synced = 0;
  darkMode = false;

  context(): UiContextRef {
    return { contextKind: "native", contextId: MOCK_APP_ID, documentEpoch: `${this.screen}-${this.epoch}` };
  }

  /** The stable id of the focused field, for the screenshot's focus ring. */
  focusedNodeId(): string | null {
    return this.focused && this.screen === "login" ? `login/${this.focused}` : null;
  }

  /**
   * stableNodeId → states, in preorder and only for nodes that have one: the focused field, the
   * password field (always, as Android reports `password="true"` whatever it holds) and the
   * dark-mode switch while it is on.
   */
  states(): Record<string, UiState[]> {
    const out: Record<string, UiState[]> = {};
    if (this.screen === "login") {
      if (this.focused === "username") out["login/username"] = ["focused"];
      out["login/password"] = this.focused === "password" ? ["focused", "password"] : ["password"];
    }
    if (this.screen === "settings" && this.darkMode) out["settings/dark_mode"] = ["checked"];
    return out;
  }

  /** Advances time-like state by one observation (the pending sync). */
  tick(): void {
    if (this.syncLeft === null) return;
    this.syncLeft--;
    if (this.syncLeft <= 0) {
      this.syncLeft = null;
      this.synced++;
    }
  }

  tree(): UiNode[] {
    const screen = this.screen;
    const out: UiNode[] = [
      node(screen, { id: "", role: "Window", name: null, text: null, height: SCREEN.height }, null, {
        x: 0,
        y: 0,
        ...SCREEN,
      }),
    ];
    const place = (ws: Widget[], parent: string, x: number, top: number, width: number, gap: number) => {
      let y = top;
      for (const w of ws) {
        out.push(node(screen, w, parent, { x, y, width, height: w.height }));
        if (w.children) place(w.children, `${screen}/${w.id}`, x + 8, y + 8, width - 16, 8);
        y += w.height + gap;
      }
    };
    place(this.widgets(), screen, COLUMN.x, COLUMN.top, COLUMN.width, COLUMN.gap);
    return out;
  }

  /** A tap at a point: the deepest tappable widget containing it reacts; later siblings win. */
  tap(x: number, y: number): string | null {
    const nodes = this.tree();
    let hit: UiNode | null = null;
    for (const n of nodes) {
      const b = n.bounds;
      if (b && n.hittable && x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height) hit = n;
    }
    if (!hit) {
      this.focused = null;
      return null;
    }
    // A disabled control swallows the tap, as on a phone: nothing happens, focus stays.
    if (hit.enabled === false) return null;
    const id = hit.stableNodeId.slice(this.screen.length + 1);
    this.handlers()[id]?.();
    return id;
  }

  type(text: string, secret: boolean): void {
    if (!this.focused) return;
    const f = this.fields[this.focused];
    f.text += text;
    if (secret) f.masked = true;
  }

  clearFocused(): void {
    if (this.focused) this.fields[this.focused] = { text: "", masked: this.focused === "password" };
  }

  goBack(): void {
    const prev = this.back.pop();
    if (prev) this.show(prev, false);
  }

  private show(screen: ScreenName, push = true): void {
    if (push) this.back.push(this.screen);
    this.screen = screen;
    this.epoch++;
    this.focused = null;
  }

  private handlers(): Record<string, () => void> {
    return {
      username: () => (this.focused = "username"),
      password: () => (this.focused = "password"),
      sign_in: () => {
        this.back.length = 0;
        this.show("home", false);
      },
      sync: () => (this.syncLeft = SYNC_OBSERVATIONS),
      settings: () => this.show("settings"),
      about: () => this.show("about"),
      dark_mode: () => (this.darkMode = !this.darkMode),
      back: () => this.goBack(),
      sign_out: () => {
        this.fields.username = { text: "", masked: false };
        this.fields.password = { text: "", masked: true };
        this.syncLeft = null;
        this.synced = 0;
        this.back.length = 0;
        this.show("login", false);
      },
    };
  }

  private shown(field: "username" | "password"): string {
    const f = this.fields[field];
    return f.masked ? bullets(f.text) : f.text;
  }

  private widgets(): Widget[] {
    const title = (text: string): Widget => ({ id: "title", role: "Text", name: null, text, height: 64 });
    const button = (id: string, text: string, enabled = true): Widget => ({
      id,
      role: "Button",
      name: text,
      text,
      height: 56,
      enabled,
      tappable: true,
    });
    switch (this.screen) {
      case "login": {
        const ready = this.fields.username.text !== "" && this.fields.password.text !== "";
        return [
          title("Sign in"),
          {
            id: "username",
            role: "TextField",
            name: "User name",
            text: this.shown("username"),
            value: this.shown("username"),
            height: 56,
            tappable: true,
          },
          {
            id: "password",
            role: "SecureTextField",
            name: "Password",
            text: this.shown("password"),
            value: this.shown("password"),
            height: 56,
            tappable: true,
          },
          button("sign_in", "Sign in", ready),
        ];
      }
      case "home": {
        const status =
          this.syncLeft !== null ? "Syncing..." : this.synced > 0 ? `Synced ${this.synced * 3} items` : "Not synced";
        return [
          title(`Welcome, ${this.shown("username")}`),
          { id: "status", role: "Text", name: null, text: status, height: 40 },
          button("sync", "Sync", this.syncLeft === null),
          {
            id: "menu",
            role: "List",
            name: "Menu",
            text: null,
            height: 2 * 56 + 3 * 8,
            children: [
              { id: "settings", role: "ListItem", name: "Settings", text: "Settings", height: 56, tappable: true },
              { id: "about", role: "ListItem", name: "About", text: "About", height: 56, tappable: true },
            ],
          },
          button("sign_out", "Sign out"),
        ];
      }
      case "settings":
        return [
          title("Settings"),
          {
            id: "dark_mode",
            role: "Switch",
            name: "Dark mode",
            text: "Dark mode",
            value: this.darkMode ? "on" : "off",
            height: 56,
            tappable: true,
          },
          button("back", "Back"),
        ];
      case "about":
        return [
          title("About"),
          { id: "version", role: "Text", name: null, text: "DeviceRail Mock App 1.0", height: 40 },
          button("back", "Back"),
        ];
    }
  }
}

function node(
  screen: ScreenName,
  w: Widget,
  parent: string | null,
  bounds: { x: number; y: number; width: number; height: number },
): UiNode {
  return {
    stableNodeId: parent === null ? screen : `${screen}/${w.id}`,
    parentStableNodeId: parent,
    role: w.role,
    name: w.name,
    value: w.value ?? null,
    identifier: parent === null ? null : w.id,
    text: w.text,
    bounds,
    enabled: w.enabled ?? true,
    hittable: w.tappable === true,
  };
}
