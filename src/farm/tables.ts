/**
 * The farm's tables in PostgreSQL, shared by every host of a farm. Migrations are generated from
 * this file (scripts/gen-migrations.ts, the farm target) and applied by each daemon that joins
 * (migrate.ts). Times are the database's (now()), never a host's clock, so clock skew between
 * hosts changes nothing; durations a host measures itself are measured on its monotonic clock.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const at = (name: string) => timestamp(name, { withTimezone: true });

export const hosts = pgTable("hosts", {
  /** Stable per data directory (farm-host-id file). */
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  version: text("version").notNull(),
  /** host:port clients of the farm connect to. */
  endpoint: text("endpoint").notNull(),
  /** Bumped at every start: what an older run of the host wrote is told apart. */
  epoch: bigint("epoch", { mode: "number" }).notNull(),
  heartbeatMs: integer("heartbeat_ms").notNull(),
  startedAt: at("started_at").notNull(),
  lastSeen: at("last_seen").notNull(),
  /** "up" while it heartbeats; "left" after a clean stop. A host is gone when it misses three heartbeats. */
  state: text("state").notNull(),
});

export const devices = pgTable(
  "devices",
  {
    hostId: text("host_id")
      .notNull()
      .references(() => hosts.id),
    deviceId: text("device_id").notNull(),
    name: text("name").notNull(),
    platform: text("platform").notNull(),
    osVersion: text("os_version"),
    /** The leading number of osVersion ("14" of "14.1"), what OS ranges compare. */
    osMajor: integer("os_major"),
    connected: boolean("connected").notNull(),
    /** A Session holds it on its host outside the farm (a client with the host's token): not allocated meanwhile. */
    leasedLocally: boolean("leased_locally").notNull().default(false),
    /** False once the host no longer lists it (unplugged); kept so its history stays readable. */
    present: boolean("present").notNull(),
    /** Action names the device's driver supports (device.capabilities). */
    capabilities: jsonb("capabilities").notNull(),
    /** Percent, where the platform reports it. */
    battery: integer("battery"),
    updatedAt: at("updated_at").notNull(),
    /** The open allocation that holds it (kept with the device row, which allocation locks anyway). */
    allocationId: text("allocation_id"),
    /** Set by an operator (farm block): not allocated until unblocked. */
    blockedReason: text("blocked_reason"),
    blockedAt: at("blocked_at"),
    /** Set by the farm after repeated infrastructure failures: not allocated until an operator clears it. */
    quarantinedReason: text("quarantined_reason"),
    quarantinedAt: at("quarantined_at"),
    /** When an operator last cleared it: failures before this no longer count towards quarantine. */
    clearedAt: at("cleared_at"),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.deviceId] }), index("devices_platform").on(t.platform)],
);

/** Requests waiting for a device, served FIFO within a priority. */
export const requests = pgTable(
  "requests",
  {
    id: text("id").primaryKey(),
    /** Arrival order (a sequence: the database's, not a host's). */
    seq: bigserial("seq", { mode: "number" }).notNull(),
    priority: integer("priority").notNull(),
    holder: text("holder").notNull(),
    /** The constraints as asked, for display. */
    constraints: jsonb("constraints").notNull(),
    platform: text("platform"),
    /** An ILIKE pattern over the device's name or id. */
    model: text("model"),
    osMin: integer("os_min"),
    osMax: integer("os_max"),
    /** A host's id, name or endpoint. */
    host: text("host"),
    /** An action name the device must support. */
    capability: text("capability"),
    /** The device's id, when one particular device is asked for. */
    deviceId: text("device_id"),
    createdAt: at("created_at").notNull(),
    /** When the request gives up. */
    deadline: at("deadline").notNull(),
    /** Pushed forward while its client waits; a client that stops (dies) drops its place when this passes. */
    aliveUntil: at("alive_until").notNull(),
    /** waiting, served, expired (deadline passed), cancelled (client gone). */
    state: text("state").notNull(),
    allocationId: text("allocation_id"),
  },
  (t) => [index("requests_waiting").on(t.state, t.priority, t.seq)],
);

/** Who holds which device; at most one unreleased allocation per device. */
export const allocations = pgTable(
  "allocations",
  {
    id: text("id").primaryKey(),
    hostId: text("host_id").notNull(),
    deviceId: text("device_id").notNull(),
    holder: text("holder").notNull(),
    requestId: text("request_id"),
    createdAt: at("created_at").notNull(),
    /** Renewed by the owning host while its client's connection or Session lives. */
    expiresAt: at("expires_at").notNull(),
    /** When a client first connected to the owning host with the credential. */
    claimedAt: at("claimed_at"),
    releasedAt: at("released_at"),
    /** released, connection closed, session ended, expired, host gone, or forced: REASON. */
    releaseReason: text("release_reason"),
    /** The last Session the holder ran on the device. */
    sessionId: text("session_id"),
  },
  (t) => [
    uniqueIndex("allocations_one_holder").on(t.hostId, t.deviceId).where(sql`released_at IS NULL`),
    index("allocations_open").on(t.expiresAt).where(sql`released_at IS NULL`),
  ],
);

/** Every Session run on a farm host, as its host reports it: the farm-wide catalogue. */
export const sessions = pgTable(
  "sessions",
  {
    hostId: text("host_id").notNull(),
    sessionId: text("session_id").notNull(),
    deviceId: text("device_id"),
    allocationId: text("allocation_id"),
    holder: text("holder"),
    startedAt: at("started_at").notNull(),
    endedAt: at("ended_at"),
    outcome: text("outcome"),
    reason: text("reason"),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.sessionId] }), index("sessions_started").on(t.startedAt)],
);

/** Infrastructure failures seen on a device (adb offline, driver errors, low battery): what quarantine counts. */
export const failures = pgTable(
  "failures",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    hostId: text("host_id").notNull(),
    deviceId: text("device_id").notNull(),
    at: at("at").notNull(),
    kind: text("kind").notNull(),
    detail: text("detail").notNull(),
  },
  (t) => [index("failures_device").on(t.hostId, t.deviceId, t.at)],
);

/** What operators and the farm did to devices (block, unblock, forced release, quarantine): kept, never updated. */
export const audit = pgTable("audit", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  at: at("at").notNull(),
  action: text("action").notNull(),
  hostId: text("host_id").notNull(),
  deviceId: text("device_id").notNull(),
  actor: text("actor").notNull(),
  reason: text("reason").notNull(),
});

/** Farm-wide settings; `credential-key` signs allocation credentials (every host reads it at join). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
