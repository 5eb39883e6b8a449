import * as v from "valibot";
import { DeviceId, d } from "../tool-inputs.ts";
import { observeTool } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "ui_tree",
  title: "Element listing",
  description:
    "The visible, meaningful elements of the device's screen as compact text with refs (see device_observe), without an image: cheaper when you need to find or tap something.",
  input: v.strictObject({
    deviceId: DeviceId,
    diff: v.optional(v.pipe(v.boolean(), d("Also list what changed since the previous observation (default false)"))),
  }),
  annotations: { readOnly: true },
  device: true,
  run: (deps, lane, a) => observeTool(deps, lane, { image: false, tree: true, diff: a.diff ?? false }),
});
