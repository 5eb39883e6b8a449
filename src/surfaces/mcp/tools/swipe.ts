import * as v from "valibot";
import { ACT, Coordinate, DeviceId, d } from "../tool-inputs.ts";
import { actionLine, acted, execute, need } from "../tool-kit.ts";
import { defineTool } from "../tool.ts";

export default defineTool({
  name: "swipe",
  title: "Swipe",
  description: `Swipes between two points (startX, startY, endX, endY in device pixels) or in a direction ("up" moves the finger up, which scrolls content down). ${ACT}`,
  input: v.pipe(
    v.strictObject({
      deviceId: DeviceId,
      direction: v.optional(
        v.pipe(
          v.picklist(["up", "down", "left", "right"]),
          d('The way the finger moves: "up" reveals content further down'),
        ),
      ),
      distance: v.optional(
        v.pipe(
          v.number(),
          v.minValue(0.05),
          v.maxValue(0.95),
          d("With direction: how far, as a fraction of the screen (default 0.5)"),
        ),
      ),
      startX: v.optional(Coordinate("Start x")),
      startY: v.optional(Coordinate("Start y")),
      endX: v.optional(Coordinate("End x")),
      endY: v.optional(Coordinate("End y")),
      durationMs: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000), d("Gesture duration (default 300)")),
      ),
    }),
    v.check((a) => {
      const points = [a.startX, a.startY, a.endX, a.endY].filter((p) => p !== undefined).length;
      return a.direction !== undefined ? points === 0 : points === 4;
    }, "give either direction, or all of startX, startY, endX, endY"),
  ),
  annotations: { destructive: false },
  device: true,
  async run(deps, lane, a) {
    const name = need(lane, "swipe", ["swipe", "scroll"]);
    let points =
      a.direction === undefined
        ? { startX: a.startX as number, startY: a.startY as number, endX: a.endX as number, endY: a.endY as number }
        : null;
    if (!points) {
      const o = await lane.call("device.observe", undefined, deps.signal);
      const { width: w, height: h } = o.viewport;
      const f = a.distance ?? 0.5;
      const [cx, cy] = [w / 2, h / 2];
      const dx = a.direction === "left" ? -f * w : a.direction === "right" ? f * w : 0;
      const dy = a.direction === "up" ? -f * h : a.direction === "down" ? f * h : 0;
      points = { startX: cx - dx / 2, startY: cy - dy / 2, endX: cx + dx / 2, endY: cy + dy / 2 };
    }
    const p = {
      startX: Math.round(points.startX),
      startY: Math.round(points.startY),
      endX: Math.round(points.endX),
      endY: Math.round(points.endY),
    };
    const label = `swipe ${a.direction ?? ""} ${p.startX},${p.startY} → ${p.endX},${p.endY}`.replace("  ", " ");
    if (name === "swipe") {
      const r = await execute(deps, lane, "swipe", { ...p, durationMs: a.durationMs ?? 300 });
      return acted(lane, [actionLine(label, lane, "swipe", r)], [{ name, r }]);
    }
    // A device without a swipe gesture scrolls the content the way the finger would move it.
    const r = await execute(deps, lane, "scroll", { deltaX: p.startX - p.endX, deltaY: p.startY - p.endY });
    return acted(
      lane,
      [actionLine(`${label} (as a scroll by ${p.startX - p.endX},${p.startY - p.endY})`, lane, "scroll", r)],
      [{ name, r }],
    );
  },
});
