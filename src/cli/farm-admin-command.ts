/**
 * `farm acquire`, `farm release`, `farm block` and `farm unblock`: a client's and an operator's
 * hands on the farm, straight on its database (DEVICERAIL_FARM_URL). What operators do is recorded
 * in the farm's audit table with who did it and why.
 */
import type { SQL } from "bun";
import { hostname, userInfo } from "node:os";
import * as v from "valibot";
import { type Allocation, FarmAcquireError, acquire, release, releaseSql } from "../farm/allocator.ts";
import { AcquireRequestSchema } from "../farm/constraints.ts";
import { farmConfig, withFarm } from "./farm-command.ts";
import { CliError, EXIT, isoSeconds, printJson } from "./output.ts";
import { stdout } from "./std-streams.ts";

export interface AcquireOptions {
  platform?: string;
  model?: string;
  os?: string;
  host?: string;
  capability?: string;
  device?: string;
  priority?: number;
  wait?: number;
  holder?: string;
  json?: boolean;
}

/** Who is acting, for holders and the audit: user@host (Bun reports "unknown" for a user without USER set). */
const actor = () => {
  let user = process.env.USER || process.env.LOGNAME || "";
  try {
    if (!user && userInfo().username !== "unknown") user = userInfo().username;
  } catch {}
  return `${user || `uid${process.getuid?.() ?? "?"}`}@${hostname()}`;
};

