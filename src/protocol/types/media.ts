import * as v from "valibot";
import { MediaStreamIdSchema, SeqSchema, U53Schema, cpString, omittable } from "../ids.ts";
import { ViewportSchema } from "./device.ts";
import { AssetRefSchema } from "./evidence.ts";

export const MediaStreamKindSchema = v.picklist(["screenshot", "video"]);

export const MediaStreamInfoSchema = v.strictObject({
  id: MediaStreamIdSchema,
  kind: MediaStreamKindSchema,
  mediaType: cpString(1, 255),
  viewport: omittable(ViewportSchema),
});

export const MediaFrameSchema = v.strictObject({
  streamId: MediaStreamIdSchema,
  frameIndex: SeqSchema,
  keyFrame: v.optional(v.boolean(), false),
  durationMs: omittable(U53Schema),
  evidence: AssetRefSchema,
});

export const MediaStreamStartParamsSchema = v.strictObject({
  streamId: MediaStreamIdSchema,
  kind: MediaStreamKindSchema,
});
export const MediaStreamStartResultSchema = v.strictObject({ stream: MediaStreamInfoSchema });
export const MediaStreamCaptureParamsSchema = v.strictObject({
  streamId: MediaStreamIdSchema,
  frameIndex: SeqSchema,
  durationMs: omittable(U53Schema),
});
export const MediaStreamCaptureResultSchema = v.strictObject({ frame: MediaFrameSchema });
export const MediaStreamEndParamsSchema = v.strictObject({ streamId: MediaStreamIdSchema });
export const MediaStreamEndResultSchema = v.strictObject({ streamId: MediaStreamIdSchema, frameCount: U53Schema });

export type MediaStreamKind = v.InferOutput<typeof MediaStreamKindSchema>;
export type MediaStreamInfo = v.InferOutput<typeof MediaStreamInfoSchema>;
export type MediaFrame = v.InferOutput<typeof MediaFrameSchema>;
