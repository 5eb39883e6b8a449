/**
 * What a farm host reports besides its devices, taken from its event log as Sessions run: each
 * Session's start and end for the farm-wide catalogue (`farm sessions`), and infrastructure
 * failures (a device that stopped answering, driver and adb errors), which quarantine a device once
 * there are enough of them in the window. Collected in memory and written at the next heartbeat,
 * so a slow or absent database never slows a Session down; what an outage holds back is written
 * when the database returns (bounded: the oldest is dropped past MAX_PENDING).
 */
import type { SQL } from "bun";
import type { TestEvent } from "../protocol/types/event.ts";

export interface QuarantinePolicy {
  /** Failures in the window that quarantine a device; 0 = never. */
  failures: number;
  windowMs: number;
}

interface SessionRow {
  sessionId: string;
  deviceId: string | null;
  startedAt: number;
  endedAt: number | null;
  outcome: string | null;
  reason: string | null;
}

/** Stamped with the database's now() when written (within a heartbeat of when it happened), so the window is the database's. */
interface FailureRow {
  deviceId: string;
  kind: string;
  detail: string;
}

const MAX_PENDING = 10_000;

/** An error that says the device or its tooling failed, not the test: a timeout, a lost device, a driver fault. */
export function infrastructureFailure(error: { code: string; details?: unknown }, timedOut: boolean): string | null {
  if (timedOut) return "device did not answer in time";
  const platformCode = (error.details as { platformCode?: unknown } | null)?.platformCode;
  if (
    error.code === "platform_error" &&
    typeof platformCode === "string" &&
    /offline|unauthorized|not_found|disconnected|adb|unavailable/i.test(platformCode)
  )
    return platformCode;
  if (error.code === "driver_timed_out" || error.code === "internal_error" || error.code === "device_not_found")
    return error.code;
  return null;
}

export class FarmCatalogue {
  private readonly sessions = new Map<string, SessionRow>();
  private failures: FailureRow[] = [];

  constructor(
    private readonly hostId: string,
    private readonly policy: QuarantinePolicy,
    /** The device a Session leases, when its events do not say (connections without routing). */
    private readonly deviceOf: (sessionId: string) => string | null,
    /** The allocation and holder a Session runs under, if it runs under one. */
    private readonly allocationOf: (sessionId: string) => { allocationId: string } | null = () => null,
  ) {}

  /** The event log's watcher: called with every committed batch. */
  readonly watcher = {
    committed: (events: readonly TestEvent[]) => {
      for (const e of events) this.see(e);
    },
    deleted: () => {},
  };

  private see(e: TestEvent): void {
    const p = e.payload;
    if (p.type === "sessionStarted") {
      this.remember({
        sessionId: e.sessionId,
        deviceId: e.deviceId ?? this.deviceOf(e.sessionId),
        startedAt: e.atMs,
        endedAt: null,
        outcome: null,
        reason: null,
      });
    } else if (p.type === "sessionEnded") {
      const row = this.sessions.get(e.sessionId) ?? {
        sessionId: e.sessionId,
        deviceId: e.deviceId ?? null,
        startedAt: e.atMs,
        endedAt: null,
        outcome: null,
        reason: null,
      };
      this.remember({ ...row, endedAt: e.atMs, outcome: p.outcome, reason: p.reason ?? null });
    } else if (p.type === "actionCompleted" && p.outcome.outcome !== "succeeded" && p.outcome.outcome !== "cancelled") {
      this.fail(e, infrastructureFailure(p.outcome.error, p.outcome.outcome === "timedOut"), p.outcome.error.message);
    } else if (p.type === "error") {
      this.fail(e, infrastructureFailure(p.error, false), p.error.message);
    }
  }

  /** A failure the host saw outside any Session: a held device that left it, a battery under the threshold. */
  failure(deviceId: string, kind: string, detail: string): void {
    this.pushFailure({ deviceId, kind, detail });
  }

  private fail(e: TestEvent, kind: string | null, detail: string): void {
    const deviceId = e.deviceId ?? this.deviceOf(e.sessionId);
    if (kind && deviceId) this.pushFailure({ deviceId, kind, detail });
  }

  private pushFailure(f: FailureRow): void {
    this.failures.push(f);
    if (this.failures.length > MAX_PENDING) this.failures.shift();
  }

  private remember(row: SessionRow): void {
    this.sessions.delete(row.sessionId);
    this.sessions.set(row.sessionId, row);
    if (this.sessions.size > MAX_PENDING) this.sessions.delete(this.sessions.keys().next().value as string);
  }

