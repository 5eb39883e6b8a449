/**
 * The simulated Simulator: devices, their apps, screens and pasteboards, fault switches and what
 * a new state looks like. It lives in one JSON file (state-file.ts) in the directory named by
 * DEVICERAIL_FAKE_IOS_STATE, shared by the fake `xcrun` and `axe` processes and the in-process
 * fake WebDriverAgent.
 */
import type { Tool } from "./state-file.ts";
import {
  DEFAULT_RUNTIME_IDS,
  HOME_ROOT,
  RUNTIMES,
  type RuntimeSpec,
  type ScreenSpec,
  deviceType,
} from "./device-catalog.ts";
import { DEFAULT_XCODE, type XcodeSpec } from "./xcode.ts";

export * from "./state-file.ts";

export type DeviceState = "Shutdown" | "Booted" | "Booting" | "Shutting Down" | "Creating";
export type AppKind = "demo" | "safari" | "settings" | "plain";
export type Appearance = "light" | "dark";

export interface InstalledApp {
  bundleId: string;
  name: string;
  kind: AppKind;
  urlSchemes: string[];
  /** How the app's window sits on the screen (default full screen); see AppLayout. */
  layout?: AppLayout;
}

/**
 * Layouts where the app's accessibility frames are not the full portrait screen (research F9):
 * - `letterbox`: a landscape-only app on portrait hardware. The AX tree is in the app's logical
 *   landscape points (root frame = the screen with width and height swapped) while the screenshot
 *   stays portrait, the landscape UI scaled by min(pw/lw, ph/lh) and centred: AXe's own model of
 *   this case (`OrientationAwareCoordinates.swift`, `CoordinateMapping.letterbox`, v1.8.0; its
 *   tests use a 2064×2752 px screenshot with a 1376×1032 pt AX frame, scale 0.75, offsetY 301).
 *   AXe ≥ 1.7.0 takes taps in those logical points and maps them itself (CHANGELOG v1.7.0, #5).
 * - `window`: an iPad window (split view, Stage Manager) at an origin on the screen, smaller than
 *   the screen. AX frames are screen coordinates, as UIAccessibility documents for
 *   `accessibilityFrame` ("The frame of the accessibility element, in screen coordinates"), so the
 *   root frame carries the window's origin and everything inside is offset by it.
 */
export type AppLayout = { kind: "letterbox" } | { kind: "window"; x: number; y: number; width: number; height: number };

/** One input the device received, in points, with what it hit (identifier, else label). */
export interface InputEvent {
  via: "axe" | "wda";
  kind: "tap" | "double-tap" | "long-press" | "swipe" | "text" | "key" | "key-combo" | "button" | "touch";
  x?: number;
  y?: number;
  toX?: number;
  toY?: number;
  durationS?: number | null;
  text?: string;
  keys?: number[];
  button?: string;
  target?: string | null;
  /** When the HID event was sent (epoch ms): how far apart two taps of a batch landed. */
  atMs?: number;
  /** AXe taps: the simulator `tapAt` or a physical touch down/up (Tap.swift `resolvedTapStyle`). */
  style?: "simulator" | "physical";
}

