/**
 * App and device lifecycle shared by `simctl` (launch, terminate, openurl, boot, shutdown), AXe
 * (the home button, a home-screen icon) and WebDriverAgent (apps/launch, /url, homescreen).
 */
import { DEMO_BUNDLE, type SimDevice, type SimState, nextPid } from "./sim-state.ts";

export function installedApp(device: SimDevice, bundleId: string) {
  return device.installed.find((a) => a.bundleId === bundleId);
}

/** Launches (or, if running, brings forward) the app; returns its pid. A fresh process starts with fresh UI state. */
export function launchApp(
  state: SimState,
  device: SimDevice,
  bundleId: string,
  options: { args?: string[]; env?: Record<string, string>; terminateRunning?: boolean } = {},
): number {
  if (options.terminateRunning) stopApp(device, bundleId);
  let pid = device.running[bundleId];
  if (pid === undefined) {
    pid = nextPid(state);
    device.running[bundleId] = pid;
    delete device.ui[bundleId];
    device.launches.push({ bundleId, args: options.args ?? [], env: options.env ?? {}, pid });
    if (device.axStaleIfLaunchedEarly && !axReady(device)) device.axStalePids.push(pid);
  }
  device.foreground = bundleId;
  device.locked = false;
  return pid;
}

/** False when the app was not running. */
export function stopApp(device: SimDevice, bundleId: string): boolean {
  if (device.running[bundleId] === undefined) return false;
  delete device.running[bundleId];
  delete device.ui[bundleId];
  if (device.foreground === bundleId) device.foreground = null;
  return true;
}

/** The app that claims the URL's scheme, or undefined (LaunchServices' -10814). */
export function appForUrl(device: SimDevice, url: string) {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  return scheme ? device.installed.find((a) => a.urlSchemes.includes(scheme)) : undefined;
}

export function openUrl(state: SimState, device: SimDevice, url: string): boolean {
  const app = appForUrl(device, url);
  if (!app) return false;
  device.openedUrls.push(url);
  launchApp(state, device, app.bundleId);
  const ui = (device.ui[app.bundleId] ??= {});
  ui.lastUrl = url;
  return true;
}

export function bootDevice(device: SimDevice, now = Date.now()): void {
  device.state = device.bootDelayMs > 0 ? "Booting" : "Booted";
  device.bootCompletesAt = device.bootDelayMs > 0 ? now + device.bootDelayMs : null;
  device.lastBootedAt = new Date(now).toISOString().replace(/\.\d+Z$/, "Z");
  device.logPathSize = 462848;
  device.emptyTreeReads = device.emptyTreeAfterBoot;
  device.axReadyAt = device.axReadyAfterBootMs > 0 ? now + device.bootDelayMs + device.axReadyAfterBootMs : null;
  device.axStalePids = [];
  device.locked = false;
  // Nothing runs after a cold boot; tests that want the demo app in front launch it (or start the device booted).
  device.running = {};
  device.ui = {};
  device.foreground = null;
}

export function shutdownDevice(device: SimDevice): void {
  device.state = "Shutdown";
  device.bootCompletesAt = null;
  device.running = {};
  device.ui = {};
  device.foreground = null;
  device.locked = false;
}

/** Whether the Simulator's accessibility bridge answers yet (see SimDevice.axReadyAfterBootMs). */
export function axReady(device: SimDevice, now = Date.now()): boolean {
  return device.axReadyAt === null || now >= device.axReadyAt;
}

/**
 * Whether describe-ui sees only the bare application root for the frontmost app: AX not ready
 * yet, or the app was launched before it was and has not been relaunched since.
 */
export function axTreeEmpty(device: SimDevice, pid: number, now = Date.now()): boolean {
  return !axReady(device, now) || device.axStalePids.includes(pid);
}

export const isDemoInFront = (device: SimDevice) => device.foreground === DEMO_BUNDLE;
