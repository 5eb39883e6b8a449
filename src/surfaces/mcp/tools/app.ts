/** What launch_app and terminate_app share: the app named by the key the device's own schema asks for. */
import type { Lane } from "../lanes.ts";
import { ToolError, type ToolResult } from "../results.ts";
import { type CallDeps, actionLine, acted, execute, need } from "../tool-kit.ts";

export async function appTool(
  deps: CallDeps,
  lane: Lane,
  tool: "launch_app" | "terminate_app",
  a: { appId: string; activity?: string },
): Promise<ToolResult> {
  const name = need(lane, tool, [tool === "launch_app" ? "launch" : "terminate"]);
  // iOS names the app by bundle id, Android by package name: the device's own schema says which.
  const schema = lane.actions.find((d) => d.name === name)?.inputSchema as
    | { properties?: Record<string, unknown> }
    | undefined;
  const key = schema?.properties && "bundleId" in schema.properties ? "bundleId" : "packageName";
  const activity = a.activity;
  if (activity !== undefined && !(schema?.properties && "activity" in schema.properties))
    throw new ToolError(
      "invalid_arguments",
      `invalid arguments for ${tool}: activity: ${lane.deviceId} starts apps by ${key} only (activity is for Android)`,
      false,
      { tool, issues: ["activity: not offered by this device"] },
    );
  const r = await execute(deps, lane, name, { [key]: a.appId, ...(activity !== undefined ? { activity } : {}) });
  return acted(
    lane,
    [actionLine(`${tool === "launch_app" ? "launch" : "terminate"} ${a.appId}`, lane, name, r)],
    [{ name, r }],
  );
}
