/**
 * "A Session around some work", the one way every surface of this repository leases a device:
 * device.connect and session.start, then the work, then session.end with the outcome.
 *
 * The lease-wait policy, decided once for every surface (the CLI, MCP, the HTTP API): while another
 * Session holds the device (device_in_use, retryable: docs/protocol/errors.md), the start is asked
 * again every LEASE_RETRY_MS until the caller's deadline: the CLI's --timeout, else
 * DEFAULT_LEASE_WAIT_MS. So parallel one-shot calls on one device take turns instead of failing, and
 * a caller that cannot wait (the HTTP API's curl, an MCP agent) hears device_in_use within seconds.
 */
import type { SessionInfo } from "../protocol/types/session.ts";
import type { Client } from "./client.ts";
import { isRemote } from "./remote-error.ts";
import { messageOf } from "../protocol/errors.ts";

/** How often a busy device is asked for again. */
export const LEASE_RETRY_MS = 100;
/** How long a caller without a deadline of its own waits for a busy device. */
export const DEFAULT_LEASE_WAIT_MS = 2_000;

export interface LeasePolicy {
  /** How long to wait for a device another Session holds (default DEFAULT_LEASE_WAIT_MS). */
  waitMs?: number;
  /** Stops the waiting: `cancelled()` is thrown once it fires. */
  signal?: AbortSignal;
  /** The error to throw when `signal` fired while waiting. */
  cancelled?: () => Error;
  /** Runs after device.connect and before session.start: its refusal starts no Session. */
  admit?: () => Promise<void>;
  /** Wraps the start, waiting included (the CLI's spinner). */
  whileStarting?: (start: () => Promise<SessionInfo>) => Promise<SessionInfo>;
}

/** device.connect, `admit`, session.start; device_in_use is asked again as the policy says. */
export async function startSession(client: Client, policy: LeasePolicy = {}): Promise<SessionInfo> {
  const deadline = Date.now() + (policy.waitMs ?? DEFAULT_LEASE_WAIT_MS);
  let admitted = false;
  for (;;) {
    try {
      await client.call("device.connect");
      if (!admitted) await policy.admit?.();
      admitted = true;
      return await client.call("session.start");
    } catch (e) {
      if (!isRemote(e, "device_in_use") || Date.now() + LEASE_RETRY_MS > deadline) throw e;
      if (policy.signal?.aborted) throw policy.cancelled?.() ?? e;
      await Bun.sleep(LEASE_RETRY_MS);
    }
  }
}

export interface SessionOutcome {
  outcome: "failed" | "cancelled";
  reason: string;
}

/** How a failed work's Session ends: cancelled when the call was (request_cancelled), else failed with the error's text. */
const defaultOutcome = (e: unknown): SessionOutcome =>
  isRemote(e, "request_cancelled")
    ? { outcome: "cancelled", reason: "interrupted by the user" }
    : { outcome: "failed", reason: messageOf(e) };

/**
 * Starts a Session (startSession), runs `work` in it and ends it: completed, or as `outcomeOf`
 * says for a failure, so a failed call still leaves a complete, readable Session behind.
 */
export async function withDeviceSession<T>(
  client: Client,
  work: (session: SessionInfo) => Promise<T>,
  policy: LeasePolicy & { outcomeOf?: (e: unknown) => SessionOutcome } = {},
): Promise<T> {
  const start = () => startSession(client, policy);
  const session = await (policy.whileStarting ? policy.whileStarting(start) : start());
  let result: T;
  try {
    result = await work(session);
  } catch (e) {
    await client.call("session.end", (policy.outcomeOf ?? defaultOutcome)(e)).catch(() => {});
    throw e;
  }
  await client.call("session.end", { outcome: "completed" });
  return result;
}
