/**
 * Scriptable app screens for the simulated phone. A Scenario maps screen names to functions of
 * (state, view) that return a UiNode tree; ScenarioRuntime keeps the current screen, the state,
 * the back stack and the focused field, and applies taps, scrolls, typed text and keys to them.
 */

export interface View {
  width: number;
  height: number;
}

/** `[x1, y1, x2, y2]`, as uiautomator's `bounds="[x1,y1][x2,y2]"`. */
export type Bounds = readonly [number, number, number, number];

export interface UiNode<S = any> {
  className?: string;
  text?: string;
  resourceId?: string;
  contentDesc?: string;
  /** Defaults to the scenario's package. */
  package?: string;
  checkable?: boolean;
  checked?: boolean;
  clickable?: boolean;
  /** Default true. */
  enabled?: boolean;
  focusable?: boolean;
  scrollable?: boolean;
  longClickable?: boolean;
  password?: boolean;
  selected?: boolean;
  /** Default true; invisible nodes are left out of dumps, screenshots and hit tests. */
  visible?: boolean;
  bounds?: Bounds;
  children?: UiNode<S>[];
  /** Layout hints for vstack: this node's height, and the padding and gap for its own children. */
  height?: number;
  padding?: number;
  gap?: number;
  /**
   * Makes this an editable field (class EditText unless given) whose text is `state[field]`:
   * a tap focuses it, `input text` appends to it, KEYCODE_DEL removes its last character.
   */
  field?: string;
  /** Shown as the field's text while it is empty. */
  hint?: string;
  onTap?: (ctx: ScenarioContext<S>) => void;
  /** A swipe starting on this scrollable node; dx/dy are how far the content should move (finger start minus end). */
  onScroll?: (ctx: ScenarioContext<S>, delta: { dx: number; dy: number }) => void;
  /** KEYCODE_ENTER while this field is focused. */
  onSubmit?: (ctx: ScenarioContext<S>) => void;
}

export interface ScenarioContext<S> {
  state: S;
  /** Shows `screen`, pushing the current one on the back stack unless `replace`. */
  goto(screen: string, options?: { replace?: boolean }): void;
  back(): void;
  /** An app log line (kept in FakePhone.appLog). */
  log(tag: string, message: string): void;
  /** Brings another installed app to the front (as a launcher icon does). */
  launch(pkg: string): void;
}

export interface Scenario<S extends object = any> {
  package: string;
  /** Launcher activity, fully qualified (e.g. `com.example.app.MainActivity`). */
  activity: string;
  label?: string;
  /** Default true. False: `activity` is not declared MAIN/LAUNCHER, so nothing starts the app by package. */
  launcher?: boolean;
  initial: string;
  /** Initial state; cloned on start and after `am force-stop`. */
  state: S;
  screens: Record<string, (state: S, view: View) => UiNode<S>>;
  /**
   * More MAIN/LAUNCHER activities besides `activity` (fully qualified), as apps with a debug or
   * alias entry point declare. With any, the package's LAUNCHER intent has no default among
   * several, and `cmd package resolve-activity` answers the platform's chooser,
   * `android/com.android.internal.app.ResolverActivity` (appium/appium#17128; appium/appium-adb
   * lib/tools/types.ts `preferCmd`), while `cmd package query-activities` lists them all.
   */
  extraLaunchers?: string[];
  /** The activity each screen belongs to, for `dumpsys window`; default `activity`. */
  activities?: Record<string, string>;
  /** `am start -a android.intent.action.VIEW -d URL` for this package; return false to refuse. */
  onUrl?: (url: string, ctx: ScenarioContext<S>) => boolean;
}

/** A visible node with every uiautomator attribute resolved. */
export interface SnapshotNode {
  index: number;
  text: string;
  resourceId: string;
  className: string;
  package: string;
  contentDesc: string;
  checkable: boolean;
  checked: boolean;
  clickable: boolean;
  enabled: boolean;
  focusable: boolean;
  focused: boolean;
  scrollable: boolean;
  longClickable: boolean;
  password: boolean;
  selected: boolean;
  bounds: Bounds;
  children: SnapshotNode[];
  source: UiNode;
}

export interface StackOptions {
  x?: number;
  y?: number;
  width: number;
  padding?: number;
  gap?: number;
}

const DEFAULT_ITEM_HEIGHT = 120;

/**
 * Lays `items` out top to bottom inside a column (padding on every side, `gap` between items),
 * each `height` tall (default 120). Children without bounds are stacked inside their parent the
 * same way, with the parent's own `padding` and `gap`, so tests never write bounds by hand.
 */
