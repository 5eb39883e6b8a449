import { refusal } from "../protocol/http.ts";
import type { ConnectionGrant } from "../rpc/connection.ts";
import type { AccessToken, GrantIssuer } from "./token.ts";
import type { ViewerPasses } from "./viewer-passes.ts";

/** Who may talk to the HTTP side, decided before any route runs. */
export interface HttpPolicy {
  /** Exact Host header values accepted; null = any (a Unix socket, or a token-guarded public bind). */
  hosts: ReadonlySet<string> | null;
  /** Exact Origin values accepted; a request without Origin is a non-browser client. */
  origins: ReadonlySet<string>;
  token: AccessToken | null;
  /** Credentials other than the token, honoured on the JSON-RPC WebSocket (`/rpc`) only. */
  grants?: GrantIssuer | null;
  /** A browser's tickets and view keys for the live report, honoured on its GETs only (viewer-passes.ts). */
  viewer?: ViewerPasses | null;
}

/** The Host values a loopback listener on `port` accepts: the three spellings of loopback a browser sends. */
export const loopbackHosts = (port: number): ReadonlySet<string> =>
  new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);

/**
 * Browser protection (SEC-2, SEC-3): the exact Host (DNS rebinding: a page on evil.test that
 * resolves to 127.0.0.1 still sends `Host: evil.test:PORT`), the Origin allow-list (Bun joins
 * duplicate headers with ", ", which then matches nothing), Sec-Fetch-Site for requests that carry
 * no Origin (an `<img>` or `<script>` GET from another site), then the token. Returns the refusal,
 * or null when the request may be routed.
 */
export function admit(req: Request, policy: HttpPolicy): Response | null {
  const h = req.headers;
  const host = h.get("host");
  if (policy.hosts && (host === null || !policy.hosts.has(host)))
    return refusal(
      403,
      "permission_denied",
      "request refused: the Host header is not an allowed loopback name and port",
      { reason: "hostNotAllowed" },
    );
  const origin = h.get("origin");
  if (origin !== null && !policy.origins.has(origin))
    return refusal(
      403,
      "permission_denied",
      "request refused: the Origin is not on the allow-list (DEVICERAIL_ALLOWED_ORIGINS)",
      { reason: "originNotAllowed" },
    );
  const site = h.get("sec-fetch-site");
  if (origin === null && site !== null && site !== "none" && site !== "same-origin")
    return refusal(403, "permission_denied", "request refused: cross-site browser requests are not accepted", {
      reason: "crossSiteRequest",
    });
  if (policy.token) {
    const auth = policy.token.matchesAuthorization(h.get("authorization"));
    if (auth === "missing")
      return refusal(
        401,
        "authentication_required",
        "remote authentication failed",
        { reason: "missingBearerToken" },
        { "WWW-Authenticate": "Bearer" },
      );
    if (auth === "wrong")
      return refusal(
        401,
        "authentication_failed",
        "remote authentication failed",
        { reason: "wrongBearerToken" },
        { "WWW-Authenticate": "Bearer" },
      );
  }
  return null;
}

/**
 * The grant a request's bearer credential opens, when it is not the host's token but a credential
 * the policy's issuer honours (a farm allocation's). Only the JSON-RPC WebSocket asks: a grant opens
 * one device's control connection, not the HTTP routes.
 */
export function grantOf(req: Request, policy: HttpPolicy): ConnectionGrant | null {
  if (!policy.token || !policy.grants) return null;
  const header = req.headers.get("authorization");
  if (policy.token.matchesAuthorization(header) !== "wrong") return null;
  const credential = /^bearer +(\S+)$/i.exec(header ?? "")?.[1];
  return credential ? policy.grants(credential) : null;
}
