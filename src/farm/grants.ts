/**
 * The owning host's side of farm allocations: a client presenting an allocation's credential (in
 * place of the host's token) gets a connection limited to that one device (ConnectionGrant). The
 * credential is verified in the transport (its signature; credential.ts); on the connection's first
 * request the database confirms the allocation is still live and records the claim. The host then
 * renews it at every heartbeat while the connection lives, and releases it when the connection
 * closes or its Session ends.
 *
 * A credential that lapsed is answered `device_lease_expired` on the next request and the
 * connection's Session is ended, so the device has one owner: released or expired in the
 * database (forced release, no renewal), or locally once a lease has passed since the last renewal
 * the database confirmed (measured on this host's monotonic clock, so clock skew plays no part).
 */
import type { SQL } from "bun";
import type { Connection, ConnectionGrant } from "../rpc/connection.ts";
import { type Logger, RpcError } from "../protocol/rpc-error.ts";
import { releaseSql } from "./allocator.ts";
import { verifyCredential } from "./credential.ts";

/** Methods that read or delete other clients' Sessions: a grant holder sees only its own. */
const ALL_SESSIONS = new Set(["sessions.list", "devicerail.sessions.list", "events.clear"]);
const ONE_SESSION = new Set(["session.export", "events.list", "events.stream.open"]);

export interface GrantHost {
  hostId: string;
  /** The farm's credential key, once the host has joined; null before. */
  key(): string | null;
  /** The farm database, when the host has a connection to it. */
  sql(): SQL | null;
  leaseMs: number;
  log: Logger;
  /** Ends the connection's Session (if any) and gives back its device lease. */
  revoke(conn: Connection, reason: string): Promise<void>;
  /** The connection's active Session id, if any. */
  activeSession(conn: Connection): string | null;
}

type State =
  | { kind: "confirming"; done: Promise<void> }
  | { kind: "live"; validUntil: number }
  | { kind: "lapsed"; reason: string };

export class AllocationGrant implements ConnectionGrant {
  private state: State;
  private conn: Connection | null = null;
  /** Sessions this connection ran: the only ones it may read. */
  readonly sessions = new Set<string>();
  lastSession: string | null = null;

  constructor(
    private readonly host: GrantHost,
    private readonly table: FarmGrants,
    readonly allocationId: string,
    readonly deviceId: string,
  ) {
    this.state = { kind: "confirming", done: this.confirm() };
  }

  check(conn: Connection, method: string, params: unknown): RpcError | null | Promise<RpcError | null> {
    this.conn = conn;
    const s = this.state;
    if (s.kind === "confirming") return s.done.then(() => this.check(conn, method, params));
    this.expireIfDue();
    if (this.state.kind === "lapsed") return lapsedError(this.allocationId, this.state.reason);
    const active = this.host.activeSession(conn);
    if (active) {
      this.sessions.add(active);
      this.lastSession = active;
    }
    if (ALL_SESSIONS.has(method)) return denied(method, this.deviceId);
    if (ONE_SESSION.has(method)) {
      const id = (params as { sessionId?: unknown } | null)?.sessionId;
      if (typeof id !== "string" || !this.sessions.has(id)) return denied(method, this.deviceId);
    }
    return null;
  }

  /** The last open connection of an allocation releases it; a client may hold several (NDJSON and WebSocket). */
  closed(): void {
    this.table.drop(this);
    if (this.state.kind === "lapsed") return;
    this.state = { kind: "lapsed", reason: "released: connection closed" };
    if (!this.table.hasOpen(this.allocationId)) void this.table.release(this, "connection closed");
  }

  get live(): boolean {
    return this.state.kind === "live";
  }

  /** The database renewed the allocation at `startedAt` (monotonic, taken before the query). */
  renewed(startedAt: number): void {
    if (this.state.kind === "live") this.state = { kind: "live", validUntil: startedAt + this.host.leaseMs };
  }

  /** Checks the local deadline (the database unreachable for a whole lease). */
  expireIfDue(): void {
    if (this.state.kind === "live" && performance.now() > this.state.validUntil)
      this.lapse("expired: the farm database could not renew it in time");
  }

  /** The allocation is no longer this connection's: later requests are refused and its Session ends. */
  lapse(reason: string): void {
    if (this.state.kind === "lapsed") return;
    this.state = { kind: "lapsed", reason };
    this.host.log.warn(
      { allocationId: this.allocationId, deviceId: this.deviceId, reason },
      "farm allocation lapsed; its connection keeps no device",
    );
    const conn = this.conn;
    if (conn) void this.host.revoke(conn, `farm allocation lapsed (${reason})`).catch(() => {});
  }

  /** The Session `sessionId` ended: if it was this connection's, the allocation is released. */
  sessionEnded(sessionId: string): void {
    if (this.lastSession !== sessionId || this.state.kind === "lapsed") return;
    this.state = { kind: "lapsed", reason: "released: its Session ended" };
    void this.table.release(this, "session ended");
  }

