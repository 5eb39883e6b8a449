import { MAX_SAFE } from "../protocol/ids.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import { JsonFloat } from "../protocol/json.ts";

const ALLOWED = new Set(["jsonrpc", "id", "method", "timeoutMs", "params"]);

const isU53 = (x: unknown, min: number): x is number =>
  typeof x === "number" && Number.isInteger(x) && x >= min && x <= MAX_SAFE;

/** A plain JSON object or array (not a tagged float, not a class instance). */
export function isPlainContainer(x: unknown): boolean {
  if (Array.isArray(x)) return true;
  if (x === null || typeof x !== "object" || x instanceof JsonFloat) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/**
 * The envelope rules of docs/protocol/envelope-and-errors.md#requests — exactly what RpcRequestSchema accepts (a test holds the two
 * together), hand-written because it runs on every line and the generic validator costs ~1 µs.
 * Null when the value is not a request of our subset.
 */
export function decodeEnvelope(value: unknown, duplicateTopLevelKey: boolean): RpcRequest | null {
  if (duplicateTopLevelKey || Array.isArray(value) || !isPlainContainer(value)) return null;
  const o = value as Record<string, unknown>;
  for (const k in o) if (!ALLOWED.has(k)) return null;
  if (o.jsonrpc !== "2.0" || typeof o.method !== "string") return null;
  const id = o.id;
  if (typeof id !== "string" && !isU53(id, 0)) return null;
  if ("timeoutMs" in o && !isU53(o.timeoutMs, 1)) return null;
  if ("params" in o && !isPlainContainer(o.params)) return null;
  return o as RpcRequest;
}
