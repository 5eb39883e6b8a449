/**
 * The HTTP API's route table with each route's short handler: one table, so every route and its
 * status rules are read in one place.
 */
import type { Client } from "../../client/client.ts";
import { withDeviceSession } from "../../client/device-session.ts";
import { hello } from "../../client/hello.ts";
import type { Connect, EvidenceSource, LocalClient } from "../../client/in-process.ts";
import { RemoteError } from "../../client/remote-error.ts";
import { errorObject, messageOf } from "../../protocol/errors.ts";
import type { InputOf, MethodName } from "../../protocol/methods.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import { type SessionInfo, infoOf } from "../../protocol/types/session.ts";
import { MAX_FRAME_BYTES } from "../../protocol/limits.ts";
import { parseJson } from "../../protocol/json.ts";
import { type Logger, RpcError, notPermittedOnTransport } from "../../protocol/rpc-error.ts";
import { NO_STORE, errorResponse, httpStatusOf, jsonResponse, sentByPage, textStream } from "../../protocol/http.ts";
import { EXPORT_PAGE_LIMIT, eventPages, exportPages, listPage } from "../../client/event-pages.ts";

export interface HttpApiOptions {
  /** Opens an in-process connection (the composition root's). */
  connect: Connect;
  log: Logger;
  evidence: EvidenceSource;
  serverVersion: string;
}

/** The response header naming the Session a device request was recorded in. */
export const SESSION_HEADER = "DeviceRail-Session";

const SHA256 = /^[0-9a-f]{64}$/;
/** Responses name Evidence by its AssetRef id, `sha256:<hex>`; the bare digest is accepted too. */
const EVIDENCE_ID_PREFIX = "sha256:";

const failure = (f: RemoteError, headers?: Record<string, string>) =>
  errorResponse(httpStatusOf(f.error.data.code), f.json, headers);

const fail = (name: Parameters<typeof errorObject>[0], opts: Parameters<typeof errorObject>[1] = {}): never => {
  throw new RemoteError("http", errorObject(name, opts));
};

const INTEGER_QUERY = new Set(["afterSequence", "limit"]);

/**
 * The named query parameters as the method's params; an absent or empty one is left out. Counters
 * must be plain decimal integers (no sign, no leading zero), else invalid_params; other values go
 * to the method as text, whose schema checks them like any client's.
 */
function queryParams(url: URL, method: string, keys: readonly string[]): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const key of keys) {
    const value = url.searchParams.get(key);
    if (value === null || value === "") continue;
    if (!INTEGER_QUERY.has(key)) out[key] = value;
    else if (/^(0|[1-9]\d{0,15})$/.test(value)) out[key] = Number(value);
    else fail("invalid_params", { arg: method, details: { method, parameter: key } });
  }
  return out;
}

/**
 * An action request's body as the call's arguments: empty means `{}`; anything but a JSON object is
 * refused here, before a device is touched or a Session started. The parsed body keeps each
 * number's lexical class (JsonFloat for `1.0`), as a JSON-RPC line would.
 */
function actionArguments(body: string): object {
  const parsed = parseJson(body.trim() === "" ? "{}" : body);
  if (!parsed.ok)
    return fail("parse_error", {
      message: "request body is not valid JSON",
      details: { column: parsed.column, line: parsed.line },
    });
  if (typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value))
    return fail("invalid_params", {
      arg: "device.execute",
      details: { method: "device.execute", reason: "the body must be a JSON object of action arguments" },
    });
  return parsed.value;
}

/** An active Session's info, from the summaries of the active Sessions (few: one per leased device). */
async function activeInfo(rpc: Client, sessionId: string): Promise<SessionInfo> {
  const { sessions } = await rpc.call("devicerail.sessions.list", { state: "active" });
  const s = sessions.find((x) => x.id === sessionId);
  if (!s) return fail("session_not_found", { arg: sessionId, details: { sessionId } });
  return infoOf(s);
}

