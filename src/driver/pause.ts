import type { CallContext } from "./driver.ts";
import { DriverError } from "./driver-error.ts";

/**
 * Waits `ms`, the one way a driver or core's device code waits between polls or retries. Rejects
 * with driver_cancelled as soon as the call's signal aborts (at once when it already has), and
 * leaves neither its timer nor its abort listener behind either way.
 */
export function pause(ms: number, ctx: Pick<CallContext, "signal">): Promise<void> {
  const { signal } = ctx;
  if (signal.aborted) return Promise.reject(new DriverError("driver_cancelled"));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new DriverError("driver_cancelled"));
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