export interface SimDevice {
  udid: string;
  name: string;
  runtime: string;
  deviceTypeIdentifier: string;
  state: DeviceState;
  isAvailable: boolean;
  availabilityError?: string;
  dataPathSize: number;
  logPathSize?: number;
  lastBootedAt?: string;
  screen: ScreenSpec;
  appearance: Appearance;
  pasteboard: string;
  installed: InstalledApp[];
  /** bundle id → pid of the running process. */
  running: Record<string, number>;
  /** The frontmost app, or null for the home screen (SpringBoard). */
  foreground: string | null;
  /** Per-app UI state (see apps.ts), reset when the app is launched afresh. */
  ui: Record<string, Record<string, unknown>>;
  openedUrls: string[];
  launches: { bundleId: string; args: string[]; env: Record<string, string>; pid: number }[];
  locked: boolean;
  /** describe-ui answers the empty `AXApplication` shape this many more times (reset at every boot from emptyTreeAfterBoot). */
  emptyTreeReads: number;
  emptyTreeAfterBoot: number;
  /**
   * The accessibility bridge is ready this long after boot; before, describe-ui answers the empty
   * `AXApplication` shape (XcodeBuildMCP #290; the maintainer measured T_ready ≈ 8 s after
   * `bootstatus` on fresh iOS 26.4 simulators in PR #312). 0 = ready at once (the default).
   */
  axReadyAfterBootMs: number;
  /** Epoch ms when AX becomes ready (boot time + boot delay + axReadyAfterBootMs); null = ready. */
  axReadyAt: number | null;
  /**
   * An app launched before AX was ready keeps the empty tree until it is relaunched
   * (XcodeBuildMCP #408: "snapshot_ui kept returning the empty hierarchy until the app process was
   * relaunched"). Off by default.
   */
  axStaleIfLaunchedEarly: boolean;
  /** Pids launched before AX was ready while axStaleIfLaunchedEarly is on. */
  axStalePids: number[];
  /**
   * Whether `simctl getenv` knows SIMULATOR_MAINSCREEN_SCALE/_WIDTH/_HEIGHT (default true). Off,
   * they are answered like any unknown variable.
   */
  mainScreenEnv: boolean;
  /**
   * The screenshot comes out turned a quarter (landscape-shaped) while the AX tree stays portrait:
   * what screenshots of a rotated Simulator are disputed to do (upright per argent #609, raw
   * portrait per XcodeBuildMCP PR #186), here with a portrait-locked app. Off by default.
   */
  screenshotRotated: boolean;
  /** `boot` leaves the device `Booting` this long; 0 = `Booted` at once. */
  bootDelayMs: number;
  bootCompletesAt: number | null;
  /** describe-ui fails with AXe's "No translation object returned" while true (xcode.ts NO_TRANSLATION). */
  noTranslation: boolean;
  /** `simctl io … screenshot` fails this many more times with "Timeout waiting for screen surfaces" (xcode.ts). */
  screenSurfacesTimeouts: number;
  input: InputEvent[];
  statusBar: Record<string, string>;
  privacy: { action: string; service: string; bundleId: string | null }[];
}

export type FaultMode = "hang" | "shutdown-mid-call" | "malformed-json" | "slow" | "fail";

export interface Fault {
  tool: "xcrun" | "axe" | "wda";
  /** simctl subcommand (`io`, `list`, …), axe subcommand (`describe-ui`, …) or WDA `METHOD /path` without the session prefix. Absent: any. */
  command?: string;
  udid?: string;
  mode: FaultMode;
  /** slow: extra delay; shutdown-mid-call: time before the device goes down (default 20). */
  ms?: number;
  /** Uses left; absent = every matching call. */
  times?: number;
  exitCode?: number;
  stderr?: string;
  stdout?: string;
}

/** Which generation of `simctl list -j` to print (research §1.1 history). */
export type ListVariant = "xcode26" | "xcode10.0" | "xcode10.1-beta";

export interface SimState {
  version: 1;
  devices: SimDevice[];
  runtimes: RuntimeSpec[];
  faults: Fault[];
  axeVersion: string;
  /** The selected Xcode (xcodebuild -version), or the Command Line Tools (xcrun then finds no simctl). */
  xcode: XcodeSpec;
  listVariant: ListVariant;
  nextPid: number;
  /**
   * How long AXe's own tree read takes before each coordinate tap (standalone or a batch step),
   * touch and swipe: real AXe runs `OrientationAwareCoordinates.translate`, a full frontmost-tree
   * read, first (research note A3 and §2; AXe `Tap.swift`, `Command+BatchConvertible.swift:107-121`;
   * SimBench's describe-ui median is 4,405 ms on Settings). 0 (the default) = today's instant input.
   */
  axeTapTreeReadMs: number;
  /**
   * Switches (UISwitch, SwiftUI Toggle) ignore AXe's simulator `tapAt`, as AXe PR #46 and a public
   * "Agent Notes for AXe" report ("tap may report success but fail … especially toggles/switches");
   * a physical tap (`--tap-style physical`, `touch --down --up`, WDA) still flips them. Off by
   * default: today's fake, where every tap flips a switch.
   */
  switchesIgnoreSimulatorTaps: boolean;
  /**
   * `axe type` goes through iOS's hardware-keyboard path, where Smart Punctuation rewrites what
   * was typed (AXe `Type.swift` help: "iOS may apply smart punctuation"; hebbianai/dure #47: a
   * 158-character code arrived as 155 when typed, intact when pasted). Off by default (today's
   * exact typing); pasting and WebDriverAgent are never changed.
   */
  typingSmartPunctuation: boolean;
}