/** `{"session":…,"events":[…]}`, the events as they are read. */
async function* exportText(session: SessionInfo, pages: AsyncGenerator<TestEvent[]>): AsyncGenerator<string> {
  yield `{"session":${JSON.stringify(session)},"events":[`;
  let first = true;
  for await (const page of pages) {
    if (!page.length) continue;
    yield `${first ? "" : ","}${page.map((e) => JSON.stringify(e)).join(",")}`;
    first = false;
  }
  yield "]}";
}

/** A path segment with %-escapes decoded; a malformed escape keeps the raw text (it then matches nothing). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The curl-able API. Every request runs on its own in-process JSON-RPC connection over the
 * dispatcher; device requests additionally lease the device in their own short Session (select,
 * connect, session.start, the call, session.end), recorded like any client's and named in the
 * DeviceRail-Session header. What can be refused without the device (a malformed body, an unknown
 * device or action) is refused before session.start, so a mistyped curl leaves no Session behind.
 */
export class HttpApi {
  private readonly open = new Set<LocalClient>();
  private stopping = false;

  constructor(private readonly opts: HttpApiOptions) {}

  get active(): number {
    return this.open.size;
  }

  /** Routes one admitted request; null when no route matches the path. */
  route(req: Request, url: URL, body: string): Promise<Response> | null {
    const parts = url.pathname.split("/").slice(1).map(decodeSegment);
    const [top, id, leaf, name] = parts;
    const n = parts.length;
    if (top === "devices" && n === 1) return this.handle(req, "GET", () => this.plain(req, "devices.list"));
    if (top === "devices" && n === 3 && leaf === "screenshot.png")
      return this.handle(req, "GET", () => this.device(req, id as string, (rpc) => this.screenshot(rpc)));
    if (top === "devices" && n === 3 && leaf === "ui")
      return this.handle(req, "GET", () => this.device(req, id as string, (rpc) => this.ui(rpc)));
    if (top === "devices" && n === 4 && leaf === "actions")
      return this.handle(req, "POST", () => {
        const args = actionArguments(body);
        return this.device(
          req,
          id as string,
          (rpc) => this.action(rpc, name as string, args),
          (rpc) => this.knownAction(rpc, name as string, !sentByPage(req)),
        );
      });
    // The summaries rather than sessions.list: a person reading this wants the device, the outcome
    // and the counts, and the reference's bare array is kept for JSON-RPC clients only.
    if (top === "sessions" && n === 1)
      return this.handle(req, "GET", () =>
        this.plain(req, "devicerail.sessions.list", queryParams(url, "devicerail.sessions.list", ["limit", "state"])),
      );
    if (top === "sessions" && n === 3 && leaf === "events")
      return this.handle(req, "GET", () => this.events(req, id as string, url));
    if (top === "sessions" && n === 3 && leaf === "export")
      return this.handle(req, "GET", () => this.exportSession(req, id as string, url));
    if (top === "evidence" && n === 2) return this.handle(req, "GET", () => this.evidence(req, id as string));
    return null;
  }

  /** Daemon shutdown: every running request's connection is closed (its Session ends as shutdown). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.open].map((rpc) => rpc.close("daemon shutdown")));
  }

  private async handle(req: Request, method: "GET" | "POST", run: () => Promise<Response>): Promise<Response> {
    if (req.method !== method)
      return errorResponse(
        405,
        JSON.stringify(
          errorObject("method_not_found", {
            arg: `${req.method} ${new URL(req.url, "http://x").pathname}`,
            details: { allow: method },
          }),
        ),
        { Allow: method },
      );
    try {
      return await run();
    } catch (err) {
      if (err instanceof RemoteError) return failure(err);
      if (err instanceof RpcError) return errorResponse(httpStatusOf(err.code), JSON.stringify(err.error));
      this.opts.log.error({ err }, "HTTP request failed unexpectedly");
      return errorResponse(500, JSON.stringify(errorObject("internal_error")));
    }
  }

  /** A fresh connection after its hello, privileged unless a web page sent the request; closed by the caller. */
  private async connect(req: Request): Promise<LocalClient> {
    if (this.stopping) fail("event_store_shutting_down");
    const rpc = this.opts.connect({ transport: "http", privileged: !sentByPage(req) });
    this.open.add(rpc);
    try {
      await hello(rpc, { name: "devicerail-http", version: this.opts.serverVersion }, "http");
    } catch (err) {
      await this.release(rpc);
      throw err;
    }
    return rpc;
  }

