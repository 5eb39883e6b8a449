import { unwrapJsonFloats } from "../../protocol/json.ts";
import { type CallContext, whenAborted } from "../../driver/driver.ts";
import { DriverError } from "../../driver/driver-error.ts";
import { errorInfo, type ErrorInfo } from "../../protocol/errors.ts";
import type {
  ActionDefinition,
  ActionOutcome,
  ActionResult,
  DeviceExecuteParams,
} from "../../protocol/types/action.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { Connection } from "../../rpc/connection.ts";
import type { HandlerContext } from "../../rpc/dispatcher.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { Core } from "../core.ts";
import type { StoredEvidence } from "../evidence/evidence-store.ts";
import { type Captured, captureObservation } from "./observe.ts";
import { isSemanticName } from "./semantic/definitions.ts";
import { DEFAULT_WAIT_MS, runSemantic } from "./semantic/semantic-action.ts";
import { visibleTo } from "./visible-actions.ts";

/**
 * device.execute after admission checks (steps 10–16 of docs/protocol/devices-and-actions.md#executing-an-action): actionStarted, the driver call under
 * the earlier of the request and action deadlines, before/after observations, then exactly one
 * actionCompleted — written even when the request was cancelled or timed out.
 */
export async function executeAction(
  core: Core,
  conn: Connection,
  sessionId: string,
  deviceId: string,
  params: DeviceExecuteParams,
  ctx: HandlerContext,
): Promise<ActionResult> {
  const driver = core.devices.driver(deviceId);
  const definitions = await core.devices.actions(deviceId, ctx);
  const advertised = definitions.find((d) => d.name === params.name);
  const protection = advertised ? (advertised.protection ?? "standard") : core.devices.classify(deviceId, params.name);
  const semantic = advertised && isSemanticName(params.name) ? params.name : null;
  const redacted = protection !== "standard";
  await core.log.append(sessionId, {
    requestId: ctx.requestId,
    deviceId,
    payload: {
      type: "actionStarted",
      call: redacted
        ? { id: params.id, name: params.name, arguments: null, argumentsRedacted: true }
        : { id: params.id, name: params.name, arguments: params.arguments ?? null },
    },
  });

  // The action budget starts once actionStarted is recorded; whichever deadline fires first wins.
  const inner = new AbortController();
  // A request cancelled while the action space was read or actionStarted appended has already
  // fired its signal: whenAborted hears that too.
  const unfollow = whenAborted(ctx.signal, () => inner.abort(ctx.signal.reason));
  let actionTimedOut = false;
  const timer =
    params.actionTimeoutMs !== undefined && params.actionTimeoutMs < 2 ** 31
      ? setTimeout(() => {
          actionTimedOut = true;
          inner.abort("actionTimeout");
        }, params.actionTimeoutMs)
      : null;
  const actionDeadline = params.actionTimeoutMs !== undefined ? Date.now() + params.actionTimeoutMs : null;
  const deadlines = [ctx.deadline, actionDeadline].filter((x): x is number => x !== null);
  const callCtx: CallContext = {
    signal: inner.signal,
    deadline: deadlines.length ? Math.min(...deadlines) : null,
    log: ctx.log,
  };
  const stored: StoredEvidence[] = [];
  const startedAtMs = Date.now();
  let outcome: ActionOutcome;
  let failure: RpcError | null = null;
  let result: ActionResult | null = null;
  // From the driver call on, the phone may have acted: a failure to store what followed is no
  // reason to run the action again.
  let mayHaveActed = false;
  try {
    const keep = (c: Captured) => {
      stored.push(...c.stored);
      return c.observation;
    };
    const opts = { protectedAction: redacted, needTree: semantic !== null };
    const beforeCaptured = await captureObservation(core, deviceId, conn, callCtx, opts);
    const before = keep(beforeCaptured);
    const args = unwrapJsonFloats(params.arguments ?? null);
    let done: { output: unknown; after: Observation; execution?: ActionResult["execution"] };
    if (semantic) {
      const waitUntil = params.actionTimeoutMs === undefined ? startedAtMs + DEFAULT_WAIT_MS : null;
      mayHaveActed = true;
      done = await runSemantic(
        { core, conn, deviceId, redacted, ctx: callCtx, waitUntil, keep },
        semantic,
        args,
        beforeCaptured,
      );
    } else {
      mayHaveActed = true;
      const { output } = await driver.execute(deviceId, { name: params.name, arguments: args }, callCtx);
      done = { output, after: keep(await captureObservation(core, deviceId, conn, callCtx, opts)) };
    }
    result = {
      callId: params.id,
      startedAtMs,
      finishedAtMs: Math.max(startedAtMs, Date.now()),
      output: done.output,
      before,
      after: done.after,
      evidence: dedupe(stored).map((s) => s.ref),
      ...(done.execution ? { execution: done.execution } : {}),
    };
    outcome = { outcome: "succeeded", result };
  } catch (err) {
    const aborted = ctx.abortError();
    if (actionTimedOut && !aborted) {
      const n = params.actionTimeoutMs ?? 0;
      failure = new RpcError("action_timed_out", { arg: n, details: { scope: "action", timeoutMs: n } });
      outcome = {
        outcome: "timedOut",
        error: errorInfo("action_timeout", { arg: n, details: { scope: "action", timeoutMs: n } }),
        timeoutMs: n,
      };
    } else if (aborted) {
      failure = aborted;
      outcome = abortedOutcome(aborted);
    } else {
      failure = err instanceof RpcError ? err : new RpcError("driver_internal_error");
      // The driver knows its own names only; which of them this connection may see is core's to say.
      if (err instanceof DriverError && err.driverCode === "unknown_action")
        failure = unknownAction(params.name, conn, definitions);
      if (!(err instanceof RpcError)) ctx.log.error({ err }, "driver failed with an unexpected error");
      if (mayHaveActed && STORAGE_FAILURES.has(failure.code))
        failure = new RpcError("action_outcome_unknown", {
          arg: params.id,
          details: { callId: params.id, reason: storageReason(failure) },
        });
      outcome = { outcome: "failed", error: failure.error.data };
    }
  } finally {
    if (timer) clearTimeout(timer);
    unfollow();
  }
  // Shielded from cancellation: the terminal event is written whatever happened above.
  await core.log.append(sessionId, {
    requestId: ctx.requestId,
    deviceId,
    payload: { type: "actionCompleted", callId: params.id, outcome },
    evidence: dedupe(stored).map((s) => s.row),
  });
  if (failure) throw failure;
  return result as ActionResult;
}

