/**
 * The method sets a client needs without the method table: which methods may run concurrently and
 * which transports run privileged calls. Kept apart from methods.ts (which re-exports them) so that
 * importing them does not build every wire schema (the CLI's start-up, scripts/bench/startup.ts).
 */
import type { MethodName } from "./methods.ts";

export type Privileged = "always" | "otherSession" | "protectedAction";

/**
 * The transports (`TransportInfo.kind`) that run privileged calls: a web page can reach none of
 * them. The JSON-RPC WebSocket refuses them; so does the HTTP API for requests a page sent.
 */
export const PRIVILEGED_TRANSPORTS = ["stdio", "tcp", "unix"] as const;

/** The six methods that may run concurrently, in the order the reference lists them in errors. */
export const CONCURRENT_METHODS = [
  "device.connect",
  "device.disconnect",
  "device.capabilities",
  "device.observe",
  "device.execute",
  "media.stream.capture",
] as const satisfies readonly MethodName[];