  private async release(rpc: LocalClient): Promise<void> {
    await rpc.close();
    this.open.delete(rpc);
  }

  private async plain(req: Request, method: MethodName, params?: object): Promise<Response> {
    const rpc = await this.connect(req);
    try {
      const out = await (rpc.answer as (m: MethodName, p?: object) => ReturnType<Client["answer"]>)(method, params);
      if (!out.ok) throw new RemoteError(method, out.error);
      return jsonResponse(out.json);
    } finally {
      await this.release(rpc);
    }
  }

  /**
   * GET /sessions/{id}/events: events.list. An answer too large for one line is a 413 that says how
   * to page (the limit that fits, from the stored sizes), never the whole log held in memory.
   */
  private async events(req: Request, sessionId: string, url: URL): Promise<Response> {
    const query = queryParams(url, "events.list", ["afterSequence", "limit"]);
    const params = { sessionId, ...query };
    try {
      return await this.plain(req, "events.list", params);
    } catch (err) {
      if (!(err instanceof RemoteError) || err.error.data.code !== "response_frame_too_large") throw err;
      const {
        actualBytesAtLeast,
        limitBytes,
        fittingLimit = 1,
      } = (err.error.data.details ?? {}) as { actualBytesAtLeast?: number; limitBytes?: number; fittingLimit?: number };
      const next = `/sessions/${sessionId}/events?${query.afterSequence ? `afterSequence=${query.afterSequence}&` : ""}limit=${fittingLimit}`;
      const message = `the events do not fit one answer of ${MAX_FRAME_BYTES} bytes: page with limit (at most ${fittingLimit} here) and afterSequence (the last sequence received), e.g. GET ${next}`;
      return errorResponse(
        413,
        JSON.stringify(
          errorObject("response_frame_too_large", {
            message,
            details: { actualBytesAtLeast, limitBytes, fittingLimit, next },
          }),
        ),
      );
    }
  }

  /**
   * GET /sessions/{id}/export: session.export. Paged when asked (limit, afterSequence); else the
   * whole log, which past one line's worth is written out page by page: the body is the whole
   * export's result, as session.export would give it without the line limit, and the daemon holds
   * one page at a time. An active Session is written up to its last event when the export began.
   */
  private async exportSession(req: Request, sessionId: string, url: URL): Promise<Response> {
    const params = queryParams(url, "session.export", ["afterSequence", "limit"]);
    if (params.limit !== undefined || params.afterSequence !== undefined)
      return this.plain(req, "session.export", { sessionId, ...params });
    const rpc = await this.connect(req);
    let streaming = false;
    try {
      const whole = await rpc.answer("session.export", { sessionId });
      if (whole.ok) return jsonResponse(whole.json);
      if (whole.error.data.code !== "response_frame_too_large") throw new RemoteError("session.export", whole.error);
      const first = await rpc.answer("session.export", { sessionId, limit: EXPORT_PAGE_LIMIT });
      let session: SessionInfo;
      let pages: AsyncGenerator<TestEvent[]>;
      if (first.ok) {
        const page = first.result;
        session = page.session;
        pages = exportPages(rpc, sessionId, page);
      } else if (first.error.data.code === "session_active") {
        session = await activeInfo(rpc, sessionId);
        pages = eventPages(listPage(rpc, sessionId), { untilSequence: session.lastSequence });
      } else throw new RemoteError("session.export", first.error);
      const onAbort = () => void this.release(rpc);
      req.signal.addEventListener("abort", onAbort, { once: true });
      const body = textStream(exportText(session, pages), async () => {
        req.signal.removeEventListener("abort", onAbort);
        await this.release(rpc);
      });
      streaming = true;
      return new Response(body, { headers: { "Content-Type": "application/json", ...NO_STORE } });
    } finally {
      if (!streaming) await this.release(rpc);
    }
  }