export function vstack<S>(options: StackOptions, items: readonly UiNode<S>[]): UiNode<S>[] {
  const pad = options.padding ?? 0;
  const x = (options.x ?? 0) + pad;
  const width = options.width - 2 * pad;
  let y = (options.y ?? 0) + pad;
  return items.map((item) => {
    if (item.visible === false) return item;
    const bounds: Bounds = item.bounds ?? [x, y, x + width, y + (item.height ?? DEFAULT_ITEM_HEIGHT)];
    y = bounds[3] + (options.gap ?? 0);
    const children = item.children && stackChildren(item.children, bounds, item);
    return { ...item, bounds, ...(children ? { children } : {}) };
  });
}

function stackChildren<S>(children: UiNode<S>[], [x1, y1, x2]: Bounds, parent: UiNode<S>): UiNode<S>[] {
  if (children.every((c) => c.bounds)) return children;
  return vstack({ x: x1, y: y1, width: x2 - x1, padding: parent.padding ?? 0, gap: parent.gap ?? 0 }, children);
}

/** The full-screen root a real dump starts with, holding `children` stacked from the top when they lack bounds. */
export function screenRoot<S>(
  view: View,
  children: UiNode<S>[],
  options: { padding?: number; gap?: number; top?: number } = {},
): UiNode<S> {
  const laid = vstack(
    { y: options.top ?? 0, width: view.width, padding: options.padding ?? 0, gap: options.gap ?? 0 },
    children,
  );
  return { className: "android.widget.FrameLayout", bounds: [0, 0, view.width, view.height], children: laid };
}

const contains = (b: Bounds, x: number, y: number) => x >= b[0] && x < b[2] && y >= b[1] && y < b[3];