/** Errors of the stores (a full or failing disk), which say nothing of what the device did. */
const STORAGE_FAILURES = new Set([
  "evidence_io_error",
  "evidence_store_error",
  "evidence_store_busy",
  "event_store_error",
]);

function storageReason(err: RpcError): string {
  const errno = (err.error.data.details as { errno?: unknown } | null)?.errno;
  return typeof errno === "string" ? `${err.message} (${errno})` : err.message;
}

/**
 * unknown_action listing the names this connection may call: what device.capabilities shows it,
 * so protected and semantic actions stay unnamed unless their features were negotiated.
 */
function unknownAction(name: string, conn: Connection, definitions: readonly ActionDefinition[]): DriverError {
  const availableActions = visibleTo(conn, definitions).map((d) => d.name);
  return DriverError.withDetails("unknown_action", { action: name, availableActions });
}

function dedupe(stored: StoredEvidence[]): StoredEvidence[] {
  const seen = new Map<string, StoredEvidence>();
  for (const s of stored) if (!seen.has(s.row.sha256)) seen.set(s.row.sha256, s);
  return [...seen.values()];
}

/** The outcome recorded for a request that was cancelled or ran past its request deadline (docs/protocol/sessions-and-events.md#invariants). */
function abortedOutcome(err: RpcError): ActionOutcome {
  const d = err.error.data;
  if (d.code === "request_timed_out") {
    const n = (d.details as { timeoutMs: number }).timeoutMs;
    const error: ErrorInfo = errorInfo("action_timeout", {
      message: d.message,
      details: { scope: "request", timeoutMs: n },
    });
    return { outcome: "timedOut", error, timeoutMs: n };
  }
  const reason = (d.details as { reason: string } | null)?.reason ?? "requested";
  return {
    outcome: "cancelled",
    error: errorInfo("action_cancelled", {
      arg: reason === "shutdown" ? "Shutdown" : "Requested",
      details: { reason },
    }),
  };
}
