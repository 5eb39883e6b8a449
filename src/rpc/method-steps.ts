/**
 * The request steps the dispatcher runs for every method, in the documented order: one sequence,
 * kept in one file.
 */
import * as v from "valibot";
import { type ErrorName } from "../protocol/errors.ts";
import { type IssueDetail, issueDetails } from "../protocol/issue-details.ts";
import type { RpcId } from "../protocol/ids.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import {
  CONCURRENT_METHODS,
  METHODS,
  type MethodName,
  type MethodSpec,
  type ParamsOf,
  type ResultOf,
  isMethodName,
} from "../protocol/methods.ts";
import type { PeerInfo } from "../protocol/types/handshake.ts";
import type { AbortReason, Connection, InFlight } from "./connection.ts";
import { negotiate } from "./handshake.ts";
import {
  type Logger,
  RpcError,
  methodUnavailable,
  notPermittedOnTransport,
  sessionRequired,
} from "../protocol/rpc-error.ts";

/** Per-request context handed to every handler: the signal, the deadline, the route and the Session. */
export interface HandlerContext {
  readonly conn: Connection;
  readonly requestId: RpcId;
  readonly signal: AbortSignal;
  /** Absolute epoch ms after which the request has timed out; null without `timeoutMs`. */
  readonly deadline: number | null;
  readonly log: Logger;
  /** The device route captured at admission (or resolved now); throws the pending routing error. */
  route(): string;
  /**
   * The connection's active Session. For methods whose table entry says `sessionCheck: "handler"`
   * this is where the table's requirement is checked (session_required), at the point of the
   * method's processing order the protocol names.
   */
  requireSession(): string;
  /**
   * For methods whose table entry says `privileged: "protectedAction"`: the handler calls this once
   * it knows the call is privileged; it throws method_not_permitted_on_transport on a connection
   * whose transport does not run privileged calls.
   */
  requirePrivileged(): void;
  /** Cancels a running concurrent request of the same connection. */
  cancel(id: RpcId): "requested" | "alreadyRequested" | "notFound";
  /** The error this request answers when its signal has fired (cancel, deadline, shutdown), else null. */
  abortError(): RpcError | null;
}

export type ControlMethod = Exclude<MethodName, "system.hello" | "events.subscribe">;
export type Handler<M extends MethodName> = (
  params: ParamsOf<M>,
  ctx: HandlerContext,
) => ResultOf<M> | Promise<ResultOf<M>>;
export type Handlers = { [M in ControlMethod]: Handler<M> };

export type Route = { deviceId: string } | { error: RpcError };
export type CloseReason = "daemon shutdown" | "RPC connection closed";

/**
 * What the dispatcher asks core about a connection. Core owns the state behind it (selection,
 * Session, leases); the dispatcher only applies the method table's requirements to the answers.
 */
export interface ConnectionPolicy {
  /** Selects the sole registered device for a connection that selected none (docs/protocol/envelope-and-errors.md, dispatch steps 2a and 5). */
  lazySelect(conn: Connection): void;
  /** The device this connection's requests go to, or the routing error they answer. */
  route(conn: Connection): Route;
  /** The connection's active Session id, or null. */
  activeSession(conn: Connection): string | null;
  /** Whether this connection started the Session (what `privileged: "otherSession"` asks). */
  startedSession(conn: Connection, sessionId: string): boolean;
  /** Core cleanup when a connection ends: its Session ended, its lease released. */
  close(conn: Connection, reason: CloseReason): Promise<void>;
}

/** What the steps need from the dispatcher that runs them. */
export interface StepDeps {
  readonly handlers: Handlers;
  readonly policy: ConnectionPolicy;
  readonly server: PeerInfo;
  readonly log: Logger;
  /** Frozen results already validated, with their JSON (see checkResult). */
  readonly memo: WeakMap<object, string>;
  cancel(conn: Connection, id: RpcId): "requested" | "alreadyRequested" | "notFound";
}

const EMPTY_PARAMS = Object.freeze({});
const NO_PARAM_METHODS = new Set(
  Object.entries(METHODS)
    .filter(([, s]) => s.params === null)
    .map(([n]) => n),
);

/**
 * Steps 3–13 of the dispatch precedence (docs/protocol/envelope-and-errors.md): hello, the
 * handshake, gates, timeouts, params, the table's Session requirement, then the handler. Returns
 * the result, or a promise of it; throws (or rejects with) the error to answer.
 */
