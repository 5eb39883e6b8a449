import * as v from "valibot";
import { DeviceIdSchema, U16Schema, UuidSchema, nullable } from "../ids.ts";

export const PeerInfoSchema = v.strictObject({ name: v.string(), version: v.string() });
export type PeerInfo = v.InferOutput<typeof PeerInfoSchema>;

export const ProtocolRangeSchema = v.strictObject({ major: U16Schema, minMinor: U16Schema, maxMinor: U16Schema });
export type ProtocolRange = v.InferOutput<typeof ProtocolRangeSchema>;

/**
 * The JSON Schema requires a range, as the reference's does, but an empty list still decodes: the
 * reference's server answers it with the typed emptyProtocolOffer rather than a decode failure (docs/protocol/compatibility.md#empty-protocol-offer).
 */
export const ProtocolOfferSchema = v.strictObject({
  ranges: v.pipe(v.array(ProtocolRangeSchema), v.metadata({ minItems: 1 })),
});
export type ProtocolOffer = v.InferOutput<typeof ProtocolOfferSchema>;

const uniqueNames = v.pipe(
  v.array(v.string()),
  v.check((xs) => new Set(xs).size === xs.length, "feature names must be unique"),
  v.metadata({ uniqueItems: true }),
);

export const FeatureOfferSchema = v.strictObject({
  required: v.optional(uniqueNames, []),
  optional: v.optional(uniqueNames, []),
});
export type FeatureOffer = v.InferOutput<typeof FeatureOfferSchema>;

export const HelloParamsSchema = v.strictObject({
  client: PeerInfoSchema,
  protocol: ProtocolOfferSchema,
  features: v.optional(FeatureOfferSchema, { required: [], optional: [] }),
});
export type HelloParams = v.InferOutput<typeof HelloParamsSchema>;

export const ProtocolVersionSchema = v.strictObject({ major: U16Schema, minor: U16Schema });
export type ProtocolVersion = v.InferOutput<typeof ProtocolVersionSchema>;

export const ProtocolSelectionSchema = v.strictObject({ selected: ProtocolVersionSchema });
export const TransportInfoSchema = v.strictObject({ kind: v.string(), framing: v.string() });
export type TransportInfo = v.InferOutput<typeof TransportInfoSchema>;
export const FeatureSelectionSchema = v.strictObject({ enabled: v.array(v.string()) });

export const HelloResultSchema = v.strictObject({
  connectionId: UuidSchema,
  protocol: ProtocolSelectionSchema,
  server: PeerInfoSchema,
  transport: TransportInfoSchema,
  features: FeatureSelectionSchema,
});
export type HelloResult = v.InferOutput<typeof HelloResultSchema>;

export const ProtocolIncompatibilityReasonSchema = v.picklist(["clientTooOld", "serverTooOld", "noCommonVersion"]);
export type ProtocolIncompatibilityReason = v.InferOutput<typeof ProtocolIncompatibilityReasonSchema>;

export const SystemDescribeResultSchema = v.strictObject({
  connection: HelloResultSchema,
  client: PeerInfoSchema,
  deviceId: nullable(DeviceIdSchema),
  activeSessionId: nullable(UuidSchema),
});
export type SystemDescribeResult = v.InferOutput<typeof SystemDescribeResultSchema>;
