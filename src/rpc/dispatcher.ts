/** The one dispatcher: its single catch and result check; just over 300 lines after formatting. */
import { type RpcErrorObject, errorObject } from "../protocol/errors.ts";
import type { RpcId } from "../protocol/ids.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import { CONCURRENT_METHODS } from "../protocol/methods.ts";
import type { PeerInfo } from "../protocol/types/handshake.ts";
import type { Connection, InFlight } from "./connection.ts";
import { checkedFailureFrame, oversizedResult, successFrame, successFrameFromJson } from "./encode.ts";
import { decodeEnvelope } from "./envelope.ts";
import { withinGrace } from "./grace.ts";
import { parseJson } from "../protocol/json.ts";
import {
  type CloseReason,
  type ConnectionPolicy,
  type Handlers,
  type Route,
  type StepDeps,
  abort,
  abortError,
  runSteps,
} from "./method-steps.ts";
import { type Logger, RpcError } from "../protocol/rpc-error.ts";

export type { CloseReason, ConnectionPolicy, HandlerContext, Handlers, Route } from "./method-steps.ts";
export { deepFreeze } from "./method-steps.ts";

export interface DispatcherOptions {
  handlers: Handlers;
  /** Core's answers about a connection: routing, its Session, and its cleanup at close. */
  policy: ConnectionPolicy;
  server: PeerInfo;
  log: Logger;
}

/**
 * What an in-process caller gets back: the result (with its JSON, as a socket client would read
 * it) or the error.
 */
export type CallOutcome = { ok: true; result: unknown; json: string } | { ok: false; error: RpcErrorObject };

/** How one request is answered: as a frame on the connection, or as a value to an in-process caller. */
interface Reply {
  success(conn: Connection, id: RpcId, result: unknown): void | Promise<void>;
  failure(conn: Connection, id: RpcId | null, error: RpcErrorObject): void | Promise<void>;
}

export const MAX_IN_FLIGHT = 256;
const SHUTDOWN_GRACE_MS = 5_000;
const CONCURRENT = new Set<string>(CONCURRENT_METHODS);

/**
 * Transport-agnostic JSON-RPC dispatch: decoding, admission of concurrent requests, the dispatch
 * precedence (method-steps.ts), answers, cancellation and close. Lines from a transport enter
 * through handleText; in-process callers (the HTTP API, the CLI) call with values through call.
 */
export class Dispatcher {
  private readonly memo = new WeakMap<object, string>();
  private readonly deps: StepDeps;

  constructor(readonly opts: DispatcherOptions) {
    this.deps = {
      handlers: opts.handlers,
      policy: opts.policy,
      server: opts.server,
      log: opts.log,
      memo: this.memo,
      cancel: (conn, id) => this.cancel(conn, id),
    };
  }

  /**
   * Handles one decoded input line. Returns a promise only when the caller must wait before the next
   * line (an inline method still running, or output backpressure); admitted concurrent methods keep
   * running and answer later. Staying synchronous otherwise keeps pipelined throughput high.
   */
  handleText(conn: Connection, text: string): void | Promise<void> {
    if (isBlank(text)) return;
    const reply = this.frames;
    const parsed = parseJson(text);
    if (!parsed.ok)
      return reply.failure(
        conn,
        null,
        errorObject("parse_error", { details: { column: parsed.column, line: parsed.line } }),
      );
    const req = decodeEnvelope(parsed.value, parsed.duplicateTopLevelKey);
    if (!req) return reply.failure(conn, null, errorObject("invalid_request"));
    return this.handle(conn, req, reply);
  }

