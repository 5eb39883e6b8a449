import * as v from "valibot";
import { DeviceIdSchema, JsonObjectSchema, U53Schema, UuidSchema, nullable, omittable } from "../ids.ts";
import { ViewportSchema } from "./device.ts";
import { AssetRefSchema } from "./evidence.ts";
import { UiSnapshotRefSchema } from "./ui.ts";

export const ScreenshotOmissionReasonSchema = v.picklist(["policy", "protectedAction"]);
export const UiSnapshotOmissionReasonSchema = v.picklist(["driverUnsupported", "policy", "protectedAction"]);

export const ObservationSchema = v.object({
  id: UuidSchema,
  deviceId: DeviceIdSchema,
  capturedAtMs: U53Schema,
  viewport: ViewportSchema,
  screenshot: nullable(AssetRefSchema),
  screenshotOmission: omittable(ScreenshotOmissionReasonSchema),
  uiSnapshot: omittable(UiSnapshotRefSchema),
  uiSnapshotOmission: omittable(UiSnapshotOmissionReasonSchema),
  metadata: v.optional(JsonObjectSchema, {}),
});
export type Observation = v.InferOutput<typeof ObservationSchema>;
