import * as v from "valibot";
import type { ActionResult } from "../../../protocol/types/action.ts";
import { DEFAULT_WAIT_MS } from "../../../protocol/ui-geometry.ts";
import { ToolError } from "../results.ts";
import { DeviceId, SelectorSchema, d } from "../tool-inputs.ts";
import {
  actionLine,
  acted,
  describeSelector,
  elementNamed,
  execute,
  fullSelector,
  need,
  screenLines,
} from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "wait_for",
  title: "Wait for an element",
  description:
    "Waits until an element matching the selector is visible (or, with gone, no longer there), up to timeoutMs (default 10000). Fails with action_timed_out and the current screen when it does not happen.",
  input: v.strictObject({
    deviceId: DeviceId,
    selector: SelectorSchema,
    gone: v.optional(v.pipe(v.boolean(), d("Wait for the element to disappear instead (default false)"))),
    timeoutMs: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600_000), d("How long to wait (default 10000)")),
    ),
  }),
  annotations: { readOnly: true },
  device: true,
  async run(deps, lane, a) {
    need(lane, "wait_for", ["waitForElement"]);
    const waitMs = a.timeoutMs ?? DEFAULT_WAIT_MS;
    const condition = a.gone ? "absent" : "visible";
    const what = `${a.gone ? "disappear" : "appear"}: ${describeSelector(a.selector)}`;
    let r: ActionResult | null = null;
    try {
      r = await execute(deps, lane, "waitForElement", { selector: fullSelector(a.selector), condition }, {}, waitMs);
    } catch (err) {
      if (!(err instanceof ToolError && err.code === "action_timed_out")) throw err;
    }
    const out = r?.output as { matched?: boolean } | undefined;
    if (!r || !out?.matched) {
      const { lines } = await screenLines(deps, lane, a.gone ? undefined : a.selector);
      throw new ToolError(
        "action_timed_out",
        `waited ${waitMs} ms for an element to ${what}; it did not`,
        true,
        { condition, timeoutMs: waitMs },
        lines,
      );
    }
    const found = a.gone ? null : elementNamed(deps, lane, r);
    return acted(
      lane,
      [actionLine(`wait for an element to ${what}${found ? ` (${found})` : ""}`, lane, "waitForElement", r)],
      [{ name: "waitForElement", r }],
    );
  },
});
