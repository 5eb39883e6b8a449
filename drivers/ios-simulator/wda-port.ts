import { type CallContext, budgetMs } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { platformError } from "./tool-process.ts";
import { SessionGone, withFreshSession } from "./wda-session.ts";

/** Only a numeric loopback endpoint: a name could resolve elsewhere, a wildcard bind could be another user's runner. */
export const WDA_ENDPOINT = /^http:\/\/(127\.0\.0\.1|\[::1\]):([1-9]\d{0,4})$/;

type Json = Record<string, unknown>;

/**
 * A WebDriverAgent runner the user already started (devicerail never builds or launches one).
 * Creating a session ends any other session on that runner, so an existing one is reused.
 */
export class WdaPort {
  private session: string | null = null;

  constructor(readonly endpoint: string) {}

  private async call(method: "GET" | "POST" | "DELETE", path: string, ctx: CallContext, body?: unknown): Promise<Json> {
    if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
    // At least 1 ms: a zero timeout would never fire before the request.
    const ms = Math.max(1, budgetMs(ctx, 20_000));
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ms)]);
    let res: Response;
    try {
      res = await fetch(`${this.endpoint}${path}`, {
        method,
        signal,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      });
    } catch (err) {
      if (ctx.signal.aborted) throw new DriverError("driver_cancelled");
      if ((err as Error).name === "TimeoutError") throw new DriverError("driver_timed_out");
      throw platformError("ios_wda_unreachable", true, String(err));
    }
    const json = (await res.json().catch(() => null)) as Json | null;
    if (!json) throw platformError("ios_wda_malformed", true, `${method} ${path}: not JSON`);
    if (typeof json.sessionId === "string") this.session = json.sessionId;
    const value = json.value as Json | null;
    if (!res.ok && res.status === 404 && value?.error === "invalid session id")
      throw new SessionGone(`${method} ${path}: ${String(value.message ?? "invalid session id")}`);
    if (!res.ok)
      throw platformError(
        "ios_wda_failed",
        true,
        `${method} ${path}: ${String((value as Json | null)?.message ?? res.status)}`,
      );
    return json;
  }

  /** Ready, and the runner's device has this simulator's name (a name is not unique: caller warns). */
  async matches(name: string, ctx: CallContext): Promise<boolean> {
    try {
      const status = (await this.call("GET", "/status", ctx)).value as Json;
      if (status?.ready !== true) return false;
      const info = (await this.call("GET", "/wda/device/info", ctx)).value as Json;
      return info?.name === name;
    } catch {
      return false;
    }
  }

  private async sessionPath(ctx: CallContext): Promise<string> {
    if (!this.session) await this.call("POST", "/session", ctx, { capabilities: { alwaysMatch: {} } });
    if (!this.session) throw platformError("ios_wda_failed", true, "no session id");
    return `/session/${this.session}`;
  }

  /** POST `route` under the session; an expired session is replaced once (wda-session.ts). */
  private async inSession(route: string, body: unknown, ctx: CallContext): Promise<void> {
    await withFreshSession(
      { current: () => this.session, forget: () => void (this.session = null), path: (c) => this.sessionPath(c) },
      (sessionPath) => this.call("POST", `${sessionPath}${route}`, ctx, body),
      ctx,
    );
  }

  /** The tree in AXe's field names, so one parser serves both backends. */
  async sourceAsAxe(ctx: CallContext): Promise<string> {
    const value = (await this.call("GET", "/source?format=json", ctx)).value as Json;
    const convert = (n: Json): Json => ({
      type: n.type,
      AXLabel: n.label ?? null,
      AXValue: n.value ?? null,
      AXUniqueId: n.rawIdentifier ?? null,
      frame: n.rect,
      AXFrame: n.frame,
      enabled: n.isEnabled === "1" ? true : n.isEnabled === "0" ? false : null,
      children: Array.isArray(n.children) ? (n.children as Json[]).map(convert) : [],
    });
    return JSON.stringify([convert(value)]);
  }

  async tap(x: number, y: number, ctx: CallContext): Promise<void> {
    await this.inSession("/wda/tap", { x, y }, ctx);
  }

  async doubleTap(x: number, y: number, ctx: CallContext): Promise<void> {
    await this.inSession("/wda/doubleTap", { x, y }, ctx);
  }

  async touchAndHold(x: number, y: number, seconds: number, ctx: CallContext): Promise<void> {
    await this.inSession("/wda/touchAndHold", { x, y, duration: seconds }, ctx);
  }

  async drag(
    from: { x: number; y: number },
    to: { x: number; y: number },
    seconds: number,
    ctx: CallContext,
  ): Promise<void> {
    await this.inSession(
      "/wda/dragfromtoforduration",
      { fromX: from.x, fromY: from.y, toX: to.x, toY: to.y, duration: seconds },
      ctx,
    );
  }

  /** Any Unicode text, in the request body (never an argv). */
  async keys(text: string, ctx: CallContext): Promise<void> {
    await this.inSession("/wda/keys", { value: [...text] }, ctx);
  }

  async home(ctx: CallContext): Promise<void> {
    await this.call("POST", "/wda/homescreen", ctx);
  }
}
