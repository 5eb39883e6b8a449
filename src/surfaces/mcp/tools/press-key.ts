import * as v from "valibot";
import { ACT, DeviceId, KEYS, d } from "../tool-inputs.ts";
import { actionLine, acted, execute, need } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "press_key",
  title: "Press a key",
  description: `Presses a system navigation button (back, home, recentApps) or a keyboard key. ${ACT}`,
  input: v.strictObject({
    deviceId: DeviceId,
    key: v.pipe(v.picklist(KEYS), d("back, home and recentApps are system navigation; the rest are keyboard keys")),
  }),
  annotations: { destructive: false },
  device: true,
  async run(deps, lane, a) {
    const name =
      lane.has(a.key) && ["back", "home", "recentApps"].includes(a.key) ? a.key : need(lane, "press_key", ["keyPress"]);
    const r = await execute(deps, lane, name, name === "keyPress" ? { key: a.key } : {});
    return acted(lane, [actionLine(`press ${a.key}`, lane, name, r)], [{ name, r }]);
  },
});
