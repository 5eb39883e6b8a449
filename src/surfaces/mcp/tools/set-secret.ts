import * as v from "valibot";
import type { ActionResult } from "../../../protocol/types/action.ts";
import { ACT, DeviceId, NOT_BOTH, d, notBoth, optionalTarget } from "../tool-inputs.ts";
import { actionLine, acted, execute, need, tapElement, targetOf } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "set_secret",
  title: "Enter a secret",
  description: `Types a password or other secret into the focused field, or into the field given by ref or selector, as a protected action: the value is never shown in any result, log, event, screenshot or export. ${ACT}`,
  input: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      secret: v.pipe(
        v.string(),
        v.minLength(1),
        v.maxLength(1024),
        d("The value; it is typed as a protected action and never appears in any result, log, event or export"),
      ),
      ...optionalTarget,
    }),
    v.check((a) => notBoth(a), NOT_BOTH),
  ),
  annotations: { destructive: false },
  device: true,
  async run(deps, lane, a) {
    // The value goes to the device as a protected action's argument only: never into text here.
    if ((a.ref !== undefined || a.selector !== undefined) && lane.has("setElementValue")) {
      const r = await execute(deps, lane, "setElementValue", { target: targetOf(deps, lane, a), value: a.secret }, a);
      return acted(
        lane,
        [actionLine(`set a secret into ${a.ref ?? "the field"}`, lane, "setElementValue", r)],
        [{ name: "setElementValue", r }],
      );
    }
    need(lane, "set_secret", ["inputSecret"]);
    const results: { name: string; r: ActionResult }[] = [];
    const notes: string[] = [];
    if (a.ref !== undefined || a.selector !== undefined) {
      const { r, note } = await tapElement(deps, lane, a);
      results.push({ name: "tapElement", r });
      if (note) notes.push(`note: ${note}`);
    }
    results.push({ name: "inputSecret", r: await execute(deps, lane, "inputSecret", { secret: a.secret }) });
    const lines = results.map(({ name, r }) =>
      actionLine(name === "inputSecret" ? "type a secret" : `tap ${a.ref ?? "the field"}`, lane, name, r),
    );
    return acted(lane, [...lines, ...notes], results);
  },
});