  /**
   * One request given as values, answered as a value: the same admission, checks and handlers as
   * a line, without encoding it to text and parsing it back. `params` may hold the JsonFloat
   * values of parseJson, which keep a number's lexical class as in a line.
   */
  call(conn: Connection, id: RpcId, method: string, params?: object, timeoutMs?: number): Promise<CallOutcome> {
    const answered = Promise.withResolvers<CallOutcome>();
    const req: RpcRequest = {
      jsonrpc: "2.0",
      id,
      method,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(params === undefined ? {} : { params: params as RpcRequest["params"] }),
    };
    const reply: Reply = {
      success: (_conn, rid, result) => {
        const json = this.jsonOf(result);
        const tooLarge = oversizedResult(rid, json);
        answered.resolve(tooLarge ? { ok: false, error: tooLarge } : { ok: true, result, json });
      },
      failure: (_conn, _rid, error) => answered.resolve({ ok: false, error }),
    };
    void this.handle(conn, req, reply);
    return answered.promise;
  }

  /** Cancels one running concurrent request of this connection (docs/protocol/envelope-and-errors.md). */
  cancel(conn: Connection, id: RpcId): "requested" | "alreadyRequested" | "notFound" {
    const entry = conn.inFlight.get(id);
    if (!entry) return "notFound";
    if (entry.reason) return "alreadyRequested";
    abort(entry, "requested");
    return "requested";
  }

  /**
   * Resolves once every request of the connection still running (concurrent or inline) has
   * answered, each within its own deadline: nothing is cancelled. For a client that ended its
   * input (docs/protocol/transport-and-framing.md#shutdown-and-disconnects).
   */
  async settled(conn: Connection): Promise<void> {
    while (conn.inFlight.size > 0 || conn.inline.size > 0)
      await Promise.allSettled([...[...conn.inFlight.values()].map((e) => e.done), ...conn.inline]);
  }

  /**
   * Ends a connection: no new admissions, in-flight requests cancelled with reason `shutdown`, and
   * they and any inline request still running awaited (bounded), then core cleanup. Their
   * responses are still sent.
   */
  async close(conn: Connection, reason: CloseReason): Promise<void> {
    conn.closing = true;
    const running = [...conn.inFlight.values()];
    for (const entry of running) abort(entry, "shutdown");
    conn.closeController.abort("shutdown");
    await withinGrace(Promise.allSettled([...running.map((e) => e.done), ...conn.inline]), SHUTDOWN_GRACE_MS);
    await this.opts.policy.close(conn, reason);
    conn.grant?.closed();
  }

