import * as v from "valibot";
import { type ErrorName, errorObject } from "../protocol/errors.ts";
import type { RpcId } from "../protocol/ids.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import { CONCURRENT_METHODS, METHODS, type MethodName, type MethodSpec, type ParamsOf, type ResultOf, isMethodName } from "../protocol/methods.ts";
import type { PeerInfo } from "../protocol/types/handshake.ts";
import { type AbortReason, Connection, type InFlight } from "./connection.ts";
import { checkedFailureFrame, successFrame, successFrameFromJson } from "./encode.ts";
import { withinGrace } from "./grace.ts";
import { negotiate } from "./handshake.ts";
import { decodeEnvelope } from "./envelope.ts";
import { parseJson } from "./json.ts";
import { type Logger, RpcError, methodUnavailable, sessionRequired } from "./rpc-error.ts";

/** Per-request context handed to every handler: the signal, the deadline and the route. */
export interface HandlerContext {
  readonly conn: Connection;
  readonly requestId: RpcId;
  readonly signal: AbortSignal;
  /** Absolute epoch ms after which the request has timed out; null without `timeoutMs`. */
  readonly deadline: number | null;
  readonly log: Logger;
  /** The device route captured at admission (or resolved now); throws the pending routing error. */
  route(): string;
  /** Cancels a running concurrent request of the same connection. */
  cancel(id: RpcId): "requested" | "alreadyRequested" | "notFound";
  /** The error this request answers when its signal has fired (cancel, deadline, shutdown), else null. */
  abortError(): RpcError | null;
}

export type ControlMethod = Exclude<MethodName, "system.hello" | "events.subscribe">;
export type Handler<M extends MethodName> = (params: ParamsOf<M>, ctx: HandlerContext) => ResultOf<M> | Promise<ResultOf<M>>;
export type Handlers = { [M in ControlMethod]: Handler<M> };

/** What the dispatcher needs to know of the device registry to route (04 §0.2). */
export interface DeviceDirectory {
  /** Registered device ids in byte order. */
  deviceIds(): readonly string[];
}

export interface DispatcherOptions {
  handlers: Handlers;
  devices: DeviceDirectory;
  server: PeerInfo;
  log: Logger;
  /** Core cleanup when a connection ends (active Session, leases). */
  onClose?: (conn: Connection, reason: "daemon shutdown" | "RPC connection closed") => Promise<void>;
}

export const MAX_IN_FLIGHT = 256;
const SHUTDOWN_GRACE_MS = 5_000;
const EMPTY_PARAMS = Object.freeze({});
const NO_PARAM_METHODS = new Set(Object.entries(METHODS).filter(([, s]) => s.params === null).map(([n]) => n));
const CONCURRENT = new Set<string>(CONCURRENT_METHODS);

/**
 * Checks that the reference makes before decoding params, so they win over invalid params
 * (04 §4 device.select, §16 session.end).
 */
const PRE_PARAM_CHECKS: Partial<Record<MethodName, (conn: Connection) => void>> = {
  "device.select": (conn) => {
    if (conn.activeSessionId) throw new RpcError("device_lease_active", { details: { sessionId: conn.activeSessionId } });
  },
  "session.end": (conn) => {
    if (!conn.activeSessionId) throw sessionRequired();
  },
};

type Route = { deviceId: string } | { error: RpcError };

export class Dispatcher {
  private readonly memo = new WeakMap<object, string>();
  constructor(readonly opts: DispatcherOptions) {}

