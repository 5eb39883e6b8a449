/** `devices`, `screenshot` and `ui`: what is attached, and what one of them shows. */
import { writeFileSync } from "node:fs";
import type { DeviceInfo, DevicesListResult } from "../../protocol/types/device.ts";
import type { UiNode, UiSnapshot } from "../../protocol/types/ui.ts";
import { type CoreClient, inSession, observe, route, withClient } from "./client.ts";
import { CliError, out, printJson, table } from "./output.ts";

export interface DeviceRow extends DeviceInfo {
  /** `connected`, an adb state such as `unauthorized`, or `available`. */
  state: string;
  /** The Session holding the device's lease, if any. */
  leasedBy: string | null;
}

// Discovery names an unusable Android device "<name> (<adb state>)" (drivers/android/discovery.ts).
const ADB_STATE = /\((offline|unauthorized|authorizing|no permissions|recovery|sideload|bootloader|host|connecting|unknown)\)$/;

export function deviceRow(d: DeviceInfo, leasedBy: string | null): DeviceRow {
  const inName = d.platform.kind === "android" ? ADB_STATE.exec(d.name)?.[1] : undefined;
  return { ...d, state: d.connected ? "connected" : (inName ?? "available"), leasedBy };
}

const platformText = (p: DeviceInfo["platform"]) => (p.kind === "other" ? String((p as { value?: unknown }).value) : p.kind);

export async function devicesCommand(opts: { json?: boolean }): Promise<number> {
  const rows = await withClient(async (c) => {
    const listed = await c.call<DevicesListResult>("devices.list");
    // Leases live in the daemon that holds the data directory; in this process that is us.
    return listed.devices.map((d) => deviceRow(d, c.daemon.core.devices.leaseOf(d.id)?.sessionId ?? null));
  });
  if (opts.json) printJson({ devices: rows });
  else if (rows.length === 0) process.stdout.write("no devices\n");
  else
    process.stdout.write(
      table(
        ["ID", "PLATFORM", "NAME", "OS", "STATE", "LEASED BY"],
        rows.map((d) => [d.id, platformText(d.platform), d.name, d.osVersion ?? "-", d.state, d.leasedBy ?? "-"]),
      ),
    );
  return 0;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);

/** Reads Evidence through the core's store, which verifies the bytes against their digest. */
export async function evidenceBytes(c: CoreClient, sha256: string): Promise<Uint8Array> {
  const bytes = await c.daemon.core.evidence.read(sha256);
  if (!bytes) throw new CliError(`evidence ${sha256} is missing from the evidence store`);
  return bytes;
}

export async function screenshotCommand(opts: { device?: string; output?: string; json?: boolean }): Promise<number> {
  const file = opts.output ?? `screenshot-${stamp(new Date())}.png`;
  const observation = await withClient(async (c) => {
    await route(c, opts.device);
    return inSession(c, async () => {
      const o = await observe(c);
      if (!o.screenshot?.sha256)
        throw new CliError(`device ${o.deviceId} gave no screenshot (${o.screenshotOmission ?? "none"}); is DEVICERAIL_SCREENSHOT_POLICY=omit set?`);
      writeFileSync(file, await evidenceBytes(c, o.screenshot.sha256));
      return o;
    });
  });
  if (opts.json) printJson({ file, observation });
  else {
    const { width, height } = observation.viewport;
    process.stdout.write(`${file}: ${width}×${height} screenshot of ${observation.deviceId} (sha256 ${observation.screenshot?.sha256})\n`);
  }
  return 0;
}

export async function uiCommand(opts: { device?: string; json?: boolean }): Promise<number> {
  const snapshot = await withClient(async (c) => {
    await route(c, opts.device);
    return inSession(c, async () => {
      const o = await observe(c);
      if (!o.uiSnapshot) throw new CliError(`device ${o.deviceId} gave no UI tree (${o.uiSnapshotOmission ?? "no claim"})`);
      return c.call<UiSnapshot>("ui.snapshot.get", { observationId: o.id });
    });
  });
  if (opts.json) printJson(snapshot);
  else process.stdout.write(formatTree(snapshot.nodes));
  return 0;
}

const round = (n: number) => String(Math.round(n));

/** One line per node in preorder, two spaces per level: `role "text" #identifier [x,y,w,h]`. */
export function formatTree(nodes: UiNode[], st = out()): string {
  const depth = new Map<string, number>();
  const lines = nodes.map((n) => {
    const d = n.parentStableNodeId === null ? 0 : (depth.get(n.parentStableNodeId) ?? -1) + 1;
    depth.set(n.stableNodeId, d);
    // The text a person reads, else the accessible name.
    const label = n.text || n.name;
    const b = n.bounds;
    return [
      "  ".repeat(d) + st.bold(n.role),
      label ? JSON.stringify(label) : "",
      n.identifier ? st.cyan(`#${n.identifier}`) : "",
      b ? st.dim(`[${[b.x, b.y, b.width, b.height].map(round).join(",")}]`) : "",
    ]
      .filter(Boolean)
      .join(" ");
  });
  return `${lines.join("\n")}\n`;
}