  /** A granted connection's check first (it may wait for the grant's confirmation), then the request. */
  private handle(conn: Connection, req: RpcRequest, reply: Reply): void | Promise<void> {
    if (conn.closing)
      return reply.failure(
        conn,
        req.id,
        errorObject("request_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } }),
      );
    const grant = conn.grant;
    if (!grant) return this.handleAdmitted(conn, req, reply);
    const verdict = grant.check(conn, req.method, req.params);
    if (verdict instanceof Promise)
      return verdict.then((refused) =>
        refused ? reply.failure(conn, req.id, refused.error) : this.handleAdmitted(conn, req, reply),
      );
    return verdict ? reply.failure(conn, req.id, verdict.error) : this.handleAdmitted(conn, req, reply);
  }

  /** Dispatch steps 1–2 (id reservation, admission), then the rest (method-steps.ts). */
  private handleAdmitted(conn: Connection, req: RpcRequest, reply: Reply): void | Promise<void> {
    if (conn.closing)
      return reply.failure(
        conn,
        req.id,
        errorObject("request_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } }),
      );
    const key = req.id;
    if (conn.inFlight.has(key))
      return reply.failure(conn, req.id, errorObject("request_id_in_use", { details: { requestId: req.id } }));
    let route: Route | null = null;
    let admitted: InFlight | null = null;
    if (CONCURRENT.has(req.method) && conn.phase === "ready") {
      this.opts.policy.lazySelect(conn);
      if (conn.inFlight.size >= MAX_IN_FLIGHT)
        return reply.failure(conn, req.id, errorObject("too_many_requests", { details: { limit: MAX_IN_FLIGHT } }));
      route = this.opts.policy.route(conn);
      // A request without a route cannot do device work: it runs inline and answers its pending error.
      if ("deviceId" in route) admitted = this.admit(conn, req);
    }
    if (!admitted) return this.run(conn, req, route, null, reply);
    const flight = admitted;
    // Started now, not in a later microtask: its synchronous part (admission bookkeeping such as
    // "observation in flight") must happen before the next line is processed, so that e.g. a
    // session.end pipelined right behind it sees it and answers session_busy.
    let run: void | Promise<void>;
    try {
      run = this.run(conn, req, route, flight, reply);
    } catch (err) {
      run = Promise.reject(err);
    }
    flight.done = Promise.resolve(run).finally(() => {
      if (flight.timer) clearTimeout(flight.timer);
      conn.inFlight.delete(key);
    });
  }

  private admit(conn: Connection, req: RpcRequest): InFlight {
    const entry: InFlight = {
      id: req.id,
      method: req.method,
      controller: new AbortController(),
      reason: null,
      timeoutMs: req.timeoutMs ?? null,
      deadline: req.timeoutMs !== undefined ? Date.now() + req.timeoutMs : null,
      timer: null,
      done: Promise.resolve(),
    };
    // setTimeout's ceiling is 2^31-1 ms; a longer budget can never fire in practice.
    if (req.timeoutMs !== undefined && req.timeoutMs < 2 ** 31)
      entry.timer = setTimeout(() => abort(entry, "timeout"), req.timeoutMs);
    conn.inFlight.set(req.id, entry);
    return entry;
  }

  private run(
    conn: Connection,
    req: RpcRequest,
    route: Route | null,
    flight: InFlight | null,
    reply: Reply,
  ): void | Promise<void> {
    let out: unknown;
    try {
      out = runSteps(this.deps, conn, req, route, flight);
    } catch (err) {
      return reply.failure(conn, req.id, this.toRpcError(err, flight, req.method).error);
    }
    if (!(out instanceof Promise)) return reply.success(conn, req.id, out);
    if (!flight) this.trackInline(conn, out);
    return out.then(
      (result) => reply.success(conn, req.id, result),
      (err) => reply.failure(conn, req.id, this.toRpcError(err, flight, req.method).error),
    );
  }

  /**
   * An inline handler may still change connection state after its client is gone (session.start
   * takes the lease, then waits for its durable commit): close must wait for it, or the Session
   * it starts is never ended and the device stays leased.
   */
  private trackInline(conn: Connection, run: Promise<unknown>): void {
    const settled = run.then(
      () => {},
      () => {},
    );
    conn.inline.add(settled);
    void settled.then(() => conn.inline.delete(settled));
  }

  private toRpcError(err: unknown, flight: InFlight | null, method: string): RpcError {
    // A driver that stopped because this request was cancelled or timed out reports that as the
    // request's own error (−32007/−32008), not as driver_cancelled/driver_timed_out.
    if (
      flight?.reason &&
      (!(err instanceof RpcError) || err.code === "driver_cancelled" || err.code === "driver_timed_out")
    )
      return abortError(flight);
    if (err instanceof RpcError) {
      if (err.logDetail !== undefined)
        this.opts.log.warn(
          { method, code: err.code, detail: err.logDetail },
          "request failed: the device or its driver answered something unusable",
        );
      return err;
    }
    this.opts.log.error({ err }, "handler failed with an unexpected error");
    return new RpcError("internal_error");
  }

  /** Answers as frames on the connection (every transport). */
  private readonly frames: Reply = {
    success: (conn, id, result) => {
      const json = this.memoOf(result);
      return conn.send(json === undefined ? successFrame(id, result) : successFrameFromJson(id, json));
    },
    failure: (conn, id, error) => conn.send(checkedFailureFrame(id, error)),
  };

  /** The JSON text a result was already encoded to, when it was. */
  private memoOf(result: unknown): string | undefined {
    return typeof result === "object" && result !== null ? this.memo.get(result) : undefined;
  }

  private jsonOf(result: unknown): string {
    return this.memoOf(result) ?? JSON.stringify(result);
  }
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}
