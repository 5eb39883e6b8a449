/**
 * A browser's way into the live report on a port that requires a token. A browser cannot send
 * `Authorization: Bearer`, and the token must not be handed to it (the command that opens a
 * browser puts its URL in an argv every local user can read). Instead the token's holder asks for
 * a ticket: single-use, for one Session's report page, valid for TICKET_MS. Opening it trades it
 * for a view key (the report route redirects to `?view=KEY`), which admits that Session's page,
 * so that it can be reloaded, and the page's own reads of stored evidence
 * (`GET /evidence/{id}?view=KEY`) for VIEW_KEY_MS. A view key lives only in the browser: in the
 * page's URL and its links, never in an argv.
 *
 * Only the token check is replaced: the Host, Origin and Sec-Fetch-Site checks run as for any
 * request, and only GET requests of those two routes are admitted this way.
 */
import { randomSecret } from "./token.ts";

/** How long a ticket may wait for the browser to open it. */
export const TICKET_MS = 60_000;
/** How long a page's view key admits its evidence reads (a report left open for a working day). */
export const VIEW_KEY_MS = 12 * 60 * 60_000;
/** At most this many tickets and view keys are kept; the oldest go first. */
const MAX_ENTRIES = 1_024;

const REPORT_PATH = /^\/sessions\/([0-9a-fA-F-]{36})\/report$/;
const EVIDENCE_PATH = /^\/evidence\/[^/]+$/;

const newSecret = () => randomSecret(24);

/** A Map used as a bounded, expiring set: insertion order is age order. */
class Expiring<V extends { expiresAt: number }> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly now: () => number) {}

  add(key: string, value: V): void {
    this.entries.set(key, value);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  get(key: string): V | null {
    const value = this.entries.get(key);
    if (value === undefined) return null;
    if (value.expiresAt > this.now()) return value;
    this.entries.delete(key);
    return null;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

export class ViewerPasses {
  private readonly tickets: Expiring<{ sessionId: string; expiresAt: number }>;
  private readonly keys: Expiring<{ sessionId: string; expiresAt: number }>;

  constructor(private readonly now: () => number = Date.now) {
    this.tickets = new Expiring(now);
    this.keys = new Expiring(now);
  }

  /** A ticket for one Session's report page; the caller has already presented the token. */
  issueTicket(sessionId: string): { ticket: string; expiresInMs: number } {
    const ticket = newSecret();
    this.tickets.add(ticket, { sessionId: sessionId.toLowerCase(), expiresAt: this.now() + TICKET_MS });
    return { ticket, expiresInMs: TICKET_MS };
  }

  /**
   * Whether a request may skip the token check: a GET of a Session's report page with a ticket
   * (the route redeems it, or refuses a spent one) or with a live view key for that Session, or a
   * GET of evidence with a live view key. Nothing is consumed here.
   */
  admits(method: string, url: URL): boolean {
    if (method !== "GET" && method !== "HEAD") return false;
    const ticket = url.searchParams.get("ticket");
    const key = url.searchParams.get("view");
    const session = REPORT_PATH.exec(url.pathname)?.[1]?.toLowerCase();
    if (session !== undefined) {
      // Any ticket reaches the route, which redeems it before any other work, or says that the link is spent.
      if (ticket !== null) return true;
      return key !== null && this.keys.get(key)?.sessionId === session;
    }
    return key !== null && EVIDENCE_PATH.test(url.pathname) && this.keys.get(key) !== null;
  }

  /** Whether `key` is a live view key of this Session's page. */
  viewing(key: string, sessionId: string): boolean {
    return this.keys.get(key)?.sessionId === sessionId.toLowerCase();
  }

  /** Uses up the ticket of a report request; false when it is not (or no longer) valid for the Session. */
  redeem(ticket: string, sessionId: string): boolean {
    const found = this.tickets.get(ticket);
    if (found === null || found.sessionId !== sessionId.toLowerCase()) return false;
    this.tickets.delete(ticket);
    return true;
  }

  /** A view key for one Session's page; it goes to the browser only. */
  issueViewKey(sessionId: string): string {
    const key = newSecret();
    this.keys.add(key, { sessionId: sessionId.toLowerCase(), expiresAt: this.now() + VIEW_KEY_MS });
    return key;
  }
}
