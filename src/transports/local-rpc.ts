import type { RpcErrorObject } from "../protocol/errors.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import { Connection } from "../rpc/connection.ts";
import type { CallOutcome, CloseReason, Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../rpc/rpc-error.ts";

/** An answer that is an error, thrown so a sequence of calls stops at the first failure. */
export class RpcFailure extends Error {
  /** The error object as a socket client would read it. */
  readonly json: string;
  constructor(
    readonly method: string,
    readonly error: RpcErrorObject,
  ) {
    super(error.message);
    this.json = JSON.stringify(error);
  }
}

export type CallSuccess = Extract<CallOutcome, { ok: true }>;

/**
 * A control connection inside the daemon for in-process callers (the HTTP API): the same
 * dispatcher, handshake, selection, Session and leases as a socket client, called with values.
 * Each success carries the result's JSON as a socket client would read it, so an HTTP body is
 * byte for byte the JSON-RPC result.
 */
export class LocalRpc {
  readonly conn: Connection;
  private nextId = 1;
  private closed: Promise<void> | null = null;

  constructor(
    private readonly dispatcher: Dispatcher,
    services: ServerServices,
    transport: TransportInfo,
    log: Logger,
  ) {
    // Every answer comes back as a value; a frame here would be a bug in the dispatcher.
    this.conn = new Connection(transport, services, (frame) => log.error({ frame: frame.slice(0, 200) }, "in-process connection got a frame"));
  }

  /**
   * One call. With a signal, aborting it cancels the call in the daemon as a socket client's
   * request.cancel would (the connection must have negotiated request.control.v1).
   */
  call(method: string, params?: object, signal?: AbortSignal): Promise<CallOutcome> {
    const id = this.nextId++;
    if (!signal) return this.dispatcher.call(this.conn, id, method, params);
    const cancel = () => void this.dispatcher.call(this.conn, this.nextId++, "request.cancel", { requestId: id });
    if (signal.aborted) queueMicrotask(cancel);
    else signal.addEventListener("abort", cancel, { once: true });
    return this.dispatcher.call(this.conn, id, method, params).finally(() => signal.removeEventListener("abort", cancel));
  }

  /** Like `call`, but an error answer throws RpcFailure. */
  async must(method: string, params?: object, signal?: AbortSignal): Promise<CallSuccess> {
    const out = await this.call(method, params, signal);
    if (!out.ok) throw new RpcFailure(method, out.error);
    return out;
  }

  /** Ends the connection as a socket close would: in-flight work cancelled, an active Session ended. */
  close(reason: CloseReason = "RPC connection closed"): Promise<void> {
    this.closed ??= this.dispatcher.close(this.conn, reason);
    return this.closed;
  }
}
