import { type ErrorName, type ErrorOptions, type RpcErrorObject, errorObject } from "./errors.ts";
import type { FeatureName } from "./features.ts";
import { PRIVILEGED_TRANSPORTS, type Privileged } from "./method-sets.ts";

/** The one error type a handler throws for anything a client may branch on; anything else is a bug. */
export class RpcError extends Error {
  readonly error: RpcErrorObject;
  /**
   * What an operator needs to find a fault the client cannot fix (a driver's broken answer); the
   * dispatcher logs it with the method and never sends it.
   */
  logDetail?: string;
  constructor(name: ErrorName, opts: ErrorOptions = {}) {
    const error = errorObject(name, opts);
    super(error.message);
    this.name = "RpcError";
    this.error = error;
  }
  get code(): string {
    return this.error.data.code;
  }
}

export const sessionRequired = () => new RpcError("session_required", { details: { requiredMethod: "session.start" } });

/** A gated method whose feature is off, or whose runtime service is absent (docs/protocol/handshake.md#feature-availability). */
export const methodUnavailable = (method: string, requiredFeature: FeatureName) =>
  new RpcError("method_not_found", { arg: method, details: { method, requiredFeature } });

/**
 * A privileged call on a transport a web page can reach (docs/protocol/transport-and-framing.md#privileged-methods).
 * `method` is the method, or the HTTP route when no method stands behind it (`GET /evidence/{id}`).
 */
export const notPermittedOnTransport = (method: string, transport: string, privileged: Privileged) =>
  new RpcError("method_not_permitted_on_transport", {
    arg: method,
    details: { method, transport, privileged, allowedTransports: [...PRIVILEGED_TRANSPORTS] },
  });

/** Minimal structured logger (pino satisfies it); keeps rpc free of logging libraries. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