  /**
   * `admit` runs after the device is connected and before session.start: its refusal starts no
   * Session. A device another Session holds is waited for as on every surface (client/device-session.ts).
   */
  private async device(
    req: Request,
    deviceId: string,
    work: (rpc: Client) => Promise<Response>,
    admit?: (rpc: Client) => Promise<void>,
  ): Promise<Response> {
    const rpc = await this.connect(req);
    // A client that hangs up mid-request closes the connection: its action is cancelled and its Session ended.
    const onAbort = () => void rpc.close();
    req.signal.addEventListener("abort", onAbort, { once: true });
    let sessionId: string | null = null;
    let workFailed = false;
    try {
      if (deviceId !== "_") await rpc.call("device.select", { deviceId });
      const res = await withDeviceSession(
        rpc,
        (session) => {
          sessionId = session.id;
          return work(rpc).catch((err: unknown) => {
            workFailed = true;
            throw err;
          });
        },
        {
          admit: admit && (() => admit(rpc)),
          // The reason recorded is the error's own message, as the Session's reader sees it elsewhere.
          outcomeOf: (err) => ({
            outcome: "failed",
            reason: err instanceof RemoteError ? err.rpcMessage : messageOf(err),
          }),
        },
      );
      res.headers.set(SESSION_HEADER, sessionId ?? "");
      return res;
    } catch (err) {
      // The work's refusal names the Session it was recorded in; a refused start has none.
      if (workFailed && err instanceof RemoteError) return failure(err, { [SESSION_HEADER]: sessionId ?? "" });
      throw err;
    } finally {
      req.signal.removeEventListener("abort", onAbort);
      await this.release(rpc);
    }
  }

  private async screenshot(rpc: Client): Promise<Response> {
    const o = await rpc.call("device.observe");
    const sha = o.screenshot?.sha256;
    if (!sha)
      return fail("media_capture_unavailable", {
        details: { deviceId: o.deviceId, screenshotOmission: o.screenshotOmission ?? null },
      });
    const stored = await this.opts.evidence.read(sha);
    if (!stored) return fail("evidence_not_found", { details: { digest: sha } });
    return new Response(stored.bytes, { headers: { "Content-Type": stored.mediaType, ...NO_STORE } });
  }

  private async ui(rpc: Client): Promise<Response> {
    const o = await rpc.call("device.observe");
    const snapshot = await rpc.answer("ui.snapshot.get", { observationId: o.id });
    if (!snapshot.ok) throw new RemoteError("ui.snapshot.get", snapshot.error);
    return jsonResponse(snapshot.json);
  }

  /**
   * unknown_action with the names the device offers, so the caller can correct the path; a
   * protected action a page asked for is refused here too, before a Session is started for it.
   */
  private async knownAction(rpc: Client, name: string, privileged: boolean): Promise<void> {
    const defs = await rpc.call("device.capabilities");
    const def = defs.find((d) => d.name === name);
    if (!def)
      fail("unknown_action", { arg: name, details: { action: name, availableActions: defs.map((d) => d.name) } });
    if (def?.protection === "protected" && !privileged)
      throw notPermittedOnTransport("device.execute", "http", "protectedAction");
  }

  private async action(rpc: Client, name: string, args: object): Promise<Response> {
    const params = { id: crypto.randomUUID(), name, arguments: args };
    const out = await rpc.answer("device.execute", params as InputOf<"device.execute">);
    if (!out.ok) throw new RemoteError("device.execute", out.error);
    return jsonResponse(out.json);
  }

  /** Evidence is read by digest, whoever's Session holds it: a page may not read it. */
  private async evidence(req: Request, id: string): Promise<Response> {
    if (sentByPage(req)) throw notPermittedOnTransport("GET /evidence/{id}", "http", "always");
    const sha256 = id.startsWith(EVIDENCE_ID_PREFIX) ? id.slice(EVIDENCE_ID_PREFIX.length) : id;
    if (!SHA256.test(sha256)) return fail("invalid_evidence_digest", { details: { digest: id } });
    const stored = await this.opts.evidence.read(sha256);
    if (!stored) return fail("evidence_not_found", { details: { digest: sha256 } });
    return new Response(stored.bytes, { headers: { "Content-Type": stored.mediaType, ...NO_STORE } });
  }
}
