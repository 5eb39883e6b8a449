/**
 * The farm's HTTP routes on every farm host's port, for clients that would rather ask a host than
 * the database (same token and checks as every HTTP route):
 *
 *   POST /farm/acquire  {platform?, model?, os?, host?, capability?, device?, priority?, waitMs?, holder?}
 *        → 200 {allocation: {allocationId, hostId, host, endpoint, deviceId, device, credential, leaseMs, waitedMs}}
 *   POST /farm/release  {allocationId} → 200 {released: true|false}
 *
 * An acquire waits up to waitMs; a client that disconnects while waiting drops its place at once.
 * Errors are `{"error": {code: -32099, message, data: {code, message, retryable, details}}}` with
 * data.code farm_no_matching_device (404), farm_acquire_timed_out (408), farm_unavailable (503)
 * or invalid_params (400).
 */
import { SQL } from "bun";
import * as v from "valibot";
import type { Logger } from "../../rpc/rpc-error.ts";
import { extensionError, jsonResponse } from "../../transports/http-guard.ts";
import { FarmAcquireError, acquire, release } from "./allocator.ts";
import { AcquireRequestSchema } from "./constraints.ts";
import { farmWhere } from "./member.ts";

/** JSON-RPC's implementation-defined range; devicerail uses it for the farm's HTTP errors only. */
export const FARM_ERROR_NUMERIC = -32099;

const farmError = (status: number, code: string, message: string, retryable: boolean, details: Record<string, unknown> = {}) =>
  extensionError(status, FARM_ERROR_NUMERIC, code, message, retryable, details);

const ok = (body: unknown) => jsonResponse(JSON.stringify(body));

const ReleaseSchema = v.strictObject({ allocationId: v.pipe(v.string(), v.uuid("expected an allocation id")) });

/** An error from the database driver (connection refused, closed, timed out), not from a query. */
export function isConnectionError(err: unknown): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  // SQLSTATE class 08 is a connection exception; 57P01–57P03 the server shutting down or starting.
  if (typeof errno === "string" && (errno.startsWith("08") || errno.startsWith("57P"))) return true;
  return typeof code === "string" && (code.startsWith("ERR_POSTGRES_CONNECTION") || code === "ERR_POSTGRES_IDLE_TIMEOUT" || code === "ECONNREFUSED");
}

export class FarmHttp {
  private pool: SQL | null = null;

  constructor(private readonly opts: { url: string; leaseMs: number; log: Logger }) {}

  /** The routes' answer, or null when the path is not the farm's. */
  route(req: Request, url: URL, body: string): Promise<Response> | null {
    if (url.pathname !== "/farm/acquire" && url.pathname !== "/farm/release") return null;
    if (req.method !== "POST") return Promise.resolve(farmError(405, "invalid_request", `${url.pathname} takes POST`, false));
    let json: unknown;
    try {
      json = JSON.parse(body || "{}");
    } catch {
      return Promise.resolve(farmError(400, "invalid_params", "the body is not JSON", false));
    }
    return url.pathname === "/farm/acquire" ? this.acquire(req, json) : this.release(json);
  }

  private database(): SQL {
    this.pool ??= new SQL(this.opts.url, { max: 8, idleTimeout: 30, connectionTimeout: 5 });
    return this.pool;
  }

  private async acquire(req: Request, json: unknown): Promise<Response> {
    const parsed = v.safeParse(AcquireRequestSchema, json);
    if (!parsed.success) return invalid(parsed.issues);
    try {
      const allocation = await acquire(this.database(), parsed.output, { leaseMs: this.opts.leaseMs, signal: req.signal });
      if (req.signal.aborted) {
        // Served as the client left: nobody will claim it, so give it back now.
        await release(this.database(), allocation.allocationId, "client gone before the answer");
      }
      return ok({ allocation });
    } catch (err) {
      return this.failure(err);
    }
  }

  private async release(json: unknown): Promise<Response> {
    const parsed = v.safeParse(ReleaseSchema, json);
    if (!parsed.success) return invalid(parsed.issues);
    try {
      return ok({ released: await release(this.database(), parsed.output.allocationId, "released") });
    } catch (err) {
      return this.failure(err);
    }
  }

  private failure(err: unknown): Response {
    if (err instanceof FarmAcquireError) {
      if (err.reason === "noMatchingDevice") return farmError(404, "farm_no_matching_device", err.message, false, err.details);
      if (err.reason === "timedOut") return farmError(408, "farm_acquire_timed_out", err.message, true, err.details);
      return farmError(499, "request_cancelled", err.message, false);
    }
    this.opts.log.warn({ err: (err as Error).message }, "farm request failed");
    if (isConnectionError(err) || !(err as { code?: unknown }).code)
      return farmError(503, "farm_unavailable", `the farm database at ${farmWhere(this.opts.url)} is unreachable`, true);
    return farmError(500, "internal_error", "the farm request failed", true);
  }

  async stop(): Promise<void> {
    await this.pool?.close({ timeout: 1 }).catch(() => {});
  }
}

function invalid(issues: readonly v.BaseIssue<unknown>[]): Response {
  const first = issues[0];
  const where = first?.path?.map((p) => String(p.key)).join(".") ?? "";
  return farmError(400, "invalid_params", `${where ? `${where}: ` : ""}${first?.message ?? "invalid"}`, false);
}
