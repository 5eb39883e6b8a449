import * as v from "valibot";
import { DeviceId } from "../tool-inputs.ts";
import { observeTool } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "screenshot",
  title: "Screenshot",
  description:
    "The device's screen as an image (JPEG, long edge at most 1568 px by default) with its scale, without the element listing.",
  input: v.strictObject({ deviceId: DeviceId }),
  annotations: { readOnly: true },
  device: true,
  run: (deps, lane) => observeTool(deps, lane, { image: true, tree: false, diff: false }),
});
