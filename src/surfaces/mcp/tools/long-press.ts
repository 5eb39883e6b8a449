import * as v from "valibot";
import { ACT, TARGET, d, pointInput } from "../tool-inputs.ts";
import { defineTool } from "../tool.ts";
import { pointTool } from "./point.ts";

export default defineTool({
  name: "long_press",
  title: "Long press",
  description: `Presses and holds. ${TARGET} ${ACT}`,
  input: pointInput({
    durationMs: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(60_000),
        d("How long to hold (default: the platform's long press)"),
      ),
    ),
  }),
  annotations: { destructive: false },
  device: true,
  run: (deps, lane, a) => pointTool(deps, lane, "long_press", a),
});