export function runSteps(
  deps: StepDeps,
  conn: Connection,
  req: RpcRequest,
  route: Route | null,
  flight: InFlight | null,
): unknown {
  const { method } = req;
  if (method === "system.hello") return hello(deps, conn, req);
  if (conn.phase !== "ready") throw new RpcError("handshake_required", { details: { requiredMethod: "system.hello" } });
  if (method === "system.describe") deps.policy.lazySelect(conn);
  const spec: MethodSpec | undefined =
    isMethodName(method) && METHODS[method].plane !== "webSocket" ? METHODS[method] : undefined;
  if (!spec) throw new RpcError("method_not_found", { arg: method, details: { method } });
  if (spec.feature && !conn.has(spec.feature)) throw methodUnavailable(method, spec.feature);
  if (spec.privileged === "always" && !conn.privileged)
    throw notPermittedOnTransport(method, conn.transport.kind, "always");
  if (req.timeoutMs !== undefined) {
    if (!conn.has("request.control.v1"))
      throw new RpcError("feature_not_negotiated", {
        arg: "timeoutMs",
        details: { field: "timeoutMs", requiredFeature: "request.control.v1" },
      });
    if (!spec.concurrent)
      throw new RpcError("request_timeout_not_supported", {
        arg: method,
        details: { field: "timeoutMs", method, supportedMethods: [...CONCURRENT_METHODS] },
      });
  }
  if (flight?.reason) throw abortError(flight);
  if (NO_PARAM_METHODS.has(method) && !isEmptyParams(req.params))
    throw new RpcError("params_not_accepted", { arg: method, details: { method } });
  const checkSession = () => sessionOf(deps.policy, conn, spec);
  if (spec.sessionCheck === "beforeParams") checkSession();
  const params = spec.params ? decodeParams(method, spec.params, req.params) : EMPTY_PARAMS;
  if (spec.privileged === "otherSession" && !conn.privileged)
    checkOwnSession(deps.policy, conn, method, params as { sessionId?: string });
  if ((spec.sessionCheck ?? "afterParams") === "afterParams") checkSession();
  const handler = deps.handlers[method as ControlMethod] as Handler<ControlMethod>;
  const ctx: HandlerContext = {
    conn,
    requestId: req.id,
    // Inline requests cannot be cancelled by request.cancel, but they stop when their connection closes.
    signal: flight?.controller.signal ?? conn.closeController.signal,
    deadline: flight?.deadline ?? null,
    log: deps.log,
    route: () => {
      if (!spec.device) throw new Error(`${method} is not a device method and has no route`);
      const r = route ?? deps.policy.route(conn);
      if ("error" in r) throw r.error;
      return r.deviceId;
    },
    requireSession: () => {
      const id = deps.policy.activeSession(conn);
      if (!id) throw sessionRequired();
      return id;
    },
    requirePrivileged: () => {
      if (!conn.privileged) throw notPermittedOnTransport(method, conn.transport.kind, spec.privileged ?? "always");
    },
    cancel: (id) => deps.cancel(conn, id),
    abortError: () => (flight?.reason ? abortError(flight) : null),
  };
  const result = handler(params as never, ctx);
  if (result instanceof Promise) return result.then((r) => checkResult(deps, method as MethodName, r, flight));
  return checkResult(deps, method as MethodName, result, flight);
}

/** The table's Session requirement for this connection (session_required, or the method's conflict error). */
function sessionOf(policy: ConnectionPolicy, conn: Connection, spec: MethodSpec): void {
  if (spec.session === "any") return;
  const active = policy.activeSession(conn);
  if (spec.session === "required" && !active) throw sessionRequired();
  if (spec.session === "forbidden" && active)
    throw new RpcError(spec.sessionConflict ?? "session_already_active", { details: { sessionId: active } });
}

/**
 * A read of a Session this connection did not start, on a transport that does not run privileged
 * calls. Without `sessionId` the method reads the connection's own active Session. An id that
 * names no Session is refused the same way, so such a connection cannot tell which ids exist.
 */
function checkOwnSession(
  policy: ConnectionPolicy,
  conn: Connection,
  method: string,
  params: { sessionId?: string },
): void {
  if (params.sessionId === undefined || policy.startedSession(conn, params.sessionId)) return;
  throw notPermittedOnTransport(method, conn.transport.kind, "otherSession");
}

