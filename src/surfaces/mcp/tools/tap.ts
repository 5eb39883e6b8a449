import { ACT, TARGET, pointInput } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";
import { pointTool } from "./point.ts";

export default defineTool({
  name: "tap",
  title: "Tap",
  description: `Taps once. ${TARGET} A ref or selector taps the element itself (at its centre, or through accessibility where the platform can). ${ACT}`,
  input: pointInput(),
  annotations: { destructive: false },
  device: true,
  run: (deps, lane, a) => pointTool(deps, lane, "tap", a),
});
