import * as v from "valibot";
import { DeviceId, d } from "../tool-inputs.ts";
import { observeTool } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "device_observe",
  title: "Observe a device",
  description:
    'Captures what the device shows: a screenshot (JPEG, scaled down; the image scale is stated so image points map back to device pixels) and a listing of visible elements, one per line: `@e12 Button "Sign in" id=login [disabled] at=540,1200 size=300x120` (at = centre in device pixels). Refs stay valid while the screen keeps its UI context. Set diff to see what changed since the previous observation. Also reports the foreground app.',
  input: v.strictObject({
    deviceId: DeviceId,
    screenshot: v.optional(v.pipe(v.boolean(), d("Include the screenshot (default true)"))),
    tree: v.optional(v.pipe(v.boolean(), d("Include the element listing (default true)"))),
    diff: v.optional(v.pipe(v.boolean(), d("Also list what changed since the previous observation (default false)"))),
  }),
  annotations: { readOnly: true },
  device: true,
  run: (deps, lane, a) =>
    observeTool(deps, lane, { image: a.screenshot ?? true, tree: a.tree ?? true, diff: a.diff ?? false }),
});
