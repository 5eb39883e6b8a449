import * as v from "valibot";
import { DeviceIdSchema, U32Schema, nullable } from "../ids.ts";

const kinds = ["web", "android", "ios", "harmonyOs", "macOs", "windows", "linux", "rdp", "mock"] as const;

/** Adjacently tagged: `kind`, plus `value` only for "other". */
export const PlatformSchema = v.variant("kind", [
  ...kinds.map((k) => v.object({ kind: v.literal(k) })),
  v.object({ kind: v.literal("other"), value: v.string() }),
]);
export type Platform = v.InferOutput<typeof PlatformSchema>;

export const DeviceInfoSchema = v.object({
  id: DeviceIdSchema,
  name: v.string(),
  platform: PlatformSchema,
  osVersion: nullable(v.string()),
  connected: v.boolean(),
});
export type DeviceInfo = v.InferOutput<typeof DeviceInfoSchema>;

const finite = v.pipe(v.number(), v.finite());

export const ViewportSchema = v.object({ width: U32Schema, height: U32Schema, scaleFactor: finite });
export type Viewport = v.InferOutput<typeof ViewportSchema>;

export const DevicesListResultSchema = v.strictObject({
  devices: v.array(DeviceInfoSchema),
  selectedDeviceId: nullable(DeviceIdSchema),
});
export type DevicesListResult = v.InferOutput<typeof DevicesListResultSchema>;

export const DeviceSelectParamsSchema = v.strictObject({ deviceId: DeviceIdSchema });
export const DeviceSelectResultSchema = v.strictObject({ device: DeviceInfoSchema });
export const DeviceDisconnectResultSchema = v.strictObject({ disconnected: v.literal(true) });
