import * as v from "valibot";
import { ACT, DeviceId, d } from "../tool-inputs.ts";
import { actionLine, acted, execute, need } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "open_url",
  title: "Open a URL",
  description: `Opens a URL or deep link on the device. ${ACT}`,
  input: v.strictObject({ deviceId: DeviceId, url: v.pipe(v.string(), v.minLength(3), d("A URL or deep link")) }),
  annotations: { destructive: false },
  device: true,
  async run(deps, lane, a) {
    const name = need(lane, "open_url", ["openUrl"]);
    const r = await execute(deps, lane, name, { url: a.url });
    return acted(lane, [actionLine(`open ${a.url}`, lane, name, r)], [{ name, r }]);
  },
});
