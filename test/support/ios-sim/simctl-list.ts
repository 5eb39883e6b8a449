/**
 * `simctl list [-j|--json] [-e] [devices|devicetypes|runtimes|pairs] [<search term>|available]`:
 * Apple-format pretty JSON (Sample A) or the text listing node-simctl falls back to when the JSON
 * does not parse. The older JSON generations of research §1.1 are behind `listVariant`.
 */
import { appleJson } from "./apple-json.ts";
import { DEVICE_TYPES, IOS_DEVICE_TYPES, LOG_ROOT, parseRuntimeId } from "./device-catalog.ts";
import { dataPath, type SimDevice, type SimState } from "./sim-state.ts";

const PROFILES = "/Library/Developer/CoreSimulator/Profiles";
const XCODE_PROFILES =
  "/Applications/Xcode.app/Contents/Developer/Platforms/iPhoneOS.platform/Library/Developer/CoreSimulator/Profiles";

function deviceJson(d: SimDevice, state: SimState): Record<string, unknown> {
  const base: Record<string, unknown> = {};
  if (state.listVariant === "xcode10.0") {
    return {
      state: d.state,
      availability: d.isAvailable
        ? "(available)"
        : ` (unavailable, ${d.availabilityError ?? "runtime profile not found"})`,
      name: d.name,
      udid: d.udid,
    };
  }
  if (!d.isAvailable) base.availabilityError = d.availabilityError ?? "runtime profile not found";
  if (d.isAvailable && d.lastBootedAt) base.lastBootedAt = d.lastBootedAt;
  Object.assign(base, {
    dataPath: dataPath(d),
    dataPathSize: d.dataPathSize,
    logPath: `${LOG_ROOT}/${d.udid}`,
    udid: d.udid,
    isAvailable: state.listVariant === "xcode10.1-beta" ? (d.isAvailable ? "YES" : "NO") : d.isAvailable,
  });
  if (d.isAvailable && d.logPathSize !== undefined) base.logPathSize = d.logPathSize;
  Object.assign(base, { deviceTypeIdentifier: d.deviceTypeIdentifier, state: d.state, name: d.name });
  return base;
}

/** Xcode 10.0 keyed runtimes by display name (`iOS 12.1`). */
function runtimeKey(identifier: string, state: SimState): string {
  if (state.listVariant !== "xcode10.0") return identifier;
  const { platform, version } = parseRuntimeId(identifier);
  return `${platform} ${version}`;
}

function filterDevices(devices: SimDevice[], term: string | undefined): SimDevice[] {
  if (!term) return devices;
  if (term === "available") return devices.filter((d) => d.isAvailable);
  const t = term.toLowerCase();
  return devices.filter(
    (d) => d.name.toLowerCase().includes(t) || d.udid.toLowerCase() === t || d.state.toLowerCase() === t,
  );
}

/** Every known runtime as a key (empty ones too, as Apple prints them), then runtimes only devices mention. */
function devicesByRuntime(state: SimState, term: string | undefined): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const devices = filterDevices(state.devices, term);
  for (const r of state.runtimes) out[runtimeKey(r.identifier, state)] = [];
  for (const d of devices) (out[runtimeKey(d.runtime, state)] ??= []).push(deviceJson(d, state));
  return out;
}

function runtimeJson(r: SimState["runtimes"][number]) {
  const bundlePath = `${PROFILES}/Runtimes/${r.name}.simruntime`;
  return {
    bundlePath,
    buildversion: r.buildversion,
    platform: r.platform,
    runtimeRoot: `${bundlePath}/Contents/Resources/RuntimeRoot`,
    identifier: r.identifier,
    version: r.version,
    isInternal: false,
    isAvailable: r.isAvailable,
    name: r.name,
    supportedDeviceTypes:
      r.platform === "iOS"
        ? IOS_DEVICE_TYPES.map((t) => ({
            bundlePath: `${XCODE_PROFILES}/DeviceTypes/${t.name}.simdevicetype`,
            name: t.name,
            identifier: t.identifier,
            productFamily: t.productFamily,
          }))
        : [],
  };
}

function deviceTypeJson(t: (typeof DEVICE_TYPES)[number]) {
  return {
    productFamily: t.productFamily,
    bundlePath: `${XCODE_PROFILES}/DeviceTypes/${t.name}.simdevicetype`,
    maxRuntimeVersion: 4294967295,
    maxRuntimeVersionString: "65535.255.255",
    identifier: t.identifier,
    modelIdentifier: t.modelIdentifier,
    minRuntimeVersionString: "26.0.0",
    minRuntimeVersion: 1703936,
    name: t.name,
  };
}

function textListing(state: SimState, section: string | undefined, term: string | undefined): string {
  const lines: string[] = [];
  const wants = (s: string) => section === undefined || section === s;
  if (wants("devicetypes")) {
    lines.push("== Device Types ==");
    for (const t of DEVICE_TYPES) lines.push(`${t.name} (${t.identifier})`);
  }
  if (wants("runtimes")) {
    lines.push("== Runtimes ==");
    for (const r of state.runtimes) lines.push(`${r.name} (${r.version} - ${r.buildversion}) - ${r.identifier}`);
  }
  if (wants("devices")) {
    lines.push("== Devices ==");
    const devices = filterDevices(state.devices, term);
    const known = new Set(state.runtimes.map((r) => r.identifier));
    for (const r of state.runtimes) {
      lines.push(`-- ${r.name} --`);
      for (const d of devices.filter((x) => x.runtime === r.identifier))
        lines.push(`    ${d.name} (${d.udid}) (${d.state}) `);
    }
    const orphans = [...new Set(devices.filter((d) => !known.has(d.runtime)).map((d) => d.runtime))];
    for (const id of orphans) {
      lines.push(`-- Unavailable: ${id} --`);
      for (const d of devices.filter((x) => x.runtime === id))
        lines.push(
          `    ${d.name} (${d.udid}) (${d.state}) (unavailable, ${d.availabilityError ?? "runtime profile not found"})`,
        );
    }
  }
  if (wants("pairs")) lines.push("== Device Pairs ==");
  return `${lines.join("\n")}\n`;
}

export type ListResult = { stdout: string } | { stderr: string; exitCode: number };

export function simctlList(state: SimState, args: string[]): ListResult {
  let json = false;
  let escape = true;
  const rest: string[] = [];
  for (const a of args) {
    if (a === "-j" || a === "--json") json = true;
    else if (a === "-e" || a === "--no-escape-slashes") escape = false;
    else if (a === "-v" || a === "--verbose") continue;
    else rest.push(a);
  }
  const sections = ["devices", "devicetypes", "runtimes", "pairs"];
  const section = rest[0] && sections.includes(rest[0]) ? rest.shift() : undefined;
  const term = rest.shift();
  if (rest.length > 0)
    return {
      stderr: `Usage: simctl list [-j | --json] [-v] [devices|devicetypes|runtimes|pairs] [<search term>|available]\n`,
      exitCode: 64,
    };
  if (!json) return { stdout: textListing(state, section, term) };
  const doc: Record<string, unknown> = {};
  if (!section || section === "devicetypes") doc.devicetypes = DEVICE_TYPES.map(deviceTypeJson);
  if (!section || section === "runtimes") doc.runtimes = state.runtimes.map(runtimeJson);
  if (!section || section === "devices") doc.devices = devicesByRuntime(state, term);
  if (!section || section === "pairs") doc.pairs = {};
  return { stdout: `${appleJson(doc, { escapeSlashes: escape })}\n` };
}