  private async confirm(): Promise<void> {
    const sql = this.host.sql();
    const t0 = performance.now();
    if (!sql) {
      this.state = { kind: "lapsed", reason: "unconfirmed: the farm database is unreachable from this host" };
      return;
    }
    try {
      const rows = (await sql`
        UPDATE allocations SET claimed_at = coalesce(claimed_at, now()), expires_at = now() + make_interval(secs => ${this.host.leaseMs} / 1000.0)
        WHERE id = ${this.allocationId} AND host_id = ${this.host.hostId} AND device_id = ${this.deviceId} AND released_at IS NULL AND expires_at > now()
        RETURNING id`) as unknown[];
      if (rows.length === 1) this.state = { kind: "live", validUntil: t0 + this.host.leaseMs };
      else this.state = { kind: "lapsed", reason: await this.table.whyNotLive(sql, this.allocationId) };
    } catch (err) {
      this.host.log.warn(
        { err: (err as Error).message, allocationId: this.allocationId },
        "could not confirm a farm allocation",
      );
      this.state = { kind: "lapsed", reason: "unconfirmed: the farm database is unreachable from this host" };
    }
  }
}

const lapsedError = (allocationId: string, reason: string) =>
  new RpcError("device_lease_expired", {
    message: `farm allocation ${allocationId} is no longer held: ${reason}; acquire a device again`,
    details: { reason: "farmAllocationLapsed", allocationId, cause: reason },
  });

const denied = (method: string, deviceId: string) =>
  new RpcError("permission_denied", { details: { reason: "farmAllocationScope", method, deviceId } });

/** Every grant the host has handed out to connections that are still open. */
export class FarmGrants {
  private readonly grants = new Set<AllocationGrant>();

  constructor(private readonly host: GrantHost) {}

  /** The transport's hook (GrantIssuer): a credential signed with the farm's key for this host. */
  readonly issue = (credential: string): ConnectionGrant | null => {
    const key = this.host.key();
    const claims = key ? verifyCredential(key, credential) : null;
    if (!claims || claims.h !== this.host.hostId) return null;
    const grant = new AllocationGrant(this.host, this, claims.a, claims.d);
    this.grants.add(grant);
    return grant;
  };

  drop(grant: AllocationGrant): void {
    this.grants.delete(grant);
  }

  hasOpen(allocationId: string): boolean {
    for (const g of this.grants) if (g.allocationId === allocationId) return true;
    return false;
  }

  /** At every heartbeat: renews the live allocations in one statement; those the database no longer has lapse. */
  async renew(sql: SQL): Promise<void> {
    for (const g of this.grants) g.expireIfDue();
    const live = [...this.grants].filter((g) => g.live);
    if (live.length === 0) return;
    const t0 = performance.now();
    const ids = live.map((g) => g.allocationId);
    const sessions = live.map((g) => g.lastSession ?? "");
    const rows = (await sql`
      UPDATE allocations a SET expires_at = now() + make_interval(secs => ${this.host.leaseMs} / 1000.0), session_id = coalesce(nullif(x.session_id, ''), a.session_id)
      FROM unnest(${sql.array(ids, "TEXT")}::text[], ${sql.array(sessions, "TEXT")}::text[]) AS x(id, session_id)
      WHERE a.id = x.id AND a.released_at IS NULL AND a.expires_at > now()
      RETURNING a.id`) as { id: string }[];
    const renewed = new Set(rows.map((r) => r.id));
    for (const g of live) {
      if (renewed.has(g.allocationId)) g.renewed(t0);
      else if (g.live) g.lapse(await this.whyNotLive(sql, g.allocationId));
    }
  }

  /** Lapses every live grant whose local deadline passed (called when the database cannot be reached). */
  expireDue(): void {
    for (const g of this.grants) g.expireIfDue();
  }

  /** Whether a live grant holds the device. */
  holds(deviceId: string): boolean {
    for (const g of this.grants) if (g.live && g.deviceId === deviceId) return true;
    return false;
  }

  /** The allocation a Session runs under, if a grant's connection ran it. */
  allocationOf(sessionId: string): { allocationId: string } | null {
    for (const g of this.grants) if (g.sessions.has(sessionId)) return { allocationId: g.allocationId };
    return null;
  }

  /** A Session ended on this host (the event log's sessionEnded). */
  sessionEnded(sessionId: string): void {
    for (const g of this.grants) g.sessionEnded(sessionId);
  }

  async release(grant: AllocationGrant, reason: string): Promise<void> {
    const sql = this.host.sql();
    if (!sql) return;
    try {
      await sql.unsafe(releaseSql("a.id = $2", ", session_id = coalesce($3, a.session_id)"), [
        reason,
        grant.allocationId,
        grant.lastSession,
      ]);
    } catch (err) {
      // It expires on its own after one lease.
      this.host.log.warn(
        { err: (err as Error).message, allocationId: grant.allocationId },
        "could not release a farm allocation; it expires on its own",
      );
    }
  }

  async whyNotLive(sql: SQL, allocationId: string): Promise<string> {
    const [row] =
      (await sql`SELECT release_reason, released_at IS NULL AS open FROM allocations WHERE id = ${allocationId}`) as {
        release_reason: string | null;
        open: boolean;
      }[];
    if (!row) return "unknown allocation";
    if (row.open) return "expired";
    return row.release_reason?.startsWith("forced")
      ? `released by an operator (${row.release_reason})`
      : `released (${row.release_reason ?? "no reason"})`;
  }
}
