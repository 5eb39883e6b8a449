/** What tap, double_tap and long_press share: a point from coordinates, a ref or a selector. */
import type { Lane } from "../lanes.ts";
import type { ToolResult } from "../results.ts";
import type { McpSelector } from "../tool-inputs.ts";
import {
  type CallDeps,
  actionLine,
  acted,
  describeSelector,
  elementNamed,
  execute,
  locate,
  need,
  tapElement,
} from "../tool-kit.ts";

export interface PointArgs {
  deviceId: string;
  x?: number;
  y?: number;
  ref?: string;
  selector?: McpSelector;
  durationMs?: number;
}

export async function pointTool(
  deps: CallDeps,
  lane: Lane,
  tool: "tap" | "double_tap" | "long_press",
  a: PointArgs,
): Promise<ToolResult> {
  if (tool === "tap" && a.x === undefined) {
    need(lane, tool, ["tapElement"]);
    const { r, note } = await tapElement(deps, lane, a);
    const label =
      elementNamed(deps, lane, r) ?? a.ref ?? `the element matching ${describeSelector(a.selector as McpSelector)}`;
    return acted(
      lane,
      [actionLine(`tap ${label}`, lane, "tapElement", r), ...(note ? [`note: ${note}`] : [])],
      [{ name: "tapElement", r }],
    );
  }
  const name = need(lane, tool, tool === "tap" ? ["tap"] : tool === "double_tap" ? ["doubleTap"] : ["longPress"]);
  const where =
    a.x !== undefined
      ? { centre: { x: a.x, y: a.y as number }, label: `${Math.round(a.x)},${Math.round(a.y as number)}` }
      : await locate(deps, lane, a);
  const args: Record<string, number> = { x: Math.round(where.centre.x), y: Math.round(where.centre.y) };
  if (tool === "long_press" && a.durationMs !== undefined) args.durationMs = a.durationMs;
  const r = await execute(deps, lane, name, args, a);
  return acted(
    lane,
    [
      actionLine(
        `${tool.replace("_", " ")} at ${args.x},${args.y}${a.x === undefined ? ` (${where.label})` : ""}`,
        lane,
        name,
        r,
      ),
    ],
    [{ name, r }],
  );
}
