/**
 * The farm's allocation queue, run by whoever asks (a daemon answering POST /farm/acquire, or the
 * CLI): a request is a row in `requests`; a dispatch pass serves the waiting requests in order
 * (priority, then arrival) with free matching devices, in one transaction. Passes are serialised by
 * a transaction-scoped advisory lock taken with try (a client that finds a pass running just waits
 * for its answer), device rows are taken FOR UPDATE SKIP LOCKED, and a unique index allows one
 * unreleased allocation per device, so two waiters never get the same device. Every time compared
 * is the database's now().
 * Over 300 lines because the queue's SQL and its dispatch pass must be read together to see that a
 * pass is one transaction.
 */
import type { SQL } from "bun";
import { type AcquireRequest, matchColumns } from "./constraints.ts";
import { type CredentialClaims, farmKey, signCredential } from "./credential.ts";

/** A host is up while it heartbeats: gone after three missed heartbeats, by the database's clock. */
export const HOST_UP_SQL = `(h.state = 'up' AND now() - h.last_seen <= make_interval(secs => 3 * h.heartbeat_ms / 1000.0))`;
const DISPATCH_LOCK = 0x64726671;
/** How long a waiting client's place is kept after its last sign of life. */
export const ALIVE_MS = 3_000;
/** How often a waiting client looks at its request (and runs a pass). */
export const POLL_MS = 100;

export interface Allocation {
  allocationId: string;
  hostId: string;
  host: string;
  endpoint: string;
  deviceId: string;
  device: { name: string; platform: string; osVersion: string | null };
  /** The token to present to the owning host (DEVICERAIL-TOKEN line, or Bearer on /rpc). */
  credential: string;
  /** How long the allocation lives unless a connection claims it and the host renews it. */
  leaseMs: number;
  waitedMs: number;
}