export interface DeviceSpec {
  udid?: string;
  name?: string;
  /** Runtime identifier; default iOS 26.5. */
  runtime?: string;
  /** Device type identifier or name; default iPhone 17 Pro. */
  deviceType?: string;
  state?: DeviceState;
  isAvailable?: boolean;
  availabilityError?: string;
  screen?: Partial<ScreenSpec>;
  appearance?: Appearance;
  /** Extra apps; the demo app, Safari and Settings are always installed. */
  apps?: InstalledApp[];
  /** Launch the demo app (foreground) when the device starts out booted. Default true. */
  demoRunning?: boolean;
  emptyTreeAfterBoot?: number;
  axReadyAfterBootMs?: number;
  axStaleIfLaunchedEarly?: boolean;
  mainScreenEnv?: boolean;
  screenshotRotated?: boolean;
  /** Layouts by bundle id (the demo app's included). */
  layouts?: Record<string, AppLayout>;
  bootDelayMs?: number;
  lastBootedAt?: string;
}

export const DEMO_BUNDLE = "com.acme.app";
export const SAFARI_BUNDLE = "com.apple.mobilesafari";
export const SETTINGS_BUNDLE = "com.apple.Preferences";

export const SYSTEM_APPS: readonly InstalledApp[] = [
  { bundleId: SAFARI_BUNDLE, name: "Safari", kind: "safari", urlSchemes: ["http", "https"] },
  { bundleId: SETTINGS_BUNDLE, name: "Settings", kind: "settings", urlSchemes: ["prefs"] },
];
export const DEMO_APP: InstalledApp = { bundleId: DEMO_BUNDLE, name: "Acme", kind: "demo", urlSchemes: ["acme"] };

/** The devices of research Sample A: a booted iPhone 17 Pro, a shut-down SE and an unavailable iPhone 15. */
export const SAMPLE_A_DEVICES: readonly DeviceSpec[] = [
  {
    udid: "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F",
    deviceType: "iPhone 17 Pro",
    state: "Booted",
    lastBootedAt: "2026-11-28T09:14:02Z",
  },
  { udid: "C3D4E5F6-0718-4A2B-8C9D-0E1F2A3B4C5D", deviceType: "iPhone SE (3rd generation)", state: "Shutdown" },
  {
    udid: "0F2D9A51-7C3E-4B8A-9D61-2E5A7B8C9D10",
    deviceType: "iPhone 15",
    runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
    state: "Shutdown",
    isAvailable: false,
    availabilityError: "runtime profile not found",
  },
];

let udidCounter = 0;
function makeUdid(): string {
  const hex = (n: number, len: number) => n.toString(16).toUpperCase().padStart(len, "0").slice(-len);
  const a = (Date.now() ^ (process.pid << 8)) >>> 0;
  udidCounter++;
  return `${hex(a, 8)}-${hex(udidCounter, 4)}-4${hex(process.pid, 3)}-8${hex(udidCounter * 7, 3)}-${hex(a * 31 + udidCounter, 12)}`;
}

