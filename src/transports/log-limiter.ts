import type { Logger } from "../protocol/rpc-error.ts";

/** Lines about refused requests a listener writes per interval; the rest are counted and summed up (docs/protocol/limits.md). */
export const REFUSAL_LOG_LINES = 20;
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/**
 * Lines a peer can cause before it has authenticated: at most `lines` per `intervalMs`, then one
 * "suppressed K" line when the interval ends, so a flood of bad requests cannot fill the log.
 */
export class LogLimiter {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly log: Logger,
    private readonly lines = REFUSAL_LOG_LINES,
    private readonly intervalMs = REFUSAL_LOG_INTERVAL_MS,
  ) {}

  warn(obj: object, msg: string, via: Logger = this.log): void {
    this.write("warn", obj, msg, via);
  }

  error(obj: object, msg: string, via: Logger = this.log): void {
    this.write("error", obj, msg, via);
  }

  private write(level: "warn" | "error", obj: object, msg: string, via: Logger): void {
    const now = Date.now();
    if (now - this.windowStart >= this.intervalMs) this.roll(now);
    if (this.written < this.lines) {
      this.written++;
      via[level](obj, msg);
      return;
    }
    this.suppressed++;
    if (!this.timer) {
      this.timer = setTimeout(() => this.roll(Date.now()), this.windowStart + this.intervalMs - now);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  private roll(now: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.suppressed > 0)
      this.log.warn(
        { suppressed: this.suppressed, intervalMs: this.intervalMs },
        `suppressed ${this.suppressed} more log lines about refused requests`,
      );
    this.suppressed = 0;
    this.written = 0;
    this.windowStart = now;
  }
}

const limiters = new WeakMap<Logger, LogLimiter>();

/** The one limiter of a listener, keyed by its logger. */
export function refusalLog(log: Logger): LogLimiter {
  let limiter = limiters.get(log);
  if (!limiter) {
    limiter = new LogLimiter(log);
    limiters.set(log, limiter);
  }
  return limiter;
}