/** A result that does not match its schema is a bug: logged, and answered as internal_error. */
function checkResult(deps: StepDeps, method: MethodName, result: unknown, flight: InFlight | null): unknown {
  if (flight?.reason && !(METHODS[method] as MethodSpec).keepsResultWhenAborted) throw abortError(flight);
  if (typeof result === "object" && result !== null && deps.memo.has(result)) return result;
  const checked = v.safeParse(METHODS[method].result, result);
  if (!checked.success) {
    deps.log.error({ method, issues: v.flatten(checked.issues) }, "handler result does not match its schema");
    throw new RpcError("internal_error");
  }
  // A frozen result cannot change after this check, so its validation and encoding are reused
  // while a handler keeps returning the same object (read-mostly results that clients poll).
  if (typeof result === "object" && result !== null && Object.isFrozen(result))
    deps.memo.set(result, JSON.stringify(result));
  return result;
}

function hello(deps: StepDeps, conn: Connection, req: RpcRequest): unknown {
  if (req.timeoutMs !== undefined)
    throw new RpcError("feature_not_negotiated", {
      arg: "timeoutMs",
      details: { field: "timeoutMs", requiredFeature: "request.control.v1" },
    });
  if (conn.phase === "ready") throw new RpcError("handshake_already_completed");
  const spec = METHODS["system.hello"];
  const n = negotiate(
    paramsObject(spec, req.params),
    conn.services,
    undefined,
    Array.isArray(req.params) ? fieldNames(spec) : undefined,
  );
  const result = {
    connectionId: crypto.randomUUID(),
    protocol: { selected: n.selected },
    server: deps.server,
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

/** Freezes a result and everything in it, so it may be memoized (see checkResult). */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function abort(entry: InFlight, reason: AbortReason): void {
  if (entry.reason) return;
  entry.reason = reason;
  if (entry.timer) clearTimeout(entry.timer);
  entry.controller.abort(reason);
}

export function abortError(flight: InFlight): RpcError {
  switch (flight.reason) {
    case "timeout":
      return new RpcError("request_timed_out", {
        arg: flight.timeoutMs ?? 0,
        details: { scope: "request", timeoutMs: flight.timeoutMs },
      });
    case "shutdown":
      return new RpcError("request_cancelled", { arg: "Shutdown", details: { reason: "shutdown" } });
    default:
      return new RpcError("request_cancelled", { arg: "Requested", details: { reason: "requested" } });
  }
}

function isEmptyParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (Array.isArray(params)) return params.length === 0;
  return Object.keys(params as object).length === 0;
}

/**
 * Params as an object: absent → `{}`; an array is read positionally in declaration order, as the
 * reference does.
 */
function paramsObject(spec: MethodSpec, params: unknown): unknown {
  if (params === undefined) return spec.paramsRequired ? undefined : {};
  if (!Array.isArray(params)) return params;
  const entries = fieldNames(spec);
  if (params.length > entries.length) return undefined;
  const obj: Record<string, unknown> = {};
  params.forEach((p, i) => {
    obj[entries[i] as string] = p;
  });
  return obj;
}

/** Field names of a params schema in declaration order: how an array of params is read. */
function fieldNames(spec: MethodSpec): string[] {
  return spec.params && "entries" in spec.params ? Object.keys(spec.params.entries as object) : [];
}

/**
 * Decoded params, or invalid_params saying what to fix: pointers are relative to `params` as sent,
 * so positional params are named by index.
 */
function decodeParams(method: string, schema: v.GenericSchema, params: unknown): unknown {
  const spec = METHODS[method as MethodName];
  const input = paramsObject(spec, params);
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  const names = fieldNames(spec);
  const issues: IssueDetail[] =
    Array.isArray(params) && input === undefined
      ? [
          {
            pointer: `/${names.length}`,
            expected: `at most ${names.length} positional params (${names.join(", ")})`,
            received: `${params.length} params`,
          },
        ]
      : issueDetails(schema, input, r.issues, {
          redact: false,
          ...(Array.isArray(params) ? { positional: names } : {}),
        });
  const [first] = issues as [IssueDetail];
  throw new RpcError("invalid_params" satisfies ErrorName, {
    arg: method,
    details: { method, pointer: first.pointer, expected: first.expected, received: first.received, issues },
  });
}