export function createDevice(spec: DeviceSpec, pids: { next: number }): SimDevice {
  const type = deviceType(spec.deviceType ?? "iPhone 17 Pro");
  if (!type) throw new Error(`fake Simulator: unknown device type ${spec.deviceType}`);
  const state = spec.state ?? "Shutdown";
  const device: SimDevice = {
    udid: spec.udid ?? makeUdid(),
    name: spec.name ?? type.name,
    runtime: spec.runtime ?? "com.apple.CoreSimulator.SimRuntime.iOS-26-5",
    deviceTypeIdentifier: type.identifier,
    state,
    isAvailable: spec.isAvailable ?? true,
    dataPathSize: spec.isAvailable === false ? 0 : state === "Booted" ? 3870212096 : 18337792,
    screen: { ...type.screen, ...spec.screen },
    appearance: spec.appearance ?? "light",
    pasteboard: "",
    installed: [DEMO_APP, ...SYSTEM_APPS, ...(spec.apps ?? [])].map((a) =>
      spec.layouts?.[a.bundleId] ? { ...a, layout: spec.layouts[a.bundleId] } : a,
    ),
    running: {},
    foreground: null,
    ui: {},
    openedUrls: [],
    launches: [],
    locked: false,
    emptyTreeReads: 0,
    emptyTreeAfterBoot: spec.emptyTreeAfterBoot ?? 0,
    axReadyAfterBootMs: spec.axReadyAfterBootMs ?? 0,
    axReadyAt: null,
    axStaleIfLaunchedEarly: spec.axStaleIfLaunchedEarly ?? false,
    axStalePids: [],
    mainScreenEnv: spec.mainScreenEnv ?? true,
    screenshotRotated: spec.screenshotRotated ?? false,
    bootDelayMs: spec.bootDelayMs ?? 0,
    bootCompletesAt: null,
    noTranslation: false,
    screenSurfacesTimeouts: 0,
    input: [],
    statusBar: {},
    privacy: [],
  };
  if (spec.availabilityError !== undefined) device.availabilityError = spec.availabilityError;
  if (spec.lastBootedAt !== undefined) device.lastBootedAt = spec.lastBootedAt;
  if (state === "Booted") {
    device.logPathSize = 462848;
    // A device that starts out booted was booted just now, as far as AX readiness goes.
    if (device.axReadyAfterBootMs > 0) device.axReadyAt = Date.now() + device.axReadyAfterBootMs;
    if (spec.demoRunning ?? true) {
      const pid = pids.next++;
      device.running[DEMO_BUNDLE] = pid;
      device.foreground = DEMO_BUNDLE;
      if (device.axStaleIfLaunchedEarly && device.axReadyAt !== null) device.axStalePids.push(pid);
    }
  }
  return device;
}

export interface StateOptions {
  devices?: readonly DeviceSpec[];
  /** Installed runtime identifiers (from device-catalog RUNTIMES); default Sample A's watchOS 11.5 and iOS 26.5. */
  runtimes?: readonly string[];
  axeVersion?: string;
  /** Default Xcode 26.5 (17F42), the one AXe 1.8.0 was validated with. */
  xcode?: XcodeSpec;
  faults?: Fault[];
  listVariant?: ListVariant;
  axeTapTreeReadMs?: number;
  switchesIgnoreSimulatorTaps?: boolean;
  typingSmartPunctuation?: boolean;
}

export function createState(options: StateOptions = {}): SimState {
  const pids = { next: 41872 };
  const devices = (options.devices ?? SAMPLE_A_DEVICES).map((d) => createDevice(d, pids));
  return {
    version: 1,
    devices,
    runtimes: (options.runtimes ?? DEFAULT_RUNTIME_IDS).map((id) => {
      const r = RUNTIMES.find((x) => x.identifier === id);
      if (!r) throw new Error(`fake Simulator: unknown runtime ${id}`);
      return { ...r };
    }),
    faults: options.faults ?? [],
    axeVersion: options.axeVersion ?? "1.8.0",
    xcode: options.xcode ?? DEFAULT_XCODE,
    listVariant: options.listVariant ?? "xcode26",
    nextPid: pids.next,
    axeTapTreeReadMs: options.axeTapTreeReadMs ?? 0,
    switchesIgnoreSimulatorTaps: options.switchesIgnoreSimulatorTaps ?? false,
    typingSmartPunctuation: options.typingSmartPunctuation ?? false,
  };
}

export const dataPath = (d: SimDevice) => `${HOME_ROOT}/${d.udid}/data`;

// ---- lookups and faults ----

/** simctl's device argument: a UDID, a device name, or `booted` (the first booted device). */
export function findDevice(state: SimState, ref: string): SimDevice | undefined {
  if (ref === "booted") return state.devices.find((d) => d.state === "Booted");
  return state.devices.find((d) => d.udid === ref) ?? state.devices.find((d) => d.name === ref && d.isAvailable);
}

/** The faults that apply to this call, with their use counts taken. */
export function takeFaults(state: SimState, tool: Tool, command: string, udid: string | null): Fault[] {
  const hits: Fault[] = [];
  state.faults = state.faults.filter((f) => {
    const matches =
      f.tool === tool &&
      (f.command === undefined || f.command === command) &&
      (f.udid === undefined || f.udid === udid);
    if (!matches) return true;
    hits.push({ ...f });
    if (f.times === undefined) return true;
    f.times--;
    return f.times > 0;
  });
  return hits;
}

export function nextPid(state: SimState): number {
  return state.nextPid++;
}
