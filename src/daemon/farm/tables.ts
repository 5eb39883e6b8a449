/**
 * The farm's tables in PostgreSQL, shared by every host of a farm: the hosts, and the devices each
 * one has. Migrations are generated from this file (scripts/gen-migrations.ts, the farm target)
 * and applied by each daemon that joins (migrate.ts). Times are the database's (now()), never a
 * host's clock, so clock skew between hosts changes nothing.
 */
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const hosts = pgTable("hosts", {
  /** Stable per data directory (farm-id file). */
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  version: text("version").notNull(),
  /** host:port clients of the farm connect to. */
  endpoint: text("endpoint").notNull(),
  /** Bumped at every start: what an older run of the host wrote is told apart. */
  epoch: bigint("epoch", { mode: "number" }).notNull(),
  heartbeatMs: integer("heartbeat_ms").notNull(),
  startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
  lastSeen: timestamp("last_seen", { withTimezone: true }).notNull(),
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
    connected: boolean("connected").notNull(),
    /** False once the host no longer lists it (unplugged); kept so its history stays readable. */
    present: boolean("present").notNull(),
    capabilities: jsonb("capabilities").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.deviceId] }), index("devices_platform").on(t.platform)],
);
