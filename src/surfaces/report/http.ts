/**
 * The live viewer: GET /sessions/{id}/report on the daemon's port serves the same page as
 * `devicerail report`, with screenshots linked from the daemon's /evidence rather than embedded,
 * and, while the Session is active, a single-use event-plane capability bound to the page's own
 * origin (http://127.0.0.1:PORT), over which the page follows the Session. No other origin can
 * read the page (the HTTP guard refuses cross-site requests) nor use the capability (the event
 * plane checks the Origin).
 *
 * On a port that requires a token a browser comes in with a ticket the token's holder asked for
 * (POST /sessions/{id}/report/ticket), traded here for a view key (the server's ViewerPasses, transports/viewer-passes.ts).
 */
import { hello } from "../../client/hello.ts";
import type { Connect, EvidenceSource } from "../../client/in-process.ts";
import { RemoteError } from "../../client/remote-error.ts";
import { errorResponse, httpError, httpStatusOf, refusal, sentByPage, textStream } from "../../protocol/http.ts";
import { modelChunks } from "./model.ts";
import { clientSource } from "./source.ts";
import { pageChunks, pagePolicy } from "./page.ts";

/** What the report needs of the server's ticket and view-key store (transports/viewer-passes.ts satisfies it). */
export interface ViewerPassPort {
  issueTicket(sessionId: string): { ticket: string; expiresInMs: number };
  redeem(ticket: string, sessionId: string): boolean;
  viewing(key: string, sessionId: string): boolean;
  issueViewKey(sessionId: string): string;
}

export interface ReportHttpOptions {
  /** Opens an in-process connection (the composition root's). */
  connect: Connect;
  evidence: EvidenceSource;
  serverVersion: string;
  /** The browser passes the HTTP guard honours; without them no ticket is issued. */
  viewer?: ViewerPassPort | null;
}

const REPORT_PATH = /^\/sessions\/([0-9a-fA-F-]{36})\/report(\/ticket)?$/;

/** A capability older than this when the page's data is written is swapped for a fresh one (they expire after 30 s). */
const CAPABILITY_FRESH_MS = 10_000;

export class ReportHttp {
  constructor(private readonly opts: ReportHttpOptions) {}

  /** The route's answer, or null when the path is not a report's. */
  route(req: Request, url: URL): Promise<Response> | null {
    const matched = REPORT_PATH.exec(url.pathname);
    const id = matched?.[1]?.toLowerCase();
    if (!id) return null;
    const only = matched?.[2] ? "POST" : "GET";
    if (req.method !== only)
      return Promise.resolve(
        httpError(
          "method_not_found",
          { message: `${req.method} ${url.pathname}: only ${only}`, details: {} },
          { status: 405 },
        ),
      );
    return only === "POST" ? Promise.resolve(this.ticket(id)) : this.serve(req, url, id);
  }

  /** A single-use ticket for a browser to open this Session's page with; the caller presented the token. */
  private ticket(sessionId: string): Response {
    const { viewer } = this.opts;
    if (!viewer) return httpError("method_not_found", { message: "this daemon issues no report tickets", details: {} });
    const { ticket, expiresInMs } = viewer.issueTicket(sessionId);
    return Response.json(
      { path: `/sessions/${sessionId}/report?ticket=${ticket}`, expiresInMs },
      { headers: { "Cache-Control": "no-store" } },
    );
  }

  private async serve(req: Request, url: URL, sessionId: string): Promise<Response> {
    const noStore = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" };
    // The event plane admits exactly http://127.0.0.1:PORT: a page opened as localhost is sent there first.
    const host = req.headers.get("host") ?? "";
    const port = /:(\d+)$/.exec(host)?.[1];
    if (port && !host.startsWith("127.0.0.1:"))
      return new Response(null, {
        status: 302,
        headers: { Location: `http://127.0.0.1:${port}/sessions/${sessionId}/report${url.search}`, ...noStore },
      });
    const { viewer } = this.opts;
    const ticket = url.searchParams.get("ticket");
    if (ticket !== null) {
      // Traded for a view key at once: the URL the browser keeps (and reloads) holds no ticket.
      if (!viewer?.redeem(ticket, sessionId))
        return refusal(
          401,
          "authentication_failed",
          `this report link was used already or has expired; run \`devicerail sessions --open ${sessionId}\` again`,
          { reason: "reportTicketSpent" },
        );
      return new Response(null, {
        status: 303,
        headers: { Location: `/sessions/${sessionId}/report?view=${viewer.issueViewKey(sessionId)}`, ...noStore },
      });
    }
    const given = url.searchParams.get("view");
    const key = viewer
      ? given !== null && viewer.viewing(given, sessionId)
        ? given
        : viewer.issueViewKey(sessionId)
      : null;
    const evidenceQuery = key ? `?view=${key}` : "";
    const { serverVersion } = this.opts;
    // Like the API's reads: a page's fetch of another client's Session is refused (transport-and-framing.md#privileged-methods).
    const rpc = this.opts.connect({ transport: "http", privileged: !sentByPage(req) });
    let streaming = false;
    try {
      const hi = await hello(rpc, { name: "devicerail-report", version: serverVersion }, "report");
      const source = clientSource(rpc, async (sha) => (await this.opts.evidence.read(sha))?.bytes ?? null);
      const head = await source.head(sessionId);
      const streams = (hi.features.enabled ?? []).includes("events.stream.v1");
      const open = async () => ({
        at: Date.now(),
        ...(await rpc.call("events.stream.open", {
          sessionId,
          originPolicy: { kind: "exact", origin: `http://127.0.0.1:${port}` },
        })),
      });
      // Opened now for its origin, which the policy names before the page is written.
      let cap = head.session.state === "active" && streams && port ? await open() : null;
      const live = async () => {
        if (!cap) return null;
        if (Date.now() - cap.at > CAPABILITY_FRESH_MS) cap = await open().catch(() => cap);
        return (
          cap && { endpoint: cap.endpoint, streamEpoch: cap.streamEpoch, evidenceBase: "/evidence/", evidenceQuery }
        );
      };
      const policy = pagePolicy(cap ? new URL(cap.endpoint).origin : null, true);
      const chunks = pageChunks(
        modelChunks(source, head, { daemonVersion: serverVersion, linkedImages: true, evidenceQuery }, live),
        { policy, daemonVersion: serverVersion, sessionId },
      );
      const onAbort = () => void rpc.close();
      req.signal.addEventListener("abort", onAbort, { once: true });
      const body = textStream(chunks, async () => {
        req.signal.removeEventListener("abort", onAbort);
        await rpc.close();
      });
      streaming = true;
      return new Response(body, {
        headers: {
          "Content-Type": "text/html; charset=utf-8",
          "Content-Security-Policy": policy,
          ...noStore,
          "X-Content-Type-Options": "nosniff",
        },
      });
    } catch (err) {
      // The daemon's error as any client gets it (the table's numbers), with the status that fits it.
      if (err instanceof RemoteError) return errorResponse(httpStatusOf(err.error.data.code), err.json);
      throw err;
    } finally {
      if (!streaming) await rpc.close();
    }
  }
}
