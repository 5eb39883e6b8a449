import * as v from "valibot";
import { ACT, DeviceId, d } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";
import { appTool } from "./app.ts";

export default defineTool({
  name: "terminate_app",
  title: "Stop an app",
  description: `Force-stops an app; unsaved state in it is lost. ${ACT}`,
  input: v.strictObject({
    deviceId: DeviceId,
    appId: v.pipe(v.string(), v.minLength(1), d("Android package name or iOS bundle id")),
  }),
  annotations: { destructive: true, idempotent: true },
  device: true,
  run: (deps, lane, a) => appTool(deps, lane, "terminate_app", a),
});
