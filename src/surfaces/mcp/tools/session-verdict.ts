import * as v from "valibot";
import { success } from "../results.ts";
import { DeviceId, d } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "session_verdict",
  title: "Record a verdict",
  description:
    "Records pass, fail or unknown with a summary in this client's DeviceRail Session on the device, for reports and CI.",
  input: v.strictObject({
    deviceId: DeviceId,
    status: v.pipe(v.picklist(["pass", "fail", "unknown"]), d("The verdict")),
    summary: v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(16_384),
      d("One or two sentences a reviewer reads: what was checked and what was seen"),
    ),
  }),
  annotations: { destructive: false, idempotent: false },
  device: true,
  async run(deps, lane, a) {
    await lane.call("verdict.record", { verdict: { status: a.status, summary: a.summary } }, deps.signal);
    return success([`verdict ${a.status} recorded in session ${lane.sessionId} on ${lane.deviceId}`], {
      deviceId: lane.deviceId,
      sessionId: lane.sessionId,
      status: a.status,
    });
  },
});
