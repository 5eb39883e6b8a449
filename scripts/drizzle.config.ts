import { defineConfig } from "drizzle-kit";

/** drizzle-kit settings; run through scripts/gen-migrations.ts, which also embeds the result. */
export default defineConfig({
  dialect: "sqlite",
  schema: process.env.DEVICERAIL_DRIZZLE_SCHEMA ?? "./src/core/sessions/tables.ts",
  out: process.env.DEVICERAIL_MIGRATIONS_OUT ?? "./src/core/sessions/migrations",
});
