/**
 * The one error a DeviceRail client raises for an error answer, whichever wiring carried it (the
 * daemon's socket or an in-process connection): the JSON-RPC error object as any client reads it
 * (docs/protocol/errors.md), and the method it answered.
 */
import type { RpcErrorObject } from "../protocol/errors.ts";

export type RemoteErrorData = RpcErrorObject["data"];

export class RemoteError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcErrorObject,
  ) {
    super(`${method} failed: JSON-RPC error ${error.code} ${error.data.code}: ${error.message}`);
  }

  /** The JSON-RPC error code (numeric, from the error table). */
  get code(): number {
    return this.error.code;
  }

  /** `data`: the stable `code` name, message, retryable and details. */
  get data(): RemoteErrorData {
    return this.error.data;
  }

  /** The error object's own message (without the method prefix `message` carries). */
  get rpcMessage(): string {
    return this.error.message;
  }

  /** The error object as JSON, as a socket client would read it. */
  get json(): string {
    return JSON.stringify(this.error);
  }
}

/** Whether `e` is an error answer with the given `data.code`. */
export const isRemote = (e: unknown, dataCode?: string): e is RemoteError =>
  e instanceof RemoteError && (dataCode === undefined || e.error.data.code === dataCode);

/** The connection ended before an answer came. */
export class ConnectionLost extends Error {}
