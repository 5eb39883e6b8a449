import { defineConfig } from "drizzle-kit";

/** drizzle-kit settings for the farm's PostgreSQL tables; run through scripts/gen-migrations.ts. */
export default defineConfig({
  dialect: "postgresql",
  schema: process.env.DEVICERAIL_DRIZZLE_SCHEMA ?? "./src/farm/tables.ts",
  out: process.env.DEVICERAIL_MIGRATIONS_OUT ?? "./src/farm/migrations",
});