export async function farmAcquireCommand(o: AcquireOptions): Promise<number> {
  const ask = v.safeParse(AcquireRequestSchema, {
    ...(o.platform ? { platform: o.platform } : {}),
    ...(o.model ? { model: o.model } : {}),
    ...(o.os ? { os: o.os } : {}),
    ...(o.host ? { host: o.host } : {}),
    ...(o.capability ? { capability: o.capability } : {}),
    ...(o.device ? { device: o.device } : {}),
    priority: o.priority ?? 0,
    waitMs: o.wait ?? 0,
    holder: o.holder ?? process.env.DEVICERAIL_FARM_HOLDER ?? actor(),
  });
  if (!ask.success) {
    const first = ask.issues[0];
    throw new CliError(
      `--${first.path?.[0]?.key === "waitMs" ? "wait" : String(first.path?.[0]?.key ?? "?")}: ${first.message}`,
      EXIT.usage,
    );
  }
  const leaseMs = farmConfig().leaseMs;
  // Ctrl-C (or SIGTERM) while waiting drops the place in the queue before exiting.
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  let a: Allocation;
  try {
    a = await withFarm(async (sql) => {
      try {
        return await acquire(sql, ask.output, { leaseMs, signal: controller.signal });
      } catch (e) {
        if (!(e instanceof FarmAcquireError)) throw e;
        if (e.reason === "cancelled") throw new CliError("interrupted: the request left the queue", EXIT.interrupted);
        const what = Object.entries((e.details.constraints as Record<string, string>) ?? {})
          .map(([k, val]) => `${k}=${val}`)
          .join(" ");
        throw new CliError(
          e.reason === "noMatchingDevice"
            ? `no device in the farm matches${what ? ` ${what}` : ""}: see \`devicerail farm devices\``
            : `${e.message}; ${e.details.matchingDevices} matching device(s) stayed busy, blocked or quarantined`,
        );
      }
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  if (o.json) printJson({ allocation: a });
  else
    stdout.write(
      `allocated ${a.deviceId} (${a.device.name}, ${a.device.platform} ${a.device.osVersion ?? ""}) on ${a.host} at ${a.endpoint}\n` +
        `allocation ${a.allocationId}: connect within ${a.leaseMs / 1000} s and present the credential as the host's token:\n${a.credential}\n`,
    );
  return 0;
}

interface DeviceRow {
  host_id: string;
  device_id: string;
  host: string;
}

/** `ID` or `HOST/ID` (HOST: a host's id, name or endpoint) to exactly one device. */
export async function resolveDevice(sql: SQL, spec: string): Promise<DeviceRow> {
  const slash = spec.lastIndexOf("/");
  const host = slash > 0 ? spec.slice(0, slash) : null;
  const id = slash > 0 ? spec.slice(slash + 1) : spec;
  const rows = (await sql`
    SELECT d.host_id, d.device_id, h.name AS host FROM devices d JOIN hosts h ON h.id = d.host_id
    WHERE d.device_id = ${id} AND (${host}::text IS NULL OR h.id = ${host} OR h.name = ${host} OR h.endpoint = ${host})`) as DeviceRow[];
  if (rows.length === 0) throw new CliError(`no device ${spec} in the farm: see \`devicerail farm devices\``);
  if (rows.length > 1)
    throw new CliError(
      `${spec} is on several hosts; name one as HOST/DEVICE: ${rows.map((r) => `${r.host}/${r.device_id}`).join(", ")}`,
      EXIT.usage,
    );
  return rows[0] as DeviceRow;
}

const needReason = (reason: string | undefined, what: string): string => {
  const r = reason?.trim();
  if (!r) throw new CliError(`${what} needs --reason TEXT (it is recorded)`, EXIT.usage);
  if (r.length > 500) throw new CliError("--reason: at most 500 characters", EXIT.usage);
  return r;
};

/** `farm release ALLOCATION` (its holder) or `farm release DEVICE --force --reason TEXT` (an operator). */
export async function farmReleaseCommand(
  target: string,
  o: { force?: boolean; reason?: string; json?: boolean },
): Promise<number> {
  const isAllocation = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(target);
  if (!isAllocation && !o.force)
    throw new CliError(
      `releasing a device someone holds needs --force --reason TEXT (or give the allocation id to release your own)`,
      EXIT.usage,
    );
  const reason = o.force ? needReason(o.reason, "farm release --force") : null;
  const result = await withFarm(async (sql) => {
    if (isAllocation && !o.force)
      return { released: await release(sql, target, "released"), allocationId: target, holder: null as string | null };
    const d = isAllocation ? null : await resolveDevice(sql, target);
    return sql.begin(async (tx) => {
      const rows = (await tx.unsafe(releaseSql("a.id = $2 OR (a.host_id = $3 AND a.device_id = $4)"), [
        `forced: ${reason}`,
        d ? null : target,
        d?.host_id ?? null,
        d?.device_id ?? null,
      ])) as {
        id: string;
        host_id: string;
        device_id: string;
        holder: string;
      }[];
      const row = rows[0];
      if (row)
        await tx`INSERT INTO audit (at, action, host_id, device_id, actor, reason) VALUES (now(), 'release', ${row.host_id}, ${row.device_id}, ${actor()}, ${`${reason} (held by ${row.holder})`})`;
      return { released: row !== undefined, allocationId: row?.id ?? null, holder: row?.holder ?? null };
    });
  });
  if (o.json) printJson(result);
  else
    stdout.write(
      result.released
        ? `released allocation ${result.allocationId}${result.holder ? ` (held by ${result.holder})` : ""}\n`
        : `${target}: nothing to release (not held)\n`,
    );
  return 0;
}

export async function farmBlockCommand(
  spec: string,
  o: { reason?: string; json?: boolean },
  block: boolean,
): Promise<number> {
  const reason = block ? needReason(o.reason, "farm block") : o.reason?.trim() || "cleared";
  const row = await withFarm(async (sql) => {
    const d = await resolveDevice(sql, spec);
    return sql.begin(async (tx) => {
      const [before] =
        (await tx`SELECT blocked_reason, quarantined_reason FROM devices WHERE host_id = ${d.host_id} AND device_id = ${d.device_id} FOR UPDATE`) as {
          blocked_reason: string | null;
          quarantined_reason: string | null;
        }[];
      if (block)
        await tx`UPDATE devices SET blocked_reason = ${reason}, blocked_at = now() WHERE host_id = ${d.host_id} AND device_id = ${d.device_id}`;
      else
        await tx`UPDATE devices SET blocked_reason = NULL, blocked_at = NULL, quarantined_reason = NULL, quarantined_at = NULL, cleared_at = now()
          WHERE host_id = ${d.host_id} AND device_id = ${d.device_id}`;
      await tx`INSERT INTO audit (at, action, host_id, device_id, actor, reason) VALUES (now(), ${block ? "block" : "unblock"}, ${d.host_id}, ${d.device_id}, ${actor()}, ${reason})`;
      const [at] = (await tx`SELECT (extract(epoch FROM now()) * 1000)::bigint AS ms`) as { ms: number }[];
      return { ...d, was: before, atMs: Number(at?.ms) };
    });
  });
  const what = `${row.host}/${row.device_id}`;
  if (o.json)
    printJson({ deviceId: row.device_id, hostId: row.host_id, blocked: block, reason, at: isoSeconds(row.atMs) });
  else if (block)
    stdout.write(
      `blocked ${what}: ${reason}${row.was?.blocked_reason ? ` (was blocked: ${row.was.blocked_reason})` : ""}; a holder keeps it until it releases\n`,
    );
  else
    stdout.write(
      `unblocked ${what}${row.was?.blocked_reason ? ` (was blocked: ${row.was.blocked_reason})` : ""}${row.was?.quarantined_reason ? ` (was quarantined: ${row.was.quarantined_reason})` : ""}${!row.was?.blocked_reason && !row.was?.quarantined_reason ? " (it was neither blocked nor quarantined)" : ""}\n`,
    );
  return 0;
}