  /** Writes what was collected; kept for the next try when the database fails. Returns the devices quarantined now. */
  async flush(sql: SQL): Promise<string[]> {
    const sessions = [...this.sessions.values()];
    // Taken out whole: a failure seen while this transaction runs goes to the next flush, never
    // into the count of what this one wrote.
    const failures = this.failures;
    this.failures = [];
    if (sessions.length === 0 && failures.length === 0) return [];
    const hostId = this.hostId;
    let quarantined: string[];
    try {
      quarantined = await this.write(sql, hostId, sessions, failures);
    } catch (err) {
      // Kept for the next try, in the order seen, still bounded.
      this.failures = [...failures, ...this.failures].slice(-MAX_PENDING);
      throw err;
    }
    for (const s of sessions) if (this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
    return quarantined;
  }

  private write(sql: SQL, hostId: string, sessions: SessionRow[], failures: FailureRow[]): Promise<string[]> {
    return sql.begin(async (tx) => {
      for (const s of sessions) {
        const alloc = this.allocationOf(s.sessionId);
        await tx`
          INSERT INTO sessions (host_id, session_id, device_id, allocation_id, holder, started_at, ended_at, outcome, reason)
          VALUES (${hostId}, ${s.sessionId}, ${s.deviceId}, ${alloc?.allocationId ?? null},
            (SELECT holder FROM allocations WHERE id = ${alloc?.allocationId ?? null}),
            to_timestamp(${s.startedAt} / 1000.0), ${s.endedAt === null ? null : new Date(s.endedAt)}, ${s.outcome}, ${s.reason})
          ON CONFLICT (host_id, session_id) DO UPDATE SET device_id = coalesce(EXCLUDED.device_id, sessions.device_id),
            allocation_id = coalesce(EXCLUDED.allocation_id, sessions.allocation_id), holder = coalesce(EXCLUDED.holder, sessions.holder),
            ended_at = EXCLUDED.ended_at, outcome = EXCLUDED.outcome, reason = EXCLUDED.reason`;
      }
      if (failures.length) await this.insertFailures(tx as unknown as SQL, failures);
      if (failures.length === 0 || this.policy.failures === 0) return [] as string[];
      const devices = [...new Set(failures.map((f) => f.deviceId))];
      const rows = (await tx`
        WITH counted AS (
          SELECT d.device_id, count(f.id)::int AS n, max(f.kind) FILTER (WHERE f.at = (SELECT max(at) FROM failures g WHERE g.host_id = d.host_id AND g.device_id = d.device_id)) AS last
          FROM devices d JOIN failures f ON f.host_id = d.host_id AND f.device_id = d.device_id
          WHERE d.host_id = ${hostId} AND d.device_id = ANY(${tx.array(devices, "TEXT")}) AND d.quarantined_reason IS NULL
            AND f.at > now() - make_interval(secs => ${this.policy.windowMs} / 1000.0) AND f.at > coalesce(d.cleared_at, '-infinity')
          GROUP BY d.host_id, d.device_id),
        q AS (
          UPDATE devices d SET quarantined_reason = c.n || ' infrastructure failure' || CASE WHEN c.n = 1 THEN '' ELSE 's' END || ' within ' || ${formatWindow(this.policy.windowMs)} || ' (last: ' || coalesce(c.last, '?') || ')', quarantined_at = now()
          FROM counted c WHERE d.host_id = ${hostId} AND d.device_id = c.device_id AND c.n >= ${this.policy.failures}
          RETURNING d.device_id, d.quarantined_reason)
        INSERT INTO audit (at, action, host_id, device_id, actor, reason) SELECT now(), 'quarantine', ${hostId}, q.device_id, 'farm', q.quarantined_reason FROM q
        RETURNING device_id`) as { device_id: string }[];
      return rows.map((r) => r.device_id);
    });
  }

  private async insertFailures(tx: SQL, failures: FailureRow[]): Promise<void> {
    await tx`
      INSERT INTO failures (host_id, device_id, at, kind, detail)
      SELECT ${this.hostId}, x.device_id, now(), x.kind, x.detail
      FROM unnest(${tx.array(
        failures.map((f) => f.deviceId),
        "TEXT",
      )}::text[], ${tx.array(
        failures.map((f) => f.kind),
        "TEXT",
      )}::text[],
        ${tx.array(
          failures.map((f) => f.detail.slice(0, 500)),
          "TEXT",
        )}::text[]) AS x(device_id, kind, detail)`;
  }
}

export function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}
