import * as v from "valibot";
import { ACT, DeviceId, d } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";
import { appTool } from "./app.ts";

export default defineTool({
  name: "launch_app",
  title: "Launch an app",
  description: `Starts an installed app by Android package name or iOS bundle id and waits until it is shown. ${ACT}`,
  input: v.strictObject({
    deviceId: DeviceId,
    appId: v.pipe(v.string(), v.minLength(1), d("Android package name or iOS bundle id")),
    activity: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.maxLength(255),
        d(
          "Android only: the activity to start, fully qualified or relative to the package (.MainActivity); needed when the app has several launcher activities and no default",
        ),
      ),
    ),
  }),
  annotations: { destructive: false },
  device: true,
  run: (deps, lane, a) => appTool(deps, lane, "launch_app", a),
});
