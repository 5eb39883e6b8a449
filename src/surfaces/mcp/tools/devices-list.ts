import * as v from "valibot";
import { success } from "../results.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "devices_list",
  title: "List devices",
  description:
    "Lists the phones, emulators and simulators this daemon can drive, with the device id every other tool needs, and whether another client holds one.",
  input: v.strictObject({}),
  annotations: { readOnly: true, idempotent: true },
  device: false,
  run: (deps) =>
    deps.client.plain(async (rpc) => {
      const { devices } = await rpc.call("devices.list");
      const { sessions } = await rpc.call("devicerail.sessions.list", { state: "active" });
      const rows = devices.map((d) => ({ ...d, heldBy: sessions.find((s) => s.deviceId === d.id)?.id ?? null }));
      const lines = rows.length
        ? rows.map(
            (d) =>
              `${d.id}  ${d.platform.kind}  ${JSON.stringify(d.name)}  os ${d.osVersion ?? "?"}  ${d.heldBy ? `held by session ${d.heldBy}` : "free"}`,
          )
        : ["no devices: attach a phone over USB (adb devices should list it) or boot an iOS Simulator"];
      return success(lines, { devices: rows });
    }),
});