  /**
   * Handles one decoded input line. Returns a promise only when the caller must wait before the next
   * line (an inline method still running, or output backpressure); admitted concurrent methods keep
   * running and answer later. Staying synchronous otherwise keeps pipelined throughput high.
   */
  handleText(conn: Connection, text: string): void | Promise<void> {
    if (isBlank(text)) return;
    const parsed = parseJson(text);
    if (!parsed.ok) {
      return this.sendError(conn, null, errorObject("parse_error", { details: { column: parsed.column, line: parsed.line } }));
    }
    const req = decodeEnvelope(parsed.value, parsed.duplicateTopLevelKey);
    if (!req) return this.sendError(conn, null, errorObject("invalid_request"));
    if (conn.closing) return this.sendError(conn, req.id, errorObject("request_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } }));

    const key = req.id;
    if (conn.inFlight.has(key)) {
      return this.sendError(conn, req.id, errorObject("request_id_in_use", { details: { requestId: req.id } }));
    }
    let route: Route | null = null;
    let admitted: InFlight | null = null;
    if (CONCURRENT.has(req.method) && conn.phase === "ready") {
      this.lazySelect(conn);
      if (conn.inFlight.size >= MAX_IN_FLIGHT)
        return this.sendError(conn, req.id, errorObject("too_many_requests", { details: { limit: MAX_IN_FLIGHT } }));
      route = this.resolveRoute(conn);
      // A request without a route cannot do device work: it runs inline and answers its pending error.
      if ("deviceId" in route) admitted = this.admit(conn, req);
    }
    if (!admitted) return this.runRequest(conn, req, route, null);
    const flight = admitted;
    // Started now, not in a later microtask: its synchronous part (admission bookkeeping such as
    // "observation in flight") must happen before the next line is processed, so that e.g. a
    // session.end pipelined right behind it sees it and answers session_busy.
    let run: void | Promise<void>;
    try {
      run = this.runRequest(conn, req, route, flight);
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
    if (req.timeoutMs !== undefined) {
      // setTimeout's ceiling is 2^31-1 ms; a longer budget can never fire in practice.
      if (req.timeoutMs < 2 ** 31) entry.timer = setTimeout(() => abort(entry, "timeout"), req.timeoutMs);
    }
    conn.inFlight.set(req.id, entry);
    return entry;
  }

  private runRequest(conn: Connection, req: RpcRequest, route: Route | null, flight: InFlight | null): void | Promise<void> {
    let out: unknown;
    try {
      out = this.execute(conn, req, route, flight);
    } catch (err) {
      return conn.send(checkedFailureFrame(req.id, this.toRpcError(err, flight).error));
    }
    if (out instanceof Promise) {
      if (!flight) this.trackInline(conn, out);
      return out.then(
        (result) => conn.send(this.encodeSuccess(req.id, result)),
        (err) => conn.send(checkedFailureFrame(req.id, this.toRpcError(err, flight).error)),
      );
    }
    return conn.send(this.encodeSuccess(req.id, out));
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

  private encodeSuccess(id: RpcId, result: unknown): string {
    const json = typeof result === "object" && result !== null ? this.memo.get(result) : undefined;
    return json === undefined ? successFrame(id, result) : successFrameFromJson(id, json);
  }

  private toRpcError(err: unknown, flight: InFlight | null): RpcError {
    // A driver that stopped because this request was cancelled or timed out reports that as the
    // request's own error (−32007/−32008), not as driver_cancelled/driver_timed_out (09 §2).
    if (flight?.reason && (!(err instanceof RpcError) || err.code === "driver_cancelled" || err.code === "driver_timed_out")) return abortError(flight);
    if (err instanceof RpcError) return err;
    this.opts.log.error({ err }, "handler failed with an unexpected error");
    return new RpcError("internal_error");
  }

  /** Steps 3–12 of the dispatch precedence (02 §3); returns the result, or a promise of it. */
  private execute(conn: Connection, req: RpcRequest, route: Route | null, flight: InFlight | null): unknown {
    const { method } = req;
    if (method === "system.hello") return this.hello(conn, req);
    if (conn.phase !== "ready") throw new RpcError("handshake_required", { details: { requiredMethod: "system.hello" } });
    if (method === "system.describe") this.lazySelect(conn);
    const spec: MethodSpec | undefined = isMethodName(method) && METHODS[method].plane !== "webSocket" ? METHODS[method] : undefined;
    if (!spec) throw new RpcError("method_not_found", { arg: method, details: { method } });
    if (spec.feature && !conn.has(spec.feature)) throw methodUnavailable(method, spec.feature);
    if (req.timeoutMs !== undefined) {
      if (!conn.has("request.control.v1"))
        throw new RpcError("feature_not_negotiated", { arg: "timeoutMs", details: { field: "timeoutMs", requiredFeature: "request.control.v1" } });
      if (!spec.concurrent)
        throw new RpcError("request_timeout_not_supported", {
          arg: method,
          details: { field: "timeoutMs", method, supportedMethods: [...CONCURRENT_METHODS] },
        });
    }
    if (flight?.reason) throw abortError(flight);
    if (NO_PARAM_METHODS.has(method) && !isEmptyParams(req.params))
      throw new RpcError("params_not_accepted", { arg: method, details: { method } });
    PRE_PARAM_CHECKS[method as MethodName]?.(conn);
    const params = spec.params ? decodeParams(method, spec.params, req.params) : EMPTY_PARAMS;
    const handler = this.opts.handlers[method as ControlMethod] as Handler<ControlMethod>;
    const ctx: HandlerContext = {
      conn,
      requestId: req.id,
      signal: flight?.controller.signal ?? conn.closeController.signal,
      deadline: flight?.deadline ?? null,
      log: this.opts.log,
      route: () => {
        const r = route ?? this.resolveRoute(conn);
        if ("error" in r) throw r.error;
        return r.deviceId;
      },
      cancel: (id) => this.cancel(conn, id),
      abortError: () => (flight?.reason ? abortError(flight) : null),
    };
    const result = handler(params as never, ctx);
    if (result instanceof Promise) return result.then((r) => this.checkResult(method as MethodName, r, flight));
    return this.checkResult(method as MethodName, result, flight);
  }

  /** A result that does not match its schema is a bug: logged, and answered as internal_error. */
  private checkResult(method: MethodName, result: unknown, flight: InFlight | null): unknown {
    if (flight?.reason && flight.method !== "device.execute") throw abortError(flight);
    if (typeof result === "object" && result !== null && this.memo.has(result)) return result;
    const checked = v.safeParse(METHODS[method].result, result);
    if (!checked.success) {
      this.opts.log.error({ method, issues: v.flatten(checked.issues) }, "handler result does not match its schema");
      throw new RpcError("internal_error");
    }
    // A frozen result cannot change after this check, so its validation and encoding are reused
    // while a handler keeps returning the same object (read-mostly results that clients poll).
    if (typeof result === "object" && result !== null && Object.isFrozen(result)) this.memo.set(result, JSON.stringify(result));
    return result;
  }

  private hello(conn: Connection, req: RpcRequest): unknown {
    if (req.timeoutMs !== undefined)
      throw new RpcError("feature_not_negotiated", { arg: "timeoutMs", details: { field: "timeoutMs", requiredFeature: "request.control.v1" } });
    if (conn.phase === "ready") throw new RpcError("handshake_already_completed");
    const n = negotiate(paramsObject(METHODS["system.hello"], req.params), conn.services);
    const result = {
      connectionId: crypto.randomUUID(),
      protocol: { selected: n.selected },
      server: this.opts.server,
      transport: conn.transport,
      features: { enabled: n.enabled },
    };
    deepFreeze(result);
    conn.phase = "ready";
    conn.hello = result;
    conn.client = n.params.client;
    conn.minor = n.selected.minor;
    conn.features = new Set(n.enabled);
    return result;
  }

  private lazySelect(conn: Connection): void {
    if (conn.selectedDeviceId !== null) return;
    const ids = this.opts.devices.deviceIds();
    if (ids.length === 1) conn.selectedDeviceId = ids[0] ?? null;
  }

  private resolveRoute(conn: Connection): Route {
    const ids = this.opts.devices.deviceIds();
    if (conn.selectedDeviceId !== null) {
      if (ids.includes(conn.selectedDeviceId)) return { deviceId: conn.selectedDeviceId };
      return { error: new RpcError("device_not_found", { arg: conn.selectedDeviceId, details: { deviceId: conn.selectedDeviceId } }) };
    }
    if (ids.length === 0) return { error: new RpcError("no_registered_devices", { details: { reason: "noRegisteredDevices" } }) };
    if (ids.length === 1) return { deviceId: ids[0] as string };
    return {
      error: new RpcError("device_selection_required", {
        details: { availableDeviceIds: [...ids], deviceCount: ids.length, requiredFeature: "device.routing.v1", requiredMethod: "device.select" },
      }),
    };
  }

  /** Cancels one running concurrent request of this connection (04 §13). */
  cancel(conn: Connection, id: RpcId): "requested" | "alreadyRequested" | "notFound" {
    const entry = conn.inFlight.get(id);
    if (!entry) return "notFound";
    if (entry.reason) return "alreadyRequested";
    abort(entry, "requested");
    return "requested";
  }

  /**
   * Ends a connection: no new admissions, in-flight requests cancelled with reason `shutdown`, and
   * they and any inline request still running awaited (bounded), then core cleanup. Their
   * responses are still sent.
   */
  async close(conn: Connection, reason: "daemon shutdown" | "RPC connection closed"): Promise<void> {
    conn.closing = true;
    const running = [...conn.inFlight.values()];
    for (const entry of running) abort(entry, "shutdown");
    conn.closeController.abort("shutdown");
    await withinGrace(Promise.allSettled([...running.map((e) => e.done), ...conn.inline]), SHUTDOWN_GRACE_MS);
    if (this.opts.onClose) await this.opts.onClose(conn, reason);
  }

  private sendError(conn: Connection, id: RpcId | null, error: ReturnType<typeof errorObject>): void | Promise<void> {
    return conn.send(checkedFailureFrame(id, error));
  }
}

/** Freezes a result and everything in it, so it may be memoized (see checkResult). */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function abort(entry: InFlight, reason: AbortReason): void {
  if (entry.reason) return;
  entry.reason = reason;
  if (entry.timer) clearTimeout(entry.timer);
  entry.controller.abort(reason);
}

function abortError(flight: InFlight): RpcError {
  switch (flight.reason) {
    case "timeout":
      return new RpcError("request_timed_out", { arg: flight.timeoutMs ?? 0, details: { scope: "request", timeoutMs: flight.timeoutMs } });
    case "shutdown":
      return new RpcError("request_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } });
    default:
      return new RpcError("request_cancelled", { arg: "Requested", details: { reason: "requested" } });
  }
}


function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

function isEmptyParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (Array.isArray(params)) return params.length === 0;
  return Object.keys(params as object).length === 0;
}

/** Params as an object: absent → `{}`; an array is read positionally in declaration order, as the reference does. */
function paramsObject(spec: MethodSpec, params: unknown): unknown {
  if (params === undefined) return spec.paramsRequired ? undefined : {};
  if (!Array.isArray(params)) return params;
  const entries = spec.params && "entries" in spec.params ? Object.keys(spec.params.entries as object) : [];
  if (params.length > entries.length) return undefined;
  const obj: Record<string, unknown> = {};
  params.forEach((p, i) => {
    obj[entries[i] as string] = p;
  });
  return obj;
}

function decodeParams(method: string, schema: v.GenericSchema, params: unknown): unknown {
  const spec = METHODS[method as MethodName];
  const r = v.safeParse(schema, paramsObject(spec, params));
  if (!r.success) throw new RpcError("invalid_params" satisfies ErrorName, { arg: method, details: { method } });
  return r.output;
}
