/**
 * The one DeviceRail client: typed calls over a channel. Two channels carry it: the daemon's
 * socket (socket.ts, the CLI) and an in-process connection the composition root opens on the
 * dispatcher (in-process.ts, the HTTP API, MCP and the live report), so every front end speaks the
 * public protocol the same way and none of them sees the dispatcher.
 */
import type { RpcErrorObject } from "../protocol/errors.ts";
import type { InputOf, MethodName, OutputOf } from "../protocol/methods.ts";
import { RemoteError } from "./remote-error.ts";

/** One answer as a value: the result (with its JSON as a socket client reads it) or the error object. */
export type Answer<T = unknown> = { ok: true; result: T; json: string } | { ok: false; error: RpcErrorObject };

/** What carries requests: one request in, its answer out; a lost connection rejects (ConnectionLost). */
/** The answer a decoded JSON-RPC response carries; its JSON is made only when read. */
export function answerOf(msg: { result?: unknown; error?: RpcErrorObject }): Answer {
  if (msg.error) return { ok: false, error: msg.error };
  return {
    ok: true,
    result: msg.result,
    get json() {
      return JSON.stringify(msg.result);
    },
  };
}

export interface Channel {
  send(id: number, method: string, params: object | undefined, timeoutMs: number | undefined): Promise<Answer>;
  /** Ends the connection after what was sent (the daemon then ends a Session left open). */
  close(): Promise<void>;
}

export interface CallOptions {
  /** Aborting it cancels the call in the daemon (request.cancel; the connection must have negotiated request.control.v1). */
  signal?: AbortSignal;
  /** The envelope deadline (docs/protocol/transport-and-framing.md), for the concurrent methods. */
  timeoutMs?: number;
}

/** A method's params and options; params may be left out where the method takes none (or only optional ones). */
export type CallArgs<M extends MethodName> =
  Record<string, never> extends InputOf<M>
    ? [params?: InputOf<M>, opts?: CallOptions]
    : [params: InputOf<M>, opts?: CallOptions];

/** A method's params alone, optional as in CallArgs. */
export type ParamsArgs<M extends MethodName> =
  Record<string, never> extends InputOf<M> ? [params?: InputOf<M>] : [params: InputOf<M>];

export interface Client {
  /** One call; an error answer throws RemoteError. */
  call<M extends MethodName>(method: M, ...args: CallArgs<M>): Promise<OutputOf<M>>;
  /** One call whose error answer is a value, and whose result keeps its JSON (bodies byte for byte the result). */
  answer<M extends MethodName>(method: M, ...args: CallArgs<M>): Promise<Answer<OutputOf<M>>>;
  close(): Promise<void>;
}

/** The client over one channel. request.cancel on abort is written here, once, for every wiring. */
export function clientOver(channel: Channel): Client {
  let nextId = 1;
  const answer = async (method: string, params?: object, opts: CallOptions = {}): Promise<Answer> => {
    const id = nextId++;
    const sent = channel.send(id, method, params, opts.timeoutMs);
    const { signal } = opts;
    if (!signal) return sent;
    const cancel = () => void channel.send(nextId++, "request.cancel", { requestId: id }, undefined).catch(() => {});
    if (signal.aborted) cancel();
    else signal.addEventListener("abort", cancel, { once: true });
    try {
      return await sent;
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  };
  const call = async (method: string, params?: object, opts?: CallOptions): Promise<unknown> => {
    const out = await answer(method, params, opts);
    if (!out.ok) throw new RemoteError(method, out.error);
    return out.result;
  };
  return { call, answer, close: () => channel.close() } as Client;
}
