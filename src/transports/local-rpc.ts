import type { RpcErrorObject } from "../protocol/errors.ts";
import type { TransportInfo } from "../protocol/types/handshake.ts";
import { Connection } from "../rpc/connection.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../rpc/rpc-error.ts";

/** One answer: the encoded `result` (or `error`) exactly as the dispatcher wrote it. */
export type RpcOutcome = { ok: true; json: string } | { ok: false; json: string; error: RpcErrorObject };

/** An answer that is an error, thrown so a sequence of calls stops at the first failure. */
export class RpcFailure extends Error {
  constructor(
    readonly method: string,
    readonly json: string,
    readonly error: RpcErrorObject,
  ) {
    super(error.message);
  }
}

const FRAME_HEAD = /^\{"jsonrpc":"2\.0","id":(\d+),"(result|error)":/;

/**
 * A control connection inside the daemon for the HTTP API: the same dispatcher, handshake,
 * selection, Session and leases as a socket client. Answers are kept as the dispatcher's own
 * encoding (sliced out of the frame), so an HTTP body is byte for byte the JSON-RPC result,
 * floats written as `10.0` included.
 */
export class LocalRpc {
  readonly conn: Connection;
  private nextId = 1;
  private readonly waiting = new Map<number, { method: string; resolve(o: RpcOutcome): void }>();
  private closed: Promise<void> | null = null;

  constructor(
    private readonly dispatcher: Dispatcher,
    services: ServerServices,
    transport: TransportInfo,
    private readonly log: Logger,
  ) {
    this.conn = new Connection(transport, services, (frame) => this.onFrame(frame));
  }

  /** Sends one request; `paramsJson` is spliced in verbatim (it must be one valid JSON value). */
  call(method: string, paramsJson?: string): Promise<RpcOutcome> {
    const id = this.nextId++;
    const text = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${paramsJson === undefined ? "" : `,"params":${paramsJson}`}}`;
    const answer = new Promise<RpcOutcome>((resolve) => this.waiting.set(id, { method, resolve }));
    try {
      void Promise.resolve(this.dispatcher.handleText(this.conn, text)).catch((err: unknown) => this.log.error({ err, method }, "in-process request failed"));
    } catch (err) {
      this.log.error({ err, method }, "in-process request failed");
    }
    return answer;
  }

  /** Like `call`, but an error answer throws RpcFailure; returns the encoded result. */
  async must(method: string, paramsJson?: string): Promise<string> {
    const out = await this.call(method, paramsJson);
    if (!out.ok) throw new RpcFailure(method, out.json, out.error);
    return out.json;
  }

  /** Ends the connection as a socket close would: in-flight work cancelled, an active Session ended. */
  close(reason: "daemon shutdown" | "RPC connection closed" = "RPC connection closed"): Promise<void> {
    this.closed ??= this.dispatcher.close(this.conn, reason);
    return this.closed;
  }

  private onFrame(frame: string): void {
    const m = FRAME_HEAD.exec(frame);
    const id = m ? Number(m[1]) : null;
    const w = id === null ? undefined : this.waiting.get(id);
    if (!m || !w || id === null) {
      this.log.error({ frame: frame.slice(0, 200) }, "in-process answer without a matching request");
      return;
    }
    this.waiting.delete(id);
    const json = frame.slice(m[0].length, -1);
    if (m[2] === "result") w.resolve({ ok: true, json });
    else w.resolve({ ok: false, json, error: JSON.parse(json) as RpcErrorObject });
  }
}
