import { parseToolJson } from "./json.ts";
/** One simulator from `simctl list devices --json`. */
export interface SimDevice {
  udid: string;
  name: string;
  state: string;
  isAvailable: boolean;
  runtime: string;
  /** "iOS 26.5" from com.apple.CoreSimulator.SimRuntime.iOS-26-5, when the identifier has that form. */
  osVersion: string | null;
  deviceType: string | null;
}

export class SimctlParseError extends Error {}

const RUNTIME = /^com\.apple\.CoreSimulator\.SimRuntime\.([A-Za-z]+)-(\d+(?:-\d+)*)$/;

/**
 * Every device of `simctl list devices --json`, unavailable ones included (node-simctl's
 * getDevices drops them and the runtime id, so the raw JSON is parsed here).
 */
export function parseDeviceList(json: string): SimDevice[] {
  const parsed = parseToolJson(json, () => new SimctlParseError("simctl list output is not JSON"));
  const byRuntime = (parsed as { devices?: unknown })?.devices;
  if (!byRuntime || typeof byRuntime !== "object" || Array.isArray(byRuntime))
    throw new SimctlParseError("simctl list output has no devices map");
  const out: SimDevice[] = [];
  for (const [runtime, list] of Object.entries(byRuntime as Record<string, unknown>)) {
    if (!Array.isArray(list)) throw new SimctlParseError(`runtime ${runtime} is not a list`);
    const m = RUNTIME.exec(runtime);
    const osVersion = m ? `${m[1]} ${(m[2] as string).replaceAll("-", ".")}` : null;
    for (const d of list as Record<string, unknown>[]) {
      if (typeof d?.udid !== "string" || typeof d.name !== "string" || typeof d.state !== "string")
        throw new SimctlParseError("a device lacks udid, name or state");
      out.push({
        udid: d.udid,
        name: d.name,
        state: d.state,
        isAvailable: d.isAvailable === true,
        runtime,
        osVersion,
        deviceType: typeof d.deviceTypeIdentifier === "string" ? d.deviceTypeIdentifier : null,
      });
    }
  }
  return out.sort((a, b) => (a.udid < b.udid ? -1 : a.udid > b.udid ? 1 : 0));
}

/** The typed reason behind simctl's stderr (research §1.5); match the text, never the exit code alone. */
export function simctlFailure(stderr: string): {
  kind: "notBooted" | "alreadyBooted" | "appNotRunning" | "invalidDevice" | "other";
  message: string;
} {
  const message = stderr.trim().split("\n").slice(-2).join(" ").slice(0, 300);
  if (/current state: Shutdown/.test(stderr)) return { kind: "notBooted", message };
  if (/Unable to boot device in current state: Booted/.test(stderr)) return { kind: "alreadyBooted", message };
  if (/found nothing to terminate/.test(stderr)) return { kind: "appNotRunning", message };
  if (/Invalid device|No devices are booted|not a valid UDID/i.test(stderr)) return { kind: "invalidDevice", message };
  return { kind: "other", message };
}

/** Runtimes and device types that are no iPhone or iPad: watchOS, tvOS and visionOS (xrOS) Simulators. */
const OTHER_RUNTIME = /(?:^|SimRuntime\.)(?:watchOS|tvOS|xrOS|visionOS)[- ]/;
const OTHER_TYPE = /SimDeviceType\.Apple-(?:Watch|TV|Vision)/;

/**
 * An iPhone or iPad Simulator. simctl lists Apple Watch, Apple TV and Vision Pro Simulators in the
 * same JSON; AXe and the iOS action space are for iOS only (research note §4 #1; tvOS taps fail
 * under Xcode 27, AXe #69).
 */
export function isIosSimulator(d: SimDevice): boolean {
  return !OTHER_RUNTIME.test(d.runtime) && !(d.deviceType !== null && OTHER_TYPE.test(d.deviceType));
}