/** Nodes in paint order: a parent before its children, earlier siblings before later ones. */
export function paintOrder(root: SnapshotNode): SnapshotNode[] {
  const out: SnapshotNode[] = [];
  const walk = (n: SnapshotNode) => {
    out.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  return out;
}

/** The topmost node accepted by `pick` that contains the point (later siblings and children win). */
export function hitTest(
  root: SnapshotNode,
  x: number,
  y: number,
  pick: (n: SnapshotNode) => boolean,
): SnapshotNode | null {
  return paintOrder(root).findLast((n) => pick(n) && contains(n.bounds, x, y)) ?? null;
}

export class ScenarioRuntime<S extends object = any> {
  screen: string;
  state: S;
  readonly backStack: string[] = [];
  /** The `field` of the focused EditText. */
  focusedField: string | null = null;
  /**
   * The cursor in the focused field, in code points; null means "at the end". A tap that focuses
   * a field puts it at the end (Android puts it at the tapped character, which for a tap on a
   * field's right part or an empty field is the end).
   */
  cursor: number | null = null;

  constructor(
    readonly scenario: Scenario<S>,
    private readonly host: { log(tag: string, message: string): void; launch(pkg: string): void; background(): void },
  ) {
    this.screen = scenario.initial;
    this.state = structuredClone(scenario.state);
  }

  /** Back to the initial screen and state, as after `am force-stop`. */
  reset(): void {
    this.screen = this.scenario.initial;
    this.state = structuredClone(this.scenario.state);
    this.backStack.length = 0;
    this.focusedField = null;
    this.cursor = null;
  }

  get activity(): string {
    return this.scenario.activities?.[this.screen] ?? this.scenario.activity;
  }

  context(): ScenarioContext<S> {
    return {
      state: this.state,
      goto: (screen, options) => {
        if (!this.scenario.screens[screen]) throw new Error(`scenario ${this.scenario.package}: no screen "${screen}"`);
        if (!options?.replace) this.backStack.push(this.screen);
        this.screen = screen;
        this.focusedField = null;
        this.cursor = null;
      },
      back: () => void this.back(),
      log: (tag, message) => this.host.log(tag, message),
      launch: (pkg) => this.host.launch(pkg),
    };
  }

  snapshot(view: View): SnapshotNode {
    const render = this.scenario.screens[this.screen];
    if (!render) throw new Error(`scenario ${this.scenario.package}: no screen "${this.screen}"`);
    return resolve(
      render(this.state, view),
      0,
      this.scenario.package,
      this.state as Record<string, unknown>,
      this.focusedField,
    );
  }

  /** Applies a tap; returns the node it landed on (topmost enabled clickable one), if any. */
  tap(x: number, y: number, view: View): SnapshotNode | null {
    const target = hitTest(this.snapshot(view), x, y, (n) => n.clickable && n.enabled);
    if (!target) return null;
    if (target.source.field) {
      this.focusedField = target.source.field;
      this.cursor = null;
    }
    target.source.onTap?.(this.context());
    return target;
  }

  /** A swipe: the topmost scrollable node under its start point scrolls by start minus end. */
  swipe(x1: number, y1: number, x2: number, y2: number, view: View): SnapshotNode | null {
    const target = hitTest(this.snapshot(view), x1, y1, (n) => n.scrollable);
    target?.source.onScroll?.(this.context(), { dx: x1 - x2, dy: y1 - y2 });
    return target;
  }

  /** The focused field's text as code points, its cursor clamped into it; null when nothing is focused. */
  private field(): { name: string; chars: string[]; at: number } | null {
    const name = this.focusedField;
    if (!name) return null;
    const chars = Array.from(((this.state as Record<string, unknown>)[name] as string | undefined) ?? "");
    return { name, chars, at: this.cursor === null ? chars.length : Math.min(this.cursor, chars.length) };
  }

  private store(f: { name: string; chars: string[] }, at: number): string {
    (this.state as Record<string, unknown>)[f.name] = f.chars.join("");
    this.cursor = at >= f.chars.length ? null : at;
    return f.name;
  }

  /** Inserts at the cursor of the focused field; returns its name, or null when nothing is focused. */
  typeText(text: string): string | null {
    const f = this.field();
    if (!f) return null;
    const typed = Array.from(text);
    f.chars.splice(f.at, 0, ...typed);
    return this.store(f, f.at + typed.length);
  }

  /** KEYCODE_DEL: removes the character (code point) before the cursor. */
  deleteChar(): string | null {
    const f = this.field();
    if (!f) return null;
    if (f.at === 0) return f.name;
    f.chars.splice(f.at - 1, 1);
    return this.store(f, f.at - 1);
  }

  /** KEYCODE_FORWARD_DEL: removes the character after the cursor. */
  forwardDeleteChar(): string | null {
    const f = this.field();
    if (!f) return null;
    f.chars.splice(f.at, 1);
    return this.store(f, f.at);
  }

  /** MOVE_HOME / MOVE_END / DPAD_LEFT / DPAD_RIGHT inside the focused field. */
  moveCursor(to: "home" | "end" | -1 | 1): string | null {
    const f = this.field();
    if (!f) return null;
    const at = to === "home" ? 0 : to === "end" ? f.chars.length : Math.max(0, Math.min(f.chars.length, f.at + to));
    this.cursor = at >= f.chars.length ? null : at;
    return f.name;
  }

  submit(view: View): void {
    if (!this.focusedField) return;
    const node = paintOrder(this.snapshot(view)).find((n) => n.source.field === this.focusedField);
    node?.source.onSubmit?.(this.context());
  }

  /** KEYCODE_BACK: the previous screen, or (at the root) the app leaves the foreground. */
  back(): void {
    const previous = this.backStack.pop();
    this.focusedField = null;
    this.cursor = null;
    if (previous !== undefined) this.screen = previous;
    else {
      this.screen = this.scenario.initial;
      this.host.background();
    }
  }
}

const NAF_EXCLUDED = new Set([
  "android.widget.GridView",
  "android.widget.GridLayout",
  "android.widget.ListView",
  "android.widget.TableLayout",
]);

function resolve(
  node: UiNode,
  index: number,
  pkg: string,
  state: Record<string, unknown>,
  focusedField: string | null,
): SnapshotNode {
  const field = node.field;
  const value = field ? String(state[field] ?? "") : "";
  // Android reports a password field's text as one bullet per character.
  const fieldText = value ? (node.password ? "\u2022".repeat(Array.from(value).length) : value) : (node.hint ?? "");
  const text = field ? fieldText : (node.text ?? "");
  const visible = (node.children ?? []).filter((c) => c.visible !== false);
  return {
    index,
    text,
    resourceId: node.resourceId ?? "",
    className:
      node.className ??
      (field ? "android.widget.EditText" : node.text !== undefined ? "android.widget.TextView" : "android.view.View"),
    package: node.package ?? pkg,
    contentDesc: node.contentDesc ?? "",
    checkable: node.checkable ?? false,
    checked: node.checked ?? false,
    clickable: node.clickable ?? (field !== undefined || node.onTap !== undefined),
    enabled: node.enabled ?? true,
    focusable: node.focusable ?? field !== undefined,
    focused: field !== undefined && field === focusedField,
    scrollable: node.scrollable ?? false,
    longClickable: node.longClickable ?? false,
    password: node.password ?? false,
    selected: node.selected ?? false,
    bounds: node.bounds ?? [0, 0, 0, 0],
    children: visible.map((c, i) => resolve(c, i, pkg, state, focusedField)),
    source: node,
  };
}

/** uiautomator's NAF ("not accessibility friendly") rule: clickable, enabled, and nothing labels it. */
export function isNaf(n: SnapshotNode): boolean {
  const labelled = (m: SnapshotNode): boolean => m.text !== "" || m.contentDesc !== "" || m.children.some(labelled);
  return n.clickable && n.enabled && !NAF_EXCLUDED.has(n.className) && !labelled(n);
}
