/**
 * The farm's HTTP routes on every farm host's port, for clients that would rather ask a host than
 * the database (same token and checks as every HTTP route):
 *
 *   POST /farm/acquire  {platform?, model?, os?, host?, capability?, device?, priority?, waitMs?, holder?}
 *        → 200 {allocation: {allocationId, hostId, host, endpoint, deviceId, device, credential, leaseMs, waitedMs}}
 *   POST /farm/release  {allocationId} → 200 {released: true|false}
 *
 * An acquire waits up to waitMs; a client that disconnects while waiting drops its place at once.
 * Errors are the JSON-RPC error object from the one table (docs/protocol/errors.md):
 * farm_no_matching_device (404), farm_acquire_timed_out (408) and farm_unavailable (503) are the
 * farm's own (−32099); invalid_params (400), invalid_request (405), request_cancelled (503) and
 * internal_error (500) are the protocol's, with its numbers.
 */
import { SQL } from "bun";
import * as v from "valibot";
import type { Logger } from "../protocol/rpc-error.ts";
import { httpError, jsonResponse } from "../protocol/http.ts";
import { FarmAcquireError, acquire, release } from "./allocator.ts";
import { AcquireRequestSchema } from "./constraints.ts";
import { farmWhere } from "./member.ts";

const ok = (body: unknown) => jsonResponse(JSON.stringify(body));

const ReleaseSchema = v.strictObject({ allocationId: v.pipe(v.string(), v.uuid("expected an allocation id")) });

/** An error from the database driver (connection refused, closed, timed out), not from a query. */
export function isConnectionError(err: unknown): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  // SQLSTATE class 08 is a connection exception; 57P01–57P03 the server shutting down or starting.
  if (typeof errno === "string" && (errno.startsWith("08") || errno.startsWith("57P"))) return true;
  return (
    typeof code === "string" &&
    (code.startsWith("ERR_POSTGRES_CONNECTION") || code === "ERR_POSTGRES_IDLE_TIMEOUT" || code === "ECONNREFUSED")
  );
}

export class FarmHttp {
  private pool: SQL | null = null;

  constructor(private readonly opts: { url: string; leaseMs: number; log: Logger }) {}

  /** The routes' answer, or null when the path is not the farm's. */
  route(req: Request, url: URL, body: string): Promise<Response> | null {
    if (url.pathname !== "/farm/acquire" && url.pathname !== "/farm/release") return null;
    if (req.method !== "POST")
      return Promise.resolve(
        httpError("invalid_request", { message: `${url.pathname} takes POST`, details: {} }, { status: 405 }),
      );
    let json: unknown;
    try {
      json = JSON.parse(body || "{}");
    } catch {
      return Promise.resolve(httpError("invalid_params", { message: "the body is not JSON", details: {} }));
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
      const allocation = await acquire(this.database(), parsed.output, {
        leaseMs: this.opts.leaseMs,
        signal: req.signal,
      });
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
      if (err.reason === "noMatchingDevice")
        return httpError("farm_no_matching_device", { message: err.message, details: err.details });
      if (err.reason === "timedOut")
        return httpError("farm_acquire_timed_out", { message: err.message, details: err.details });
      return httpError("request_cancelled", { message: err.message, details: {} });
    }
    this.opts.log.warn({ err: (err as Error).message }, "farm request failed");
    if (isConnectionError(err) || !(err as { code?: unknown }).code)
      return httpError("farm_unavailable", {
        message: `the farm database at ${farmWhere(this.opts.url)} is unreachable`,
        details: {},
      });
    return httpError("internal_error", { message: "the farm request failed", retryable: true, details: {} });
  }

  async stop(): Promise<void> {
    await this.pool?.close({ timeout: 1 }).catch(() => {});
  }
}

function invalid(issues: readonly v.BaseIssue<unknown>[]): Response {
  const first = issues[0];
  const where = first?.path?.map((p) => String(p.key)).join(".") ?? "";
  return httpError("invalid_params", {
    message: `${where ? `${where}: ` : ""}${first?.message ?? "invalid"}`,
    details: {},
  });
}
