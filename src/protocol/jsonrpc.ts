import * as v from "valibot";
import { RequestTimeoutMsSchema, RpcIdSchema } from "./ids.ts";
import { RpcErrorObjectSchema } from "./errors.ts";

export const JSONRPC_VERSION = "2.0";

export const RpcParamsSchema = v.union([v.record(v.string(), v.unknown()), v.array(v.unknown())]);

/** Client → server. `timeoutMs` is an envelope field, never inside params. */
export const RpcRequestSchema = v.strictObject({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RpcIdSchema,
  method: v.string(),
  timeoutMs: v.optional(RequestTimeoutMsSchema),
  params: v.optional(RpcParamsSchema),
});
export type RpcRequest = v.InferOutput<typeof RpcRequestSchema>;

export const RpcSuccessSchema = v.strictObject({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RpcIdSchema,
  result: v.unknown(),
});

/** `id` is null only when the line could not be decoded into a request. */
export const RpcFailureSchema = v.strictObject({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: v.nullable(RpcIdSchema),
  error: RpcErrorObjectSchema,
});
export type RpcFailure = v.InferOutput<typeof RpcFailureSchema>;

export const RpcResponseSchema = v.union([RpcSuccessSchema, RpcFailureSchema]);
