import * as v from "valibot";
import type { ActionResult } from "../../../protocol/types/action.ts";
import { ACT, DeviceId, NOT_BOTH, d, notBoth, optionalTarget } from "../tool-inputs.ts";
import { actionLine, acted, elementNamed, execute, need, tapElement } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "type_text",
  title: "Type text",
  description: `Types any Unicode text into the focused field, or first taps the field given by ref or selector. submit presses enter afterwards. For passwords and other secrets use set_secret. ${ACT}`,
  input: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      text: v.pipe(v.string(), v.minLength(1), v.maxLength(4096), d("Any Unicode text")),
      ...optionalTarget,
      submit: v.optional(v.pipe(v.boolean(), d("Press enter afterwards (default false)"))),
    }),
    v.check((a) => notBoth(a), NOT_BOTH),
  ),
  annotations: { destructive: false },
  device: true,
  async run(deps, lane, a) {
    need(lane, "type_text", ["inputText"]);
    const results: { name: string; r: ActionResult }[] = [];
    const lines: string[] = [];
    if (a.ref !== undefined || a.selector !== undefined) {
      need(lane, "type_text", ["tapElement"]);
      const { r, note } = await tapElement(deps, lane, a);
      results.push({ name: "tapElement", r });
      lines.push(
        actionLine(`tap ${elementNamed(deps, lane, r) ?? a.ref ?? "the field"}`, lane, "tapElement", r),
        ...(note ? [`note: ${note}`] : []),
      );
    }
    if (a.submit) need(lane, "type_text with submit", ["keyPress"]);
    const r = await execute(deps, lane, "inputText", { text: a.text });
    results.push({ name: "inputText", r });
    lines.push(actionLine(`type ${JSON.stringify(a.text)}`, lane, "inputText", r));
    if (a.submit) {
      const k = await execute(deps, lane, "keyPress", { key: "enter" });
      results.push({ name: "keyPress", r: k });
      lines.push(actionLine("press enter", lane, "keyPress", k));
    }
    return acted(lane, lines, results);
  },
});
