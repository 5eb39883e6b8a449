import { ACT, TARGET, pointInput } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";
import { pointTool } from "./point.ts";

export default defineTool({
  name: "double_tap",
  title: "Double tap",
  description: `Taps twice in quick succession. ${TARGET} ${ACT}`,
  input: pointInput(),
  annotations: { destructive: false },
  device: true,
  run: (deps, lane, a) => pointTool(deps, lane, "double_tap", a),
});
