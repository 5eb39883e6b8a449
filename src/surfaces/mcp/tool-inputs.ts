/**
 * The parts of the MCP tools' input schemas that several tools share (each tool's own schema is in
 * tools/<name>.ts), and the sentences their descriptions share.
 */
import * as v from "valibot";
import { REFERENCE_KEYS } from "../../protocol/driver-arguments.ts";

export const d = v.description;

export const DeviceId = v.pipe(
  v.string(),
  v.minLength(1),
  d(
    "Device id from devices_list, e.g. android-adb:emulator-5554 or mock-1. Required on every device tool; there is no current device.",
  ),
);
export const Coordinate = (axis: string) =>
  v.pipe(
    v.number(),
    v.finite(),
    v.minValue(0),
    d(`${axis} in device pixels (the tree's at= values; an image point divided by the image scale)`),
  );
export const Ref = v.pipe(
  v.string(),
  v.minLength(1),
  d('An element ref as printed in the latest device_observe or ui_tree listing of this device, e.g. "@e12"'),
);

export const SelectorSchema = v.pipe(
  v.strictObject({
    role: v.optional(
      v.pipe(v.string(), v.minLength(1), d('Element role, e.g. "Button", "TextField", "android.widget.EditText"')),
    ),
    name: v.optional(
      v.pipe(v.string(), v.minLength(1), d("Accessible name (content description / accessibility label)")),
    ),
    value: v.optional(v.pipe(v.string(), d("Current value of an input"))),
    identifier: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        d('Resource id or accessibility identifier, as printed after id= in the tree (e.g. "username")'),
      ),
    ),
    text: v.optional(
      v.strictObject({
        value: v.pipe(v.string(), v.minLength(1), d("Text to match")),
        mode: v.optional(
          v.pipe(v.picklist(["exact", "contains", "regex"]), d("How to match (default exact; regex is RE2 syntax)")),
        ),
        caseSensitive: v.optional(v.pipe(v.boolean(), d("Default true"))),
      }),
    ),
  }),
  v.check((s) => Object.keys(s).length > 0, "a selector needs at least one of role, name, value, identifier, text"),
  d("Finds one element by its properties; all given members must match"),
);
export type McpSelector = v.InferOutput<typeof SelectorSchema>;

export const target = {
  x: v.optional(Coordinate("X")),
  y: v.optional(Coordinate("Y")),
  ref: v.optional(Ref),
  selector: v.optional(SelectorSchema),
};
export const oneTarget = (a: { x?: number; y?: number; ref?: string; selector?: unknown }) =>
  [a.x !== undefined || a.y !== undefined, a.ref !== undefined, a.selector !== undefined].filter(Boolean).length === 1;
export const bothCoordinates = (a: { x?: number; y?: number }) => (a.x === undefined) === (a.y === undefined);
export const ONE_TARGET = "give exactly one target: x and y, or ref, or selector";
export const BOTH = "x and y go together";

export const optionalTarget = { ref: v.optional(Ref), selector: v.optional(SelectorSchema) };
export const notBoth = (a: { ref?: string; selector?: unknown }) => a.ref === undefined || a.selector === undefined;
export const NOT_BOTH = "give ref or selector, not both";

export const KEYS = ["back", "home", "recentApps", ...REFERENCE_KEYS] as const;

export const ACT =
  "Recorded as an action in this client's DeviceRail Session on the device; the result names it. The screen usually changes: observe again before using refs.";
export const TARGET = "Target: x and y (device pixels), or ref from the latest listing, or selector.";

/** The arguments of tap, double_tap and long_press: exactly one of x and y, ref, selector. */
export const pointInput = <E extends v.ObjectEntries = {}>(extra?: E) =>
  v.pipe(
    v.strictObject({ deviceId: DeviceId, ...target, ...(extra as E) }),
    v.check((a) => oneTarget(a), ONE_TARGET),
    v.check((a) => bothCoordinates(a), BOTH),
  );