/** Why an acquire ended without a device: typed, for the CLI's exit code and the HTTP error. */
export class FarmAcquireError extends Error {
  constructor(
    readonly reason: "noMatchingDevice" | "timedOut" | "cancelled",
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface Waiting {
  id: string;
  holder: string;
  platform: string | null;
  model: string | null;
  os_min: number | null;
  os_max: number | null;
  host: string | null;
  capability: string | null;
  device_id: string | null;
}

/** The matching predicate over `d` (devices) and `h` (hosts), with the request's columns as $1…$7. */
const MATCH_SQL = `($1::text IS NULL OR d.platform = $1) AND ($2::text IS NULL OR d.name ILIKE $2 OR d.device_id ILIKE $2)
  AND ($3::int IS NULL OR d.os_major >= $3) AND ($4::int IS NULL OR d.os_major <= $4)
  AND ($5::text IS NULL OR h.id = $5 OR h.name = $5 OR h.endpoint = $5)
  AND ($6::text IS NULL OR jsonb_exists(d.capabilities, $6)) AND ($7::text IS NULL OR d.device_id = $7)`;
/**
 * Whether waiting request `r` could take device `d` (of host `h`): the same test as MATCH_SQL,
 * from the request's columns.
 */
const WAITER_WANTS_SQL = `(r.platform IS NULL OR d.platform = r.platform) AND (r.model IS NULL OR d.name ILIKE r.model OR d.device_id ILIKE r.model)
  AND (r.os_min IS NULL OR d.os_major >= r.os_min) AND (r.os_max IS NULL OR d.os_major <= r.os_max)
  AND (r.host IS NULL OR h.id = r.host OR h.name = r.host OR h.endpoint = r.host)
  AND (r.capability IS NULL OR jsonb_exists(d.capabilities, r.capability)) AND (r.device_id IS NULL OR d.device_id = r.device_id)`;
const matchParams = (r: Waiting) => [r.platform, r.model, r.os_min, r.os_max, r.host, r.capability, r.device_id];
const FREE_SQL = `d.allocation_id IS NULL AND d.present AND NOT d.leased_locally AND d.blocked_reason IS NULL AND d.quarantined_reason IS NULL AND ${HOST_UP_SQL}`;

/**
 * Releases the open allocations `where` selects (over alias `a`; the reason is $1, the caller's
 * parameters follow) and frees their devices, in one statement; returns the released rows.
 * `set` adds assignments to the allocation (e.g. the Session it ran).
 */
export const releaseSql = (where: string, set = "") => `
  WITH r AS (
    UPDATE allocations a SET released_at = now(), release_reason = $1${set} WHERE a.released_at IS NULL AND (${where})
    RETURNING a.id, a.host_id, a.device_id, a.holder),
  f AS (UPDATE devices d SET allocation_id = NULL FROM r WHERE d.host_id = r.host_id AND d.device_id = r.device_id AND d.allocation_id = r.id)
  SELECT id, host_id, device_id, holder FROM r`;

/**
 * Takes the first free matching device (MATCH_SQL's $1…$7, plus `where`) in one statement's
 * CTEs: the device row locked (rows another transaction holds are skipped), the allocation $8 for
 * holder $9 and request `requestId` written with a lease of $11 ms, and the device marked as held.
 * The statement's last clause follows, over `a` (the allocation, when one was made).
 */
const takeSql = (where: string, requestId: string) => `
  WITH d AS (
    SELECT d.host_id, d.device_id FROM devices d JOIN hosts h ON h.id = d.host_id
    WHERE ${FREE_SQL} AND ${MATCH_SQL} ${where}
    ORDER BY d.host_id, d.device_id LIMIT 1 FOR UPDATE OF d SKIP LOCKED),
  a AS (
    INSERT INTO allocations (id, host_id, device_id, holder, request_id, created_at, expires_at)
    SELECT $8, d.host_id, d.device_id, $9, ${requestId}, now(), now() + make_interval(secs => $11 / 1000.0) FROM d
    RETURNING id, host_id, device_id),
  held AS (UPDATE devices SET allocation_id = a.id FROM a WHERE devices.host_id = a.host_id AND devices.device_id = a.device_id)`;

/** Serves waiting request $10 with the first free matching device, if any, and marks it served. */
const SERVE_SQL = `${takeSql("", "$10")}
  UPDATE requests SET state = 'served', allocation_id = a.id FROM a WHERE requests.id = $10 RETURNING requests.id`;

/**
 * One dispatch pass: lapses what must lapse (allocations past their expiry or on hosts that are
 * gone, requests past their deadline or whose client stopped), then serves waiting requests in
 * order. A request whose constraints found nothing free is not tried again in the same pass by
 * requests with the same constraints, so a long queue for busy devices costs one query.
 * Returns how many were served, or null when another pass held the lock.
 */
export async function dispatch(sql: SQL, leaseMs: number): Promise<number | null> {
  return sql.begin(async (tx) => {
    const [lock] = (await tx`SELECT pg_try_advisory_xact_lock(${DISPATCH_LOCK}) AS ok`) as { ok: boolean }[];
    if (!lock?.ok) return null;
    await tx.unsafe(releaseSql("a.expires_at <= now()"), ["expired"]);
    await tx.unsafe(releaseSql(`NOT EXISTS (SELECT 1 FROM hosts h WHERE h.id = a.host_id AND ${HOST_UP_SQL})`), [
      "host gone",
    ]);
    await tx`
      UPDATE requests SET state = CASE WHEN deadline <= now() THEN 'expired' ELSE 'cancelled' END
      WHERE state = 'waiting' AND (deadline <= now() OR alive_until <= now())`;
    const waiting = (await tx`
      SELECT id, holder, platform, model, os_min, os_max, host, capability, device_id FROM requests
      WHERE state = 'waiting' ORDER BY priority DESC, seq LIMIT 1000`) as Waiting[];
    const nothingFree = new Set<string>();
    let served = 0;
    for (const r of waiting) {
      const key = JSON.stringify(matchParams(r));
      if (nothingFree.has(key)) continue;
      const rows = await tx.unsafe(SERVE_SQL, [...matchParams(r), crypto.randomUUID(), r.holder, r.id, leaseMs]);
      if (rows.length === 0) nothingFree.add(key);
      else served++;
    }
    return served;
  });
}

/**
 * The fast path when nobody waits who could be first: takes a free matching device in one
 * statement (the device row locked, rows other transactions hold skipped; the unique index is the
 * backstop), so a farm with free devices answers in one round trip without the dispatch lock.
 * A device a waiting request of the same or a higher priority could take is left to the queue.
 * The walk over the devices (their primary key's order) starts at a random host id ($12), then
 * from the start, so concurrent callers rarely reach for the same row, wear spreads over the
 * devices, and a farm of many free devices answers after a few rows, not a scan of all of them.
 */
const directSql = (fromRandomHost: boolean) => `${takeSql(
  `AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.state = 'waiting' AND r.priority >= $10 AND r.deadline > now() AND r.alive_until > now()
      AND ${WAITER_WANTS_SQL})
    ${fromRandomHost ? "AND d.host_id >= $12 AND h.id >= $12" : ""}`,
  "NULL",
)}
  SELECT a.id FROM a`;
const DIRECT_FROM_RANDOM_HOST = directSql(true);
const DIRECT_FROM_FIRST_HOST = directSql(false);

/** How many present devices on up hosts match at all (free or not): none means waiting is pointless. */
async function matchingDevices(sql: SQL, r: Waiting): Promise<number> {
  const [row] = (await sql.unsafe(
    `SELECT count(*)::int AS n FROM devices d JOIN hosts h ON h.id = d.host_id WHERE d.present AND ${HOST_UP_SQL} AND ${MATCH_SQL}`,
    matchParams(r),
  )) as { n: number }[];
  return row?.n ?? 0;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

export interface AcquireOptions {
  leaseMs: number;
  /** Aborted when the client goes: its place is dropped at once. */
  signal?: AbortSignal;
  /** Called with the request id once queued (tests, progress). */
  queued?: (requestId: string) => void;
}

/**
 * Queues a request and waits for it to be served, its deadline, or the signal. Fails at once when
 * no device in the farm could ever match. The returned credential is signed with the farm's key.
 */
export async function acquire(sql: SQL, ask: AcquireRequest, opts: AcquireOptions): Promise<Allocation> {
  const t0 = performance.now();
  const cols = matchColumns(ask);
  const id = crypto.randomUUID();
  const probe: Waiting = {
    id,
    holder: "",
    platform: cols.platform,
    model: cols.model,
    os_min: cols.osMin,
    os_max: cols.osMax,
    host: cols.host,
    capability: cols.capability,
    device_id: cols.deviceId,
  };
  let direct: string | false | null = null;
  for (let attempt = 0; attempt < 4 && typeof direct !== "string"; attempt++) {
    // Even attempts start at a random host, odd ones at the first: together they cover every device.
    const start = attempt % 2 === 0 ? crypto.randomUUID() : null;
    const got = await takeDirectly(sql, probe, ask, opts.leaseMs, start);
    if (got === false && start === null) break;
    direct = got;
  }
  if (typeof direct === "string") return await allocationOf(sql, direct, opts.leaseMs, performance.now() - t0);
  const matching = await matchingDevices(sql, probe);
  if (matching === 0)
    throw new FarmAcquireError("noMatchingDevice", "no device in the farm matches the constraints", {
      constraints: constraintsOf(ask),
    });
  const waitMs = ask.waitMs ?? 0;
  await sql`
    INSERT INTO requests (id, priority, holder, constraints, platform, model, os_min, os_max, host, capability, device_id, created_at, deadline, alive_until, state)
    VALUES (${id}, ${ask.priority ?? 0}, ${ask.holder ?? "anonymous"}, ${constraintsOf(ask)}, ${cols.platform}, ${cols.model}, ${cols.osMin}, ${cols.osMax},
      ${cols.host}, ${cols.capability}, ${cols.deviceId}, now(), now() + make_interval(secs => ${Math.max(waitMs, POLL_MS)} / 1000.0),
      now() + make_interval(secs => ${ALIVE_MS} / 1000.0), 'waiting')`;
  opts.queued?.(id);
  let polls = 0;
  try {
    for (;;) {
      await dispatch(sql, opts.leaseMs);
      const [row] = (await sql`
        UPDATE requests SET alive_until = CASE WHEN state = 'waiting' THEN now() + make_interval(secs => ${ALIVE_MS} / 1000.0) ELSE alive_until END
        WHERE id = ${id} RETURNING state, allocation_id, now() >= deadline AS due`) as {
        state: string;
        allocation_id: string | null;
        due: boolean;
      }[];
      if (row?.state === "served" && row.allocation_id)
        return await allocationOf(sql, row.allocation_id, opts.leaseMs, performance.now() - t0);
      if (row?.state !== "waiting" || row.due || opts.signal?.aborted) break;
      // Soon at first (a pass someone else ran may just have served it), then every POLL_MS.
      await sleep(Math.min(POLL_MS, 10 * 2 ** polls++), opts.signal);
    }
  } catch (err) {
    await cancel(sql, id).catch(() => {});
    throw err;
  }
  await cancel(sql, id);
  if (opts.signal?.aborted) throw new FarmAcquireError("cancelled", "the request was cancelled");
  throw new FarmAcquireError("timedOut", `no matching device became free within ${waitMs} ms`, {
    waitedMs: Math.round(performance.now() - t0),
    matchingDevices: matching,
  });
}

/**
 * The allocation's id; false when nothing is free (or others wait first); null when a race was
 * lost (worth another try).
 */
async function takeDirectly(
  sql: SQL,
  probe: Waiting,
  ask: AcquireRequest,
  leaseMs: number,
  start: string | null,
): Promise<string | false | null> {
  try {
    const params = [...matchParams(probe), crypto.randomUUID(), ask.holder ?? "anonymous", ask.priority ?? 0, leaseMs];
    const rows = (await (start === null
      ? sql.unsafe(DIRECT_FROM_FIRST_HOST, params)
      : sql.unsafe(DIRECT_FROM_RANDOM_HOST, [...params, start]))) as { id: string }[];
    return rows[0]?.id ?? false;
  } catch (err) {
    // Another client took the same device between our look and our write (the unique index said so): queue instead.
    if ((err as { errno?: string; code?: string }).errno === "23505" || (err as { code?: string }).code === "23505")
      return null;
    throw err;
  }
}

/** Drops a waiting request; one served in the meantime gives its device straight back. */
export async function cancel(sql: SQL, requestId: string): Promise<void> {
  const [row] =
    (await sql`UPDATE requests SET state = CASE WHEN state = 'waiting' THEN 'cancelled' ELSE state END WHERE id = ${requestId} RETURNING state, allocation_id`) as {
      state: string;
      allocation_id: string | null;
    }[];
  if (row?.state === "served" && row.allocation_id) await release(sql, row.allocation_id, "cancelled before use");
}

/** Ends an allocation (idempotent); true when this call ended it. */
export async function release(sql: SQL, allocationId: string, reason: string): Promise<boolean> {
  const rows = (await sql.unsafe(releaseSql("a.id = $2"), [reason, allocationId])) as unknown[];
  return rows.length > 0;
}

async function allocationOf(sql: SQL, allocationId: string, leaseMs: number, waitedMs: number): Promise<Allocation> {
  const [row] = (await sql`
    SELECT a.id, a.host_id, a.device_id, h.name AS host, h.endpoint, d.name, d.platform, d.os_version
    FROM allocations a JOIN hosts h ON h.id = a.host_id JOIN devices d ON d.host_id = a.host_id AND d.device_id = a.device_id
    WHERE a.id = ${allocationId}`) as {
    id: string;
    host_id: string;
    device_id: string;
    host: string;
    endpoint: string;
    name: string;
    platform: string;
    os_version: string | null;
  }[];
  if (!row) throw new Error(`allocation ${allocationId} vanished`);
  const claims: CredentialClaims = { a: row.id, h: row.host_id, d: row.device_id };
  return {
    allocationId: row.id,
    hostId: row.host_id,
    host: row.host,
    endpoint: row.endpoint,
    deviceId: row.device_id,
    device: { name: row.name, platform: row.platform, osVersion: row.os_version },
    credential: signCredential(await farmKey(sql), claims),
    leaseMs,
    waitedMs: Math.round(waitedMs),
  };
}

function constraintsOf(ask: AcquireRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["platform", "model", "os", "host", "capability", "device"] as const)
    if (ask[k] !== undefined) out[k] = ask[k];
  return out;
}
