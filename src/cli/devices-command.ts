/** `devices`: what is attached, with its state and lease. Its own module: it needs no UI-tree code. */
import type { DeviceInfo } from "../protocol/types/device.ts";
import { withClient } from "./client.ts";
import { printJson, printRows } from "./output.ts";
import { stdout } from "./std-streams.ts";

export interface DeviceRow extends DeviceInfo {
  /** `connected`, an adb state such as `unauthorized`, or `available`. */
  state: string;
  /** The Session holding the device's lease, if any. */
  leasedBy: string | null;
}

// Discovery names an unusable Android device "<name> (<adb state>)" (drivers/android/discovery.ts).
const ADB_STATE =
  /\((offline|unauthorized|authorizing|no permissions|recovery|sideload|bootloader|host|connecting|unknown)\)$/;

export function deviceRow(d: DeviceInfo, leasedBy: string | null): DeviceRow {
  const inName = d.platform.kind === "android" ? ADB_STATE.exec(d.name)?.[1] : undefined;
  return { ...d, state: d.connected ? "connected" : (inName ?? "available"), leasedBy };
}

const platformText = (p: DeviceInfo["platform"]) =>
  p.kind === "other" ? String((p as { value?: unknown }).value) : p.kind;

export async function devicesCommand(opts: { json?: boolean }): Promise<number> {
  const { listed, rows } = await withClient(async (c) => {
    const listed = await c.call("devices.list");
    // A device is leased by the active Session that started on it.
    const { sessions } = await c.call("devicerail.sessions.list", { state: "active" });
    return {
      listed,
      rows: listed.devices.map((d) => deviceRow(d, sessions.find((s) => s.deviceId === d.id)?.id ?? null)),
    };
  });
  // The devices.list result itself, as GET /devices and JSON-RPC give it; state and lease are table-only.
  if (opts.json) printJson(listed);
  else if (rows.length === 0) stdout.write("no devices\n");
  else
    printRows(
      ["ID", "PLATFORM", "NAME", "OS", "STATE", "LEASED BY"],
      rows.map((d) => [d.id, platformText(d.platform), d.name, d.osVersion ?? "-", d.state, d.leasedBy ?? "-"]),
    );
  return 0;
}
