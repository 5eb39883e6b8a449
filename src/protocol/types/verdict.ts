import * as v from "valibot";
import { AssetRefSchema } from "./evidence.ts";

export const VerdictStatusSchema = v.picklist(["pass", "fail", "unknown"]);

/**
 * Bounds (blank summary, > 16384 code points, > 64 references) are checked by the handler so that they
 * answer the reference's dedicated `verdict_bounds` error rather than a generic decode failure. The
 * JSON Schema states only the bounds the reference's schema states: it has no blank-summary pattern,
 * so a blank summary is schema-valid there and must be here too (docs/protocol/compatibility.md#blank-verdict-summaries).
 */
export const VerdictSchema = v.strictObject({
  status: VerdictStatusSchema,
  summary: v.pipe(v.string(), v.metadata({ minLength: 1, maxLength: 16_384 })),
  evidence: v.optional(v.pipe(v.array(AssetRefSchema), v.metadata({ maxItems: 64 })), []),
});
export type Verdict = v.InferOutput<typeof VerdictSchema>;

export const VerdictRecordParamsSchema = v.strictObject({ verdict: VerdictSchema });
